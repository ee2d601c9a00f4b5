/*
 * Calls into the SBI firmware (OpenSBI) below us: ecall with the extension id in
 * a7, the function id in a6, arguments in a0-a5; the firmware returns an error
 * code in a0 and a value in a1. Extension and function numbers are from the RISC-V
 * SBI specification.
 */
#ifndef RISCV_SBI_H
#define RISCV_SBI_H

#define SBI_EXT_LEGACY_PUTCHAR 0x01
#define SBI_EXT_LEGACY_SHUTDOWN 0x08
#define SBI_EXT_BASE 0x10
#define SBI_EXT_TIME 0x54494d45	  /* "TIME" */
#define SBI_EXT_IPI 0x735049	  /* "sPI" */
#define SBI_EXT_RFENCE 0x52464e43 /* "RFNC" */
#define SBI_EXT_HSM 0x48534d	  /* "HSM" */
#define SBI_EXT_SRST 0x53525354	  /* "SRST" */

#define SBI_SUCCESS 0
#define SBI_ERR_FAILED -1
#define SBI_ERR_NOT_SUPPORTED -2
#define SBI_ERR_INVALID_PARAM -3
#define SBI_ERR_DENIED -4
#define SBI_ERR_INVALID_ADDRESS -5
#define SBI_ERR_ALREADY_AVAILABLE -6
#define SBI_ERR_ALREADY_STARTED -7
#define SBI_ERR_ALREADY_STOPPED -8

/* Function ids, per extension. */
#define SBI_BASE_GET_SPEC_VERSION 0
#define SBI_BASE_GET_IMPL_ID 1
#define SBI_BASE_GET_IMPL_VERSION 2
#define SBI_BASE_PROBE_EXTENSION 3
#define SBI_BASE_GET_MVENDORID 4
#define SBI_BASE_GET_MARCHID 5
#define SBI_BASE_GET_MIMPID 6
#define SBI_TIME_SET_TIMER 0
#define SBI_IPI_SEND_IPI 0
#define SBI_RFENCE_FENCE_I 0
#define SBI_RFENCE_SFENCE_VMA 1
#define SBI_RFENCE_SFENCE_VMA_ASID 2
#define SBI_HSM_HART_START 0
#define SBI_HSM_HART_STOP 1
#define SBI_HSM_HART_GET_STATUS 2
#define SBI_HSM_STATE_STARTED 0
#define SBI_HSM_STATE_STOPPED 1
#define SBI_HSM_STATE_START_PENDING 2
#define SBI_SRST_SHUTDOWN 0
#define SBI_SRST_COLD_REBOOT 1
#define SBI_SRST_WARM_REBOOT 2
#define SBI_SRST_REASON_NONE 0
#define SBI_SRST_REASON_FAILURE 1
/* A hart_mask_base of -1 means "every hart", mask ignored (SBI v0.2 and later). */
#define SBI_ALL_HARTS (~0UL)

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct sbiret {
	long error;
	long value;
};

struct sbiret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long a0, unsigned long a1,
			unsigned long a2, unsigned long a3);
/* An SBI error code as a negative errno. */
int sbi_errno(long error);

/* Probe for the extensions Grace uses; call once before the ones below. */
void sbi_init(void);
bool sbi_has(unsigned long ext);

/*
 * The implementation id of the SBI below us (SBI spec, "SBI Implementation IDs"), or -1.
 * OpenSBI is 1 and runs on boards and emulators alike; 2 (Xvisor), 3 (KVM) and 7 (Xen)
 * are hypervisors.
 */
#define SBI_IMPL_OPENSBI 1
#define SBI_IMPL_XVISOR 2
#define SBI_IMPL_KVM 3
#define SBI_IMPL_XEN 7
/*
 * Grace's own M-mode firmware (arch/riscv64/mfw/, FIRMWARE=none): "GRAC" in ASCII. Not a
 * registered id; the SBI spec's list ends in the low tens, so it cannot collide with one.
 */
#define SBI_IMPL_GRACE 0x47524143
long sbi_impl_id(void);

void sbi_set_timer(u64 stime);
/* IPI to the harts in mask, bit i meaning hart base + i. */
int sbi_send_ipi(unsigned long mask, unsigned long base);
/* sfence.vma on every hart. */
void sbi_remote_sfence_vma_all(void);
int sbi_hart_start(unsigned long hartid, unsigned long start_pa, unsigned long opaque);
/*
 * Whether the firmware can start hartid: it has an HSM state for it. OpenSBI keeps
 * harts past its build's limit (128 in 1.1) parked in M-mode and answers
 * SBI_ERR_INVALID_PARAM for them. True when there is no HSM to ask.
 */
bool sbi_hart_startable(unsigned long hartid);
/* Power off; returns only if the firmware cannot. */
void sbi_shutdown(bool failure);
/* Reset the machine (a cold reboot); returns only if the firmware cannot. */
void sbi_reset(bool failure);
void sbi_console_putchar(char c);

#endif /* __ASSEMBLY__ */

#endif

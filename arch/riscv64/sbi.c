/*
 * SBI calls (see sbi.h). Grace needs TIME (when the harts lack Sstc), IPI (when
 * there is no ACLINT SSWI), HSM to start harts, SRST to power off without a
 * sifive,test device, and the legacy console for messages before the UART is up.
 */
#include <grace/errno.h>
#include "sbi.h"

static bool has_time, has_ipi, has_rfence, has_hsm, has_srst;

struct sbiret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long a0, unsigned long a1,
			unsigned long a2, unsigned long a3)
{
	register unsigned long r0 __asm__("a0") = a0;
	register unsigned long r1 __asm__("a1") = a1;
	register unsigned long r2 __asm__("a2") = a2;
	register unsigned long r3 __asm__("a3") = a3;
	register unsigned long r6 __asm__("a6") = fid;
	register unsigned long r7 __asm__("a7") = ext;
	__asm__ __volatile__("ecall"
			     : "+r"(r0), "+r"(r1)
			     : "r"(r2), "r"(r3), "r"(r6), "r"(r7)
			     : "memory");
	return (struct sbiret){(long)r0, (long)r1};
}

int sbi_errno(long error)
{
	switch (error) {
	case SBI_SUCCESS:
		return 0;
	case SBI_ERR_NOT_SUPPORTED:
		return -ENOSYS;
	case SBI_ERR_INVALID_PARAM:
		return -EINVAL;
	case SBI_ERR_DENIED:
		return -EPERM;
	case SBI_ERR_INVALID_ADDRESS:
		return -EFAULT;
	case SBI_ERR_ALREADY_AVAILABLE:
	case SBI_ERR_ALREADY_STARTED:
		return -EBUSY;
	case SBI_ERR_ALREADY_STOPPED:
		return -EINVAL;
	default:
		return -EIO;
	}
}

static bool sbi_probe(unsigned long ext)
{
	struct sbiret r = sbi_ecall(SBI_EXT_BASE, SBI_BASE_PROBE_EXTENSION, ext, 0, 0, 0);
	return r.error == SBI_SUCCESS && r.value != 0;
}

long sbi_impl_id(void)
{
	struct sbiret r = sbi_ecall(SBI_EXT_BASE, SBI_BASE_GET_IMPL_ID, 0, 0, 0, 0);
	return r.error == SBI_SUCCESS ? r.value : -1;
}

void sbi_init(void)
{
	has_time = sbi_probe(SBI_EXT_TIME);
	has_ipi = sbi_probe(SBI_EXT_IPI);
	has_rfence = sbi_probe(SBI_EXT_RFENCE);
	has_hsm = sbi_probe(SBI_EXT_HSM);
	has_srst = sbi_probe(SBI_EXT_SRST);
}

bool sbi_has(unsigned long ext)
{
	switch (ext) {
	case SBI_EXT_TIME:
		return has_time;
	case SBI_EXT_IPI:
		return has_ipi;
	case SBI_EXT_RFENCE:
		return has_rfence;
	case SBI_EXT_HSM:
		return has_hsm;
	case SBI_EXT_SRST:
		return has_srst;
	default:
		return sbi_probe(ext);
	}
}

void sbi_set_timer(u64 stime)
{
	sbi_ecall(SBI_EXT_TIME, 0, stime, 0, 0, 0);
}

int sbi_send_ipi(unsigned long mask, unsigned long base)
{
	return sbi_errno(sbi_ecall(SBI_EXT_IPI, 0, mask, base, 0, 0).error);
}

void sbi_remote_sfence_vma_all(void)
{
	/* start 0 and size -1: the whole address space (the SBI spec's "flush all"). */
	if (has_rfence)
		sbi_ecall(SBI_EXT_RFENCE, 1, 0, SBI_ALL_HARTS, 0, ~0UL);
}

int sbi_hart_start(unsigned long hartid, unsigned long start_pa, unsigned long opaque)
{
	if (!has_hsm)
		return -ENOSYS;
	return sbi_errno(
	    sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_START, hartid, start_pa, opaque, 0).error);
}

bool sbi_hart_startable(unsigned long hartid)
{
	if (!has_hsm)
		return true;
	return sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_GET_STATUS, hartid, 0, 0, 0).error !=
	       SBI_ERR_INVALID_PARAM;
}

void sbi_shutdown(bool failure)
{
	if (has_srst) {
		sbi_ecall(SBI_EXT_SRST, 0, SBI_SRST_SHUTDOWN,
			  failure ? SBI_SRST_REASON_FAILURE : SBI_SRST_REASON_NONE, 0, 0);
		return; /* no power-off device behind it */
	}
	/* OpenSBI hangs the hart here when it has no power-off device either. */
	sbi_ecall(SBI_EXT_LEGACY_SHUTDOWN, 0, 0, 0, 0, 0);
}

void sbi_reset(bool failure)
{
	if (has_srst)
		sbi_ecall(SBI_EXT_SRST, 0, SBI_SRST_COLD_REBOOT,
			  failure ? SBI_SRST_REASON_FAILURE : SBI_SRST_REASON_NONE, 0, 0);
}

void sbi_console_putchar(char c)
{
	sbi_ecall(SBI_EXT_LEGACY_PUTCHAR, 0, (unsigned char)c, 0, 0, 0);
}

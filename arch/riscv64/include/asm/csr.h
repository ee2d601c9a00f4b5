/*
 * RISC-V supervisor CSRs: numbers, the bits Grace uses, and accessors. Usable from
 * assembly (the numbers and bits) and C (csr_read() and friends).
 */
#ifndef ASM_CSR_H
#define ASM_CSR_H

#include <asm/const.h>

/* sstatus */
#define SSTATUS_SIE (_UL(1) << 1)	  /* interrupts enabled in S-mode */
#define SSTATUS_SPIE (_UL(1) << 5)	  /* SIE before the trap */
#define SSTATUS_SPP (_UL(1) << 8)	  /* the trap came from S-mode */
#define SSTATUS_FS (_UL(3) << 13)	  /* FPU state: Off in the kernel, so FP use traps */
#define SSTATUS_FS_INITIAL (_UL(1) << 13) /* usable, all zero: a fresh user thread */
#define SSTATUS_FS_CLEAN (_UL(2) << 13)	  /* usable, matches the saved copy */
#define SSTATUS_FS_DIRTY (_UL(3) << 13)	  /* written since it was last Clean: save it */
#define SSTATUS_SUM (_UL(1) << 18)	  /* S-mode may touch user pages */
#define SSTATUS_UXL (_UL(3) << 32)	  /* user XLEN: leave as the hart has it */

/* sie / sip bits, and the matching interrupt codes in scause */
#define IRQ_S_SOFT 1
#define IRQ_S_TIMER 5
#define IRQ_S_EXT 9
#define SIE_SSIE (_UL(1) << IRQ_S_SOFT)
#define SIE_STIE (_UL(1) << IRQ_S_TIMER)
#define SIE_SEIE (_UL(1) << IRQ_S_EXT)
#define SIP_SSIP SIE_SSIE

#define SCAUSE_INTERRUPT (_UL(1) << 63)

/* satp: mode in bits 63:60, root page-table PPN below */
#define SATP_MODE_SV39 (_UL(8) << 60)

/* Sstc: the supervisor timer compare register (not yet known to every assembler). */
#define CSR_STIMECMP 0x14d

#ifndef __ASSEMBLY__
#include <grace/types.h>

/* Two steps so that a CSR given as a macro (CSR_STIMECMP) is expanded to its number. */
#define __csr_str(x) #x
#define csr_str(x) __csr_str(x)

#define csr_read(csr)                                                                              \
	({                                                                                         \
		unsigned long __v;                                                                 \
		__asm__ __volatile__("csrr %0, " csr_str(csr) : "=r"(__v) : : "memory");           \
		__v;                                                                               \
	})
#define csr_write(csr, val)                                                                        \
	__asm__ __volatile__("csrw " csr_str(csr) ", %0" : : "rK"(val) : "memory")
#define csr_set(csr, bits)                                                                         \
	__asm__ __volatile__("csrs " csr_str(csr) ", %0" : : "rK"(bits) : "memory")
#define csr_clear(csr, bits)                                                                       \
	__asm__ __volatile__("csrc " csr_str(csr) ", %0" : : "rK"(bits) : "memory")

static inline u64 rdtime(void)
{
	u64 t;
	__asm__ __volatile__("rdtime %0" : "=r"(t));
	return t;
}

static inline void local_flush_tlb_all(void)
{
	__asm__ __volatile__("sfence.vma" : : : "memory");
}
#endif

#endif

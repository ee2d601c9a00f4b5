/*
 * The per-CPU base lives in tp (x4). The ABI reserves tp for a thread pointer and
 * the kernel has no threads' TLS, so it is ours: one register read, no memory load.
 */
#ifndef ASM_PERCPU_H
#define ASM_PERCPU_H

#include <grace/types.h>

static inline uintptr_t arch_percpu_base(void)
{
	uintptr_t tp;
	/* volatile: once threads migrate, tp may differ after any preemption point. */
	__asm__ __volatile__("mv %0, tp" : "=r"(tp));
	return tp;
}

/* Sets tp and the copy the trap entry restores tp from (arch/riscv64/hart.h). */
void arch_set_percpu_base(uintptr_t base);

#endif

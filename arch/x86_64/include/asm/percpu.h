/*
 * The per-CPU base on x86_64 is the GS base (MSR_GS_BASE). Reading the MSR is
 * slow, so the first word of every per-CPU copy holds the copy's own address
 * (percpu_self, filled by percpu_setup) and arch_percpu_base() is one %gs:0 load.
 * The GS base follows the CPU, not the thread: arch_switch_to() never touches
 * it. In ring 3 it is the user's (zero) and the kernel's waits in
 * MSR_KERNEL_GS_BASE; the entry from and exit to ring 3 SWAPGS them (entry.S).
 */
#ifndef ASM_PERCPU_H
#define ASM_PERCPU_H

/* Offset of current in struct percpu_head, at the start of every per-CPU copy. */
#define PERCPU_HEAD_CURRENT 8

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct task;

static inline uintptr_t arch_percpu_base(void)
{
	uintptr_t base;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(base));
	return base;
}

/*
 * The running thread. One %gs-relative load: a thread may be preempted and moved
 * to another CPU between any two instructions, and a single instruction cannot
 * use one CPU's GS base and another CPU's slot. volatile and "memory": never
 * reuse a value read before a call, which may have switched threads.
 */
static inline struct task *arch_current(void)
{
	struct task *t;
	__asm__ volatile("mov %%gs:%c1, %0" : "=r"(t) : "i"(PERCPU_HEAD_CURRENT) : "memory");
	return t;
}

/* Load the GS base (out of line in desc.c, once per CPU at start-up); generic code
 * has already stored base at *(uintptr_t *)base (percpu_self). */
void arch_set_percpu_base(uintptr_t base);
#endif

#endif

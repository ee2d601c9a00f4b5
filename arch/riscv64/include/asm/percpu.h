/*
 * The per-CPU base lives in tp (x4). The ABI reserves tp for a thread pointer and
 * the kernel has no threads' TLS, so it is ours in the kernel: one register read,
 * no memory load. tp follows the CPU, not the thread: arch_switch_to() never saves
 * or restores it, and a trap exit back to the kernel reloads it from this hart's
 * struct riscv_hart rather than from the frame, since a thread preempted in a trap
 * may return from it on another hart. User mode's tp (its TLS pointer) is saved in
 * the frame on the way in and comes back from there.
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
	uintptr_t tp;
	/* volatile: once threads migrate, tp may differ after any preemption point. */
	__asm__ __volatile__("mv %0, tp" : "=r"(tp));
	return tp;
}

/*
 * The running thread. One load through tp: a thread may be preempted and moved
 * to another CPU between any two instructions, and a single instruction cannot
 * read one CPU's base and another CPU's slot. volatile and "memory": never reuse
 * a value read before a call, which may have switched threads.
 */
static inline struct task *arch_current(void)
{
	struct task *t;
	__asm__ __volatile__("ld %0, %1(tp)" : "=r"(t) : "i"(PERCPU_HEAD_CURRENT) : "memory");
	return t;
}

/* Sets tp and the copy the trap entry restores tp from (arch/riscv64/hart.h). */
void arch_set_percpu_base(uintptr_t base);
#endif

#endif

/*
 * Thread context switch on x86_64 (see include/grace/arch.h). arch_switch_to()
 * (switch.S) pushes the System V callee-saved registers (rbp, rbx, r12-r15) on the
 * running thread's stack above the return address its call pushed, keeps rsp in
 * prev->sp, loads next's and pops the same. The GS base is never saved or
 * loaded: it is this CPU's per-CPU base, whichever thread runs.
 *
 * Nothing else is per thread: interrupts and exceptions run on the thread's
 * own stack (only #DF, NMI and #MC use IST stacks, and those never return to a
 * scheduler), CR2 is read with interrupts still off, RFLAGS.AC stays clear
 * (SMAP is off) and DF is clear by the ABI, and there is no user mode whose
 * TSS.RSP0 would have to follow the thread.
 */
#ifndef ASM_SWITCH_H
#define ASM_SWITCH_H

#define ARCH_CTX_SP 0

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct arch_context {
	uintptr_t sp; /* the switch frame on this thread's stack, while switched out */
};

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void));
void arch_switch_to(struct arch_context *prev, struct arch_context *next);
#endif

#endif

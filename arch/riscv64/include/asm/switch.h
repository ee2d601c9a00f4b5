/*
 * Thread context switch on riscv64 (see include/grace/arch.h). arch_switch_to()
 * (switch.S) pushes ra, s0-s11 and the user-access bit sstatus.SUM on the running
 * thread's stack, keeps sp in prev->sp, and pops next's from its stack. The rest
 * of struct arch_context is the per-thread half of the hart's trap state (hart.h),
 * which the hart's struct only holds for the thread running there.
 *
 * tp is never saved or restored: it is this CPU's per-CPU base, and a thread that
 * last ran on another CPU must come back with this CPU's. The ARCH_CTX_* offsets
 * are for switch.S; context.c checks them at compile time.
 */
#ifndef ASM_SWITCH_H
#define ASM_SWITCH_H

#define ARCH_CTX_SP 0
#define ARCH_CTX_TRAP_DEPTH 8
#define ARCH_CTX_TRAP_REGS 16

/* The frame arch_switch_to() leaves on a switched-out stack: 14 words, 16-byte aligned. */
#define SWITCH_FRAME_RA 0
#define SWITCH_FRAME_S(n) (8 + (n)*8) /* s0..s11 */
#define SWITCH_FRAME_SSTATUS 104      /* only the SUM bit */
#define SWITCH_FRAME_SIZE 112

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct regs;

struct arch_context {
	uintptr_t sp;		  /* the switch frame on this thread's stack, while switched out */
	unsigned long trap_depth; /* hart->trap_depth while switched out: traps it sits in */
	struct regs *trap_regs;	  /* hart->trap_regs while switched out: its innermost frame */
};

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void));
void arch_switch_to(struct arch_context *prev, struct arch_context *next);
#endif

#endif

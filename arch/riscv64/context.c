/*
 * A new thread's first context: a switch frame at the top of its stack that
 * arch_switch_to() (switch.S) pops like any other, returning into
 * riscv_thread_start, which calls entry. The thread starts outside any trap
 * (depth 0, no trap frames) and with user access closed.
 */
#include <grace/compiler.h>
#include <grace/string.h>
#include <asm/switch.h>
#include "hart.h"

BUILD_BUG_ON(offsetof(struct arch_context, sp) != ARCH_CTX_SP);
BUILD_BUG_ON(offsetof(struct arch_context, trap_depth) != ARCH_CTX_TRAP_DEPTH);
BUILD_BUG_ON(offsetof(struct arch_context, trap_regs) != ARCH_CTX_TRAP_REGS);
BUILD_BUG_ON(SWITCH_FRAME_SIZE % 16 || SWITCH_FRAME_SSTATUS + 8 > SWITCH_FRAME_SIZE);

extern char riscv_thread_start[];

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void))
{
	/* The ABI wants sp 16-byte aligned at every call, entry's included. */
	stack_top &= ~(uintptr_t)15;
	unsigned long *frame = (unsigned long *)(stack_top - SWITCH_FRAME_SIZE);

	memset(frame, 0, SWITCH_FRAME_SIZE); /* s0 = 0 ends the frame chain; SUM clear */
	frame[SWITCH_FRAME_RA / 8] = (uintptr_t)riscv_thread_start;
	frame[SWITCH_FRAME_S(1) / 8] = (uintptr_t)entry;
	*ctx = (struct arch_context){
	    .sp = (uintptr_t)frame,
	    .trap_depth = 0,
	    .trap_regs = NULL,
	};
}

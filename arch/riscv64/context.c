/*
 * A thread's context: its first switch frame, and the switch itself.
 *
 * A new thread gets a switch frame at the top of its stack that riscv_switch_to()
 * (switch.S) pops like any other, returning into riscv_thread_start, which calls
 * entry. The thread starts outside any trap (depth 0, no trap frames), with user
 * access closed, and with its stack top recorded: if it ever enters user mode,
 * every trap from there builds its frame just below that top.
 *
 * The FP registers are switched here, before the stack switch, and only for
 * threads that have entered user mode: the kernel never uses them. A thread's FS
 * field, which the hardware moves to Dirty on the first FP write, is in its user
 * trap frame while it is in the kernel (the trap entry turns FS Off). So the
 * outgoing thread's registers are saved only if Dirty, and its frame is marked
 * Clean, which stays true until its next FP write in user mode. The incoming
 * user thread's are always loaded: the hart's registers may hold anyone's.
 */
#include <grace/compiler.h>
#include <grace/string.h>
#include <asm/csr.h>
#include <asm/regs.h>
#include <asm/switch.h>
#include "hart.h"
#include "riscv.h"

BUILD_BUG_ON(offsetof(struct arch_context, sp) != ARCH_CTX_SP);
BUILD_BUG_ON(offsetof(struct arch_context, trap_depth) != ARCH_CTX_TRAP_DEPTH);
BUILD_BUG_ON(offsetof(struct arch_context, trap_regs) != ARCH_CTX_TRAP_REGS);
BUILD_BUG_ON(offsetof(struct arch_context, stack_top) != ARCH_CTX_STACK_TOP);
BUILD_BUG_ON(SWITCH_FRAME_SIZE % 16 || SWITCH_FRAME_SSTATUS + 8 > SWITCH_FRAME_SIZE);
BUILD_BUG_ON(offsetof(struct riscv_fp_state, f[31]) != FP_STATE_F(31));
BUILD_BUG_ON(offsetof(struct riscv_fp_state, fcsr) != FP_STATE_FCSR);

extern char riscv_thread_start[];

void riscv_switch_to(struct arch_context *prev, struct arch_context *next);

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
	    .stack_top = stack_top,
	    .user = false,
	};
}

void arch_switch_to(struct arch_context *prev, struct arch_context *next)
{
	if (prev->user) {
		struct regs *regs = riscv_user_regs(prev);
		if ((regs->sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY) {
			riscv_fp_save(&prev->fp);
			regs->sstatus = (regs->sstatus & ~SSTATUS_FS) | SSTATUS_FS_CLEAN;
		}
	}
	if (next->user)
		riscv_fp_restore(&next->fp);
	riscv_switch_to(prev, next);
}

/*
 * The ways into user mode on riscv64 (grace/arch.h, "user mode"): a new program
 * (arch_enter_user), fork's child (arch_user_fork, then arch_return_to_user), and
 * the TLS pointer (arch_set_user_tls).
 *
 * There is no separate path to user mode: each builds, at the top of the thread's
 * kernel stack, the frame a trap from user mode would have left there, and takes
 * the ordinary trap exit (trap_entry.S), whose sret lands at the frame's pc. The
 * frame's sstatus says where and how: SPP clear (user mode), SPIE set (interrupts
 * on there), SUM clear, the vector unit Off, and FS Initial for a new program
 * (the FPU usable and all zero; the registers are loaded with zeros to match) or
 * the parent's for fork's child. From then on the thread is a user thread: its FP
 * registers follow it across switches (context.c), and its TLS pointer is tp,
 * which the trap frame carries.
 */
#include <grace/arch.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/string.h>
#include <asm/csr.h>
#include <asm/irq.h>
#include "hart.h"
#include "riscv.h"

/* sstatus for a return to user mode with the FPU in state fs. */
static unsigned long user_sstatus(unsigned long fs)
{
	/* UXL as the hart has it: some harts let it be written, and 0 is not RV64. */
	return (csr_read(sstatus) & SSTATUS_UXL) | SSTATUS_SPIE | (fs & SSTATUS_FS);
}

/*
 * The running thread's context, ready to leave for user mode: interrupts off until
 * the sret (nothing may switch it out with its frame half built), outside any trap
 * (the exit sets the depth to 0 for a return to user mode).
 */
static struct arch_context *user_leave_prepare(void)
{
	struct arch_context *ctx = &current->ctx;

	/* A CPU's boot or idle context has no stack top for user traps to use. */
	BUG_ON(!ctx->stack_top);
	arch_irq_disable();
	this_hart()->trap_regs = NULL;
	return ctx;
}

void __noreturn arch_enter_user(uintptr_t pc, uintptr_t sp)
{
	struct arch_context *ctx = user_leave_prepare();

	memset(&ctx->fp, 0, sizeof(ctx->fp));
	riscv_fp_restore(&ctx->fp);
	ctx->user = true;
	riscv_enter_user(pc, sp, user_sstatus(SSTATUS_FS_INITIAL), riscv_user_regs(ctx));
}

void __noreturn arch_return_to_user(const struct regs *regs)
{
	struct arch_context *ctx = user_leave_prepare();

	/* arch_user_fork() made it a user thread, so its FP registers came in with it. */
	BUG_ON(!ctx->user);
	riscv_return_to_user(regs, user_sstatus(regs->sstatus), riscv_user_regs(ctx));
}

/*
 * The caller's FP registers are live on this hart (it is a user thread in a
 * system call), whether or not its frame says Dirty: copy them to the child.
 */
void arch_user_fork(struct task *child)
{
	if (current->ctx.user) {
		unsigned long flags = arch_irq_save();
		riscv_fp_save(&child->ctx.fp);
		arch_irq_restore(flags);
	}
	child->ctx.user = true;
}

/* regs may be NULL for the running thread's own frame, as x86_64's arch_prctl passes it. */
void arch_set_user_tls(struct regs *regs, uintptr_t tls)
{
	if (!regs)
		regs = riscv_user_regs(&current->ctx);
	regs->tp = tls;
}

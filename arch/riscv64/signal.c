/*
 * Signal frames on riscv64 (grace/signal.h, "provided by the arch"): the frame
 * Linux builds for a handler (asm/sigframe.h), rt_sigreturn's undoing of it, and
 * the restart of a system call that a signal interrupted.
 *
 * The frame holds the trap frame's pc and x1..x31 and the D extension's
 * registers, read from the hart: a user thread's FP registers stay live there
 * all the while it runs in the kernel (context.c saves them only when it is
 * switched out, and loads them when it comes back), so they are what the
 * interrupted code left. The handler starts with them as they are, as on Linux.
 * rt_sigreturn loads the frame's values into the hart and marks them Dirty in
 * the trap frame in one step with interrupts off: a switch in between would see
 * Clean and keep the copy saved before the handler, which the switch back would
 * load over them. The handler returns through ra to the trampoline exec mapped
 * (sigreturn.S): riscv64 has no SA_RESTORER.
 *
 * A restarted system call goes back to its ecall with a0 as the ecall brought
 * it, which the trap entry keeps in orig_a0 because the result overwrote a0;
 * a7, the number, is still what it was.
 */
#include <grace/errno.h>
#include <grace/process.h>
#include <grace/signal.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <asm/csr.h>
#include <asm/irq.h>
#include <asm/sigframe.h>
#include "riscv.h"

/* The psABI's stack alignment, which the handler's sp keeps. */
#define SIGFRAME_ALIGN 16

/* The user's FP registers, live on this hart, into the frame's D state. */
static void fp_to_frame(struct user_fp_state *fp)
{
	struct riscv_fp_state live;
	unsigned long flags = arch_irq_save();

	riscv_fp_save(&live);
	arch_irq_restore(flags);
	memcpy(fp->f, live.f, sizeof(fp->f));
	fp->fcsr = live.fcsr;
}

/* The frame's D state into this hart's FP registers, which regs' FS then says are Dirty. */
static void fp_from_frame(struct regs *regs, const struct user_fp_state *fp)
{
	struct riscv_fp_state live;

	memcpy(live.f, fp->f, sizeof(live.f));
	live.fcsr = fp->fcsr;
	unsigned long flags = arch_irq_save();
	riscv_fp_restore(&live);
	regs->sstatus = (regs->sstatus & ~SSTATUS_FS) | SSTATUS_FS_DIRTY;
	arch_irq_restore(flags);
}

int arch_signal_frame_setup(struct regs *regs, int sig, const struct ksigaction *ka,
			    const struct user_siginfo *info, ksigset_t oldmask)
{
	uintptr_t sp = (regs->sp - sizeof(struct rt_sigframe)) & ~(uintptr_t)(SIGFRAME_ALIGN - 1);
	struct rt_sigframe __user *uframe = (struct rt_sigframe __user *)sp;
	struct rt_sigframe frame;

	/* Whole, padding included: no byte of the kernel's stack goes out with it. */
	memset(&frame, 0, sizeof(frame));
	frame.info = *info;
	frame.uc.uc_stack.ss_flags = SS_DISABLE;
	frame.uc.uc_sigmask = oldmask;
	frame.uc.uc_mcontext.pc = regs->sepc;
	memcpy(frame.uc.uc_mcontext.x, &regs->ra, sizeof(frame.uc.uc_mcontext.x));
	fp_to_frame(&frame.uc.uc_mcontext.fp);
	frame.uc.uc_mcontext.fp.ext_magic = SIGCTX_END_MAGIC;
	frame.uc.uc_mcontext.fp.ext_size = SIGCTX_END_SIZE;
	/* A stack pointer so low that the frame would wrap gives one access_ok() refuses. */
	if (copy_to_user(uframe, &frame, sizeof(frame)))
		return -EFAULT;

	regs->sepc = ka->handler;
	regs->ra = proc_sigreturn_trampoline();
	regs->sp = sp;
	regs->a0 = (unsigned long)sig;
	regs->a1 = (uintptr_t)&uframe->info;
	regs->a2 = (uintptr_t)&uframe->uc;
	return 0;
}

/*
 * The handler has returned with sp where setup left it, at the frame. A frame
 * Linux would refuse (the reserved word set, an extension header other than the
 * end) is refused as one that cannot be read: the program gets SIGSEGV.
 */
int arch_signal_frame_restore(struct regs *regs, ksigset_t *mask)
{
	const struct rt_sigframe __user *uframe = (const struct rt_sigframe __user *)regs->sp;
	struct user_ucontext uc;

	if (copy_from_user(&uc, &uframe->uc, sizeof(uc)))
		return -EFAULT;
	const struct user_sigcontext *sc = &uc.uc_mcontext;
	if (sc->fp.reserved || sc->fp.ext_magic != SIGCTX_END_MAGIC ||
	    sc->fp.ext_size != SIGCTX_END_SIZE)
		return -EFAULT;

	regs->sepc = sc->pc;
	memcpy(&regs->ra, sc->x, sizeof(sc->x));
	fp_from_frame(regs, &sc->fp);
	*mask = uc.uc_sigmask;
	return 0;
}

void arch_syscall_restart(struct regs *regs)
{
	regs->a0 = regs->orig_a0;
	regs->sepc -= RISCV_ECALL_SIZE;
}

/*
 * Signal frames on x86_64 (grace/signal.h, "provided by the arch"): the frame
 * Linux builds for a handler (asm/sigframe.h), rt_sigreturn's undoing of it, and
 * the restart of a system call that a signal interrupted.
 *
 * The frame goes where Linux's get_sigframe() puts it: below the interrupted
 * rsp's 128-byte red zone (the SysV ABI lets code keep data there without moving
 * rsp), the FXSAVE image 64-byte aligned below that, then the frame, placed so
 * that at the handler's first instruction rsp + 8 is a multiple of 16, as right
 * after a call. The handler's ret pops pretcode, sa_restorer, glibc's stub that
 * makes rt_sigreturn; Linux refuses to deliver to a handler without SA_RESTORER
 * on x86_64, and so does this (the program gets SIGSEGV).
 *
 * A user thread's x87/SSE registers are live in the CPU while it runs in the
 * kernel (context.c switches them eagerly), so the frame's image is FXSAVE's of
 * the CPU, and the handler starts with a new program's state, as Linux gives it.
 * rt_sigreturn loads the frame's image (or a new program's state where fpstate
 * is 0, as Linux does) once the MXCSR bits the CPU lacks are cleared: FXRSTOR
 * would fault on them, in the kernel. The CPU's registers are saved and loaded
 * with interrupts off, so that no switch comes between them and the thread's.
 *
 * rt_sigreturn restores every general register, and of RFLAGS only the flags a
 * program may change (Linux's FIX_EFLAGS); the way out (user.c) forces CS, SS,
 * IF and IOPL to ring 3's and refuses a non-canonical rip. The restored rcx and
 * rip differ in general, so that return is by IRETQ.
 *
 * A restarted system call goes back onto its 2-byte syscall instruction with
 * rax, which holds the result by now, the number again from orig_rax.
 */
#include <grace/errno.h>
#include <grace/signal.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <asm/irq.h>
#include <asm/sigframe.h>
#include <asm/switch.h>
#include "processor.h"
#include "x86_64.h"

/* The SysV ABI's red zone below rsp, which the frame must not touch. */
#define RED_ZONE 128
/* Linux aligns the FP image for XSAVE, which wants 64; FXSAVE's 16 fits inside. */
#define FP_IMAGE_ALIGN 64
#define SYSCALL_INSN_SIZE 2
/* CPU exceptions have the vectors below 32 (x86_64.h); the page fault's is 14. */
#define EXCEPTION_VECTORS 32
#define VEC_PAGE_FAULT 14

/* What rt_sigreturn takes from the frame's eflags (Linux's FIX_EFLAGS); the rest stays. */
#define SIGRETURN_RFLAGS                                                                           \
	(RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_TF | RFLAGS_DF |       \
	 RFLAGS_OF | RFLAGS_RF | RFLAGS_AC)
/* Cleared for the handler: DF as at any call; TF and RF so that no debug trap follows it in. */
#define HANDLER_RFLAGS_CLEAR (RFLAGS_DF | RFLAGS_TF | RFLAGS_RF)

/* x86_64 needs no trampoline: the handler returns to sa_restorer. */
const u8 arch_sigreturn_code[] = {};
const size_t arch_sigreturn_code_len = 0;

static void sigcontext_from_regs(struct user_sigcontext *sc, const struct regs *regs)
{
	sc->r8 = regs->r8;
	sc->r9 = regs->r9;
	sc->r10 = regs->r10;
	sc->r11 = regs->r11;
	sc->r12 = regs->r12;
	sc->r13 = regs->r13;
	sc->r14 = regs->r14;
	sc->r15 = regs->r15;
	sc->rdi = regs->rdi;
	sc->rsi = regs->rsi;
	sc->rbp = regs->rbp;
	sc->rbx = regs->rbx;
	sc->rdx = regs->rdx;
	sc->rax = regs->rax;
	sc->rcx = regs->rcx;
	sc->rsp = regs->rsp;
	sc->rip = regs->rip;
	sc->eflags = regs->rflags;
	sc->cs = (u16)regs->cs;
	sc->ss = (u16)regs->ss;
	/* The exception that raised the signal, if one did; 0 after a system call or interrupt. */
	if (regs->vector < EXCEPTION_VECTORS) {
		sc->trapno = regs->vector;
		sc->err = regs->error;
		if (regs->vector == VEC_PAGE_FAULT)
			sc->cr2 = regs->cr2;
	}
}

static void regs_from_sigcontext(struct regs *regs, const struct user_sigcontext *sc)
{
	regs->r8 = sc->r8;
	regs->r9 = sc->r9;
	regs->r10 = sc->r10;
	regs->r11 = sc->r11;
	regs->r12 = sc->r12;
	regs->r13 = sc->r13;
	regs->r14 = sc->r14;
	regs->r15 = sc->r15;
	regs->rdi = sc->rdi;
	regs->rsi = sc->rsi;
	regs->rbp = sc->rbp;
	regs->rbx = sc->rbx;
	regs->rdx = sc->rdx;
	regs->rax = sc->rax;
	regs->rcx = sc->rcx;
	regs->rsp = sc->rsp;
	regs->rip = sc->rip;
	regs->rflags = (regs->rflags & ~(u64)SIGRETURN_RFLAGS) | (sc->eflags & SIGRETURN_RFLAGS);
}

/* Load fx into this CPU's x87/SSE registers, which are the running user thread's. */
static void fp_load(const struct fxstate *fx)
{
	unsigned long flags = arch_irq_save();
	x86_fpu_restore(fx);
	arch_irq_restore(flags);
}

int arch_signal_frame_setup(struct regs *regs, int sig, const struct ksigaction *ka,
			    const struct user_siginfo *info, ksigset_t oldmask)
{
	if (!(ka->flags & SA_RESTORER))
		return -EFAULT;
	/* A stack pointer so low that these wrap gives addresses access_ok() refuses. */
	uintptr_t fp_addr =
	    (regs->rsp - RED_ZONE - sizeof(struct fxstate)) & ~(uintptr_t)(FP_IMAGE_ALIGN - 1);
	uintptr_t sp = ((fp_addr - sizeof(struct rt_sigframe)) & ~(uintptr_t)15) - 8;
	struct rt_sigframe __user *uframe = (struct rt_sigframe __user *)sp;
	struct rt_sigframe frame;
	struct fxstate fx;

	/* FXSAVE leaves the image's last 96 bytes alone: zero, not the kernel stack's. */
	memset(&fx, 0, sizeof(fx));
	unsigned long flags = arch_irq_save();
	x86_fpu_save(&fx);
	arch_irq_restore(flags);

	memset(&frame, 0, sizeof(frame));
	frame.pretcode = ka->restorer;
	frame.uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	frame.uc.uc_stack.ss_flags = SS_DISABLE;
	sigcontext_from_regs(&frame.uc.uc_mcontext, regs);
	frame.uc.uc_mcontext.oldmask = oldmask;
	frame.uc.uc_mcontext.fpstate = fp_addr;
	frame.uc.uc_sigmask = oldmask;
	frame.info = *info;
	if (copy_to_user((void __user *)fp_addr, &fx, sizeof(fx)) ||
	    copy_to_user(uframe, &frame, sizeof(frame)))
		return -EFAULT;

	x86_fpu_init_state(&fx);
	fp_load(&fx);
	regs->rip = ka->handler;
	regs->rsp = sp;
	regs->rdi = (unsigned)sig;
	regs->rsi = (uintptr_t)&uframe->info;
	regs->rdx = (uintptr_t)&uframe->uc;
	regs->rax = 0; /* a variadic callee's count of vector registers used */
	regs->rflags &= ~(u64)HANDLER_RFLAGS_CLEAR;
	return 0;
}

/* The handler's ret popped pretcode: the frame starts 8 bytes below rsp. */
int arch_signal_frame_restore(struct regs *regs, ksigset_t *mask)
{
	const struct rt_sigframe __user *uframe =
	    (const struct rt_sigframe __user *)(regs->rsp - sizeof(uintptr_t));
	struct user_ucontext uc;
	struct fxstate fx;

	if (copy_from_user(&uc, &uframe->uc, sizeof(uc)))
		return -EFAULT;
	const struct user_sigcontext *sc = &uc.uc_mcontext;
	if (sc->fpstate) {
		if (copy_from_user(&fx, (const void __user *)sc->fpstate, sizeof(fx)))
			return -EFAULT;
		x86_fpu_sanitize(&fx);
	} else {
		x86_fpu_init_state(&fx);
	}

	regs_from_sigcontext(regs, sc);
	fp_load(&fx);
	*mask = uc.uc_sigmask;
	return 0;
}

void arch_syscall_restart(struct regs *regs)
{
	regs->rax = regs->orig_rax;
	regs->rip -= SYSCALL_INSN_SIZE;
}

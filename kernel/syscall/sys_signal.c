/*
 * The signal calls of the user ABI: dispositions, the mask, sending, waiting
 * for one, returning from a handler, and the process groups kill addresses.
 * The work is kernel/proc/signal.c's and process.c's; this file translates the
 * arch's struct sigaction and checks the sigset size, which is 8 bytes on both
 * arches (a different size is -EINVAL, as Linux says).
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/uaccess.h>
#include <asm/signal.h>
#include "syscall_internal.h"

SYSCALL_DEFINE4(rt_sigaction, int, sig, const void __user *, uact, void __user *, oact, size_t,
		sigsetsize)
{
	struct user_sigaction ua;
	struct ksigaction act, old;

	if (sigsetsize != sizeof(ksigset_t))
		return -EINVAL;
	if (uact) {
		if (copy_from_user(&ua, uact, sizeof(ua)))
			return -EFAULT;
		act =
		    (struct ksigaction){.handler = ua.handler, .flags = ua.flags, .mask = ua.mask};
#if ARCH_HAS_SA_RESTORER
		act.restorer = ua.restorer;
#endif
	}
	int err = signal_action(current_process(), sig, uact ? &act : NULL, &old);
	if (err || !oact)
		return err;
	ua = (struct user_sigaction){.handler = old.handler, .flags = old.flags, .mask = old.mask};
#if ARCH_HAS_SA_RESTORER
	ua.restorer = old.restorer;
#endif
	return copy_to_user(oact, &ua, sizeof(ua)) ? -EFAULT : 0;
}

SYSCALL_DEFINE4(rt_sigprocmask, int, how, const void __user *, nset, void __user *, oset, size_t,
		sigsetsize)
{
	ksigset_t set, old = signal_blocked();

	if (sigsetsize != sizeof(ksigset_t))
		return -EINVAL;
	if (nset) {
		if (copy_from_user(&set, nset, sizeof(set)))
			return -EFAULT;
		switch (how) {
		case SIG_BLOCK:
			set = old | set;
			break;
		case SIG_UNBLOCK:
			set = old & ~set;
			break;
		case SIG_SETMASK:
			break;
		default:
			return -EINVAL;
		}
	}
	if (oset && copy_to_user(oset, &old, sizeof(old)))
		return -EFAULT;
	if (nset)
		signal_set_blocked(set);
	return 0;
}

SYSCALL_DEFINE2(rt_sigpending, void __user *, uset, size_t, sigsetsize)
{
	if (sigsetsize != sizeof(ksigset_t))
		return -EINVAL;
	ksigset_t set = signal_pending_set();
	return copy_to_user(uset, &set, sizeof(set)) ? -EFAULT : 0;
}

SYSCALL_DEFINE2(rt_sigsuspend, const void __user *, unewset, size_t, sigsetsize)
{
	ksigset_t mask;
	if (sigsetsize != sizeof(ksigset_t))
		return -EINVAL;
	if (copy_from_user(&mask, unewset, sizeof(mask)))
		return -EFAULT;
	return signal_suspend(mask);
}

SYSCALL_DEFINE0(pause)
{
	return signal_suspend(signal_blocked());
}

SYSCALL_DEFINE0(rt_sigreturn)
{
	struct regs *regs = current->user_regs;
	ksigset_t mask;
	if (arch_signal_frame_restore(regs, &mask)) {
		user_signal_force(SIGSEGV, SI_KERNEL, 0); /* a frame the handler broke, as Linux */
		return syscall_get_return(regs);
	}
	signal_set_blocked(mask);
	/* The restored registers stand: the "result" is what the result register holds. */
	return syscall_get_return(regs);
}

SYSCALL_DEFINE2(kill, int, pid, int, sig)
{
	return proc_kill(pid, sig, SI_USER);
}

SYSCALL_DEFINE2(tkill, int, pid, int, sig)
{
	return proc_tgkill(0, pid, sig);
}

SYSCALL_DEFINE3(tgkill, int, tgid, int, pid, int, sig)
{
	if (tgid <= 0)
		return -EINVAL;
	return proc_tgkill(tgid, pid, sig);
}

SYSCALL_DEFINE2(setpgid, int, pid, int, pgid)
{
	return proc_setpgid(pid, pgid);
}

SYSCALL_DEFINE1(getpgid, int, pid)
{
	return proc_getpgid(pid);
}

SYSCALL_DEFINE0(getpgrp)
{
	return proc_getpgid(0);
}

SYSCALL_DEFINE0(setsid)
{
	return proc_setsid();
}

SYSCALL_DEFINE1(getsid, int, pid)
{
	return proc_getsid(pid);
}

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

#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

USER_CALL(rt_sigaction)
{
	int sig = (int)a0;
	struct user_sigaction ua;
	struct ksigaction act, old;

	if (a3 != sizeof(ksigset_t))
		return -EINVAL;
	if (a1) {
		if (copy_from_user(&ua, (const void __user *)a1, sizeof(ua)))
			return -EFAULT;
		act =
		    (struct ksigaction){.handler = ua.handler, .flags = ua.flags, .mask = ua.mask};
#if ARCH_HAS_SA_RESTORER
		act.restorer = ua.restorer;
#endif
	}
	int err = signal_action(current_process(), sig, a1 ? &act : NULL, &old);
	if (err || !a2)
		return err;
	ua = (struct user_sigaction){.handler = old.handler, .flags = old.flags, .mask = old.mask};
#if ARCH_HAS_SA_RESTORER
	ua.restorer = old.restorer;
#endif
	return copy_to_user((void __user *)a2, &ua, sizeof(ua)) ? -EFAULT : 0;
}

USER_CALL(rt_sigprocmask)
{
	ksigset_t set, old = signal_blocked();

	if (a3 != sizeof(ksigset_t))
		return -EINVAL;
	if (a1) {
		if (copy_from_user(&set, (const void __user *)a1, sizeof(set)))
			return -EFAULT;
		switch (a0) {
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
	if (a2 && copy_to_user((void __user *)a2, &old, sizeof(old)))
		return -EFAULT;
	if (a1)
		signal_set_blocked(set);
	return 0;
}

USER_CALL(rt_sigpending)
{
	if (a1 != sizeof(ksigset_t))
		return -EINVAL;
	ksigset_t set = signal_pending_set();
	return copy_to_user((void __user *)a0, &set, sizeof(set)) ? -EFAULT : 0;
}

USER_CALL(rt_sigsuspend)
{
	ksigset_t mask;
	if (a1 != sizeof(ksigset_t))
		return -EINVAL;
	if (copy_from_user(&mask, (const void __user *)a0, sizeof(mask)))
		return -EFAULT;
	return signal_suspend(mask);
}

USER_CALL(pause)
{
	return signal_suspend(signal_blocked());
}

USER_CALL(rt_sigreturn)
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

USER_CALL(kill)
{
	return proc_kill((int)a0, (int)a1, SI_USER);
}

USER_CALL(tkill)
{
	return proc_tgkill(0, (int)a0, (int)a1);
}

USER_CALL(tgkill)
{
	if ((int)a0 <= 0)
		return -EINVAL;
	return proc_tgkill((int)a0, (int)a1, (int)a2);
}

USER_CALL(setpgid)
{
	return proc_setpgid((int)a0, (int)a1);
}

USER_CALL(getpgid)
{
	return proc_getpgid((int)a0);
}

USER_CALL(getpgrp)
{
	return proc_getpgid(0);
}

USER_CALL(setsid)
{
	return proc_setsid();
}

USER_CALL(getsid)
{
	return proc_getsid((int)a0);
}

/*
 * Signals of processes: sending (kill, the kernel's own), the process groups
 * kill and the terminal address, and delivery on the way back to user mode.
 *
 * A process has one thread, so the thread's mask and the process's pending set
 * live side by side in struct process under its siglock. Standard signals do
 * not queue: a second SIGINT while one is pending is the same pending bit, and
 * the siginfo is the latest sender's. task->sigpending says "pending and not
 * blocked" for the thread, so that an interruptible sleep (wait_event_interruptible)
 * can check it in one load; it is recomputed whenever pending or blocked change.
 *
 * Delivery takes the lowest pending unblocked signal: ignored ones are dropped,
 * a default action other than ignoring ends the program (job control, stop
 * and continue, is not supported: the stop signals are ignored), and a handler
 * gets the arch's signal frame (arch_signal_frame_setup), with its sa_mask and
 * itself blocked while it runs.
 *
 * Lock order: proc_lock (kernel/proc/process.c), then a process's siglock.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/string.h>
#include <grace/syscall.h>
#include <grace/wait.h>
#include "proc_internal.h"

static const char *const signal_names[] = {
    [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",	  [SIGQUIT] = "SIGQUIT",
    [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP",	  [SIGABRT] = "SIGABRT",
    [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",	  [SIGKILL] = "SIGKILL",
    [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV",	  [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM",	  [SIGTERM] = "SIGTERM",
    [SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",	  [SIGCONT] = "SIGCONT",
    [SIGSTOP] = "SIGSTOP",     [SIGTSTP] = "SIGTSTP",	  [SIGTTIN] = "SIGTTIN",
    [SIGTTOU] = "SIGTTOU",     [SIGURG] = "SIGURG",	  [SIGXCPU] = "SIGXCPU",
    [SIGXFSZ] = "SIGXFSZ",     [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
    [SIGWINCH] = "SIGWINCH",   [SIGIO] = "SIGIO",	  [SIGPWR] = "SIGPWR",
    [SIGSYS] = "SIGSYS",
};

const char *signal_name(int sig)
{
	if (sig > 0 && sig < (int)ARRAY_SIZE(signal_names))
		return signal_names[sig];
	return "SIG?";
}

/*
 * Signals whose default action is to do nothing. Job control (stop and continue)
 * is not supported: the stop signals are ignored rather than ending the program,
 * which is what a shell without job control would see of them.
 */
#define SIG_DEFAULT_IGNORED                                                                        \
	(SIGBIT(SIGCHLD) | SIGBIT(SIGURG) | SIGBIT(SIGWINCH) | SIGBIT(SIGCONT) | SIGBIT(SIGSTOP) | \
	 SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))
/* Never caught, blocked or ignored. */
#define SIG_UNCATCHABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

static bool sig_ignored_locked(struct process *p, int sig)
{
	uintptr_t h = p->sigactions[sig - 1].handler;
	return h == SIG_IGN || (h == SIG_DFL && (SIG_DEFAULT_IGNORED & SIGBIT(sig)));
}

/* Recompute the thread's sigpending; siglock held. */
static void signal_recalc_locked(struct process *p)
{
	WRITE_ONCE(p->task->sigpending, (p->pending & ~p->blocked) != 0);
}

void signal_send(struct process *p, int sig, const struct ksiginfo *info)
{
	if (sig <= 0 || sig > NSIG || !p->task)
		return;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	/*
	 * An ignored signal is dropped when sent, unless blocked (it may be unignored
	 * first); so is one init has left at its default action, SIGKILL included, as
	 * Linux protects init.
	 */
	bool drop = p->state == PROC_ZOMBIE ||
		    (sig_ignored_locked(p, sig) && !(p->blocked & SIGBIT(sig))) ||
		    (p->unkillable && p->sigactions[sig - 1].handler == SIG_DFL);
	if (!drop) {
		p->pending |= SIGBIT(sig);
		p->siginfo[sig - 1] = *info;
		signal_recalc_locked(p);
	}
	spin_unlock_irqrestore(&p->siglock, flags);
	/* wake_up_process() orders sigpending's store before its read of the state. */
	if (!drop)
		wake_up_process(p->task);
}

void signal_force(struct process *p, int sig, const struct ksiginfo *info)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	struct ksigaction *ka = &p->sigactions[sig - 1];
	/* Blocked or ignored, it would never end: the default action takes over instead. */
	if (ka->handler == SIG_IGN || (p->blocked & SIGBIT(sig))) {
		ka->handler = SIG_DFL;
		p->blocked &= ~SIGBIT(sig);
	}
	p->pending |= SIGBIT(sig);
	p->siginfo[sig - 1] = *info;
	signal_recalc_locked(p);
	spin_unlock_irqrestore(&p->siglock, flags);
}

bool signal_handled(struct process *p, int sig)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	bool handled = p->sigactions[sig - 1].handler > SIG_IGN && !(p->blocked & SIGBIT(sig));
	spin_unlock_irqrestore(&p->siglock, flags);
	return handled;
}

/* The lowest pending unblocked signal, taken off the pending set with its info; 0 if none. */
static int signal_dequeue(struct process *p, struct ksiginfo *info, struct ksigaction *ka)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	ksigset_t ready = p->pending & ~p->blocked;
	int sig = ready ? __builtin_ctzll(ready) + 1 : 0;
	if (sig) {
		p->pending &= ~SIGBIT(sig);
		*info = p->siginfo[sig - 1];
		*ka = p->sigactions[sig - 1];
		if (ka->handler > SIG_IGN && (ka->flags & SA_RESETHAND))
			p->sigactions[sig - 1].handler = SIG_DFL;
	}
	signal_recalc_locked(p);
	spin_unlock_irqrestore(&p->siglock, flags);
	return sig;
}

static void siginfo_to_user(int sig, const struct ksiginfo *k, struct user_siginfo *u)
{
	memset(u, 0, sizeof(*u));
	u->si_signo = sig;
	u->si_code = k->code;
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP)
		u->addr = k->addr;
	else {
		u->proc.pid = k->pid;
		u->proc.status = k->status;
	}
}

void signal_deliver(struct regs *regs, long restart)
{
	struct process *p = current_process();
	struct ksiginfo info;
	struct ksigaction ka;
	int sig;

	while ((sig = signal_dequeue(p, &info, &ka))) {
		if (ka.handler == SIG_IGN ||
		    (ka.handler == SIG_DFL && (SIG_DEFAULT_IGNORED & SIGBIT(sig))))
			continue;
		if (ka.handler == SIG_DFL)
			proc_exit(sig); /* every other default action ends the program */
		/* A handler: the interrupted call restarts after it only with SA_RESTART. */
		if (restart == -ERESTARTSYS) {
			if (ka.flags & SA_RESTART)
				arch_syscall_restart(regs);
			else
				syscall_set_return(regs, -EINTR);
			restart = 0;
		}
		struct user_siginfo uinfo;
		siginfo_to_user(sig, &info, &uinfo);
		/* After rt_sigsuspend, the mask the handler returns to is the one before it. */
		unsigned long flags = spin_lock_irqsave(&p->siglock);
		ksigset_t old = p->restore_blocked ? p->saved_blocked : p->blocked;
		spin_unlock_irqrestore(&p->siglock, flags);
		if (arch_signal_frame_setup(regs, sig, &ka, &uinfo, old))
			proc_exit(SIGSEGV); /* no room for the frame: Linux forces SIGSEGV */
		flags = spin_lock_irqsave(&p->siglock);
		p->blocked = old | ka.mask | ((ka.flags & SA_NODEFER) ? 0 : SIGBIT(sig));
		p->blocked &= ~SIG_UNCATCHABLE;
		p->restore_blocked = false;
		signal_recalc_locked(p);
		spin_unlock_irqrestore(&p->siglock, flags);
		break; /* one frame per return; the next signal is taken on the next one */
	}
	/* Interrupted, and no handler ran: the call goes on as if nothing happened. */
	if (restart == -ERESTARTSYS)
		arch_syscall_restart(regs);
	if (p->restore_blocked) {
		unsigned long flags = spin_lock_irqsave(&p->siglock);
		p->blocked = p->saved_blocked;
		p->restore_blocked = false;
		signal_recalc_locked(p);
		spin_unlock_irqrestore(&p->siglock, flags);
	}
}

void signal_restore_after_handler(struct process *p, ksigset_t old)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	p->saved_blocked = old;
	p->restore_blocked = true;
	spin_unlock_irqrestore(&p->siglock, flags);
}

int signal_suspend(ksigset_t mask)
{
	struct process *p = current_process();
	signal_restore_after_handler(p, signal_blocked(p));
	signal_set_blocked(p, mask);
	/* Nothing wakes it but a signal: the queue is its own and no one wakes it. */
	static DEFINE_WAIT_QUEUE_HEAD(suspend_wq);
	wait_event_interruptible(suspend_wq, false);
	return -EINTR;
}

void signal_exec_reset(struct process *p)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	for (int i = 0; i < NSIG; i++) {
		struct ksigaction *ka = &p->sigactions[i];
		/* A handler's address means nothing in the new program; SIG_IGN carries over. */
		if (ka->handler != SIG_IGN)
			*ka = (struct ksigaction){.handler = SIG_DFL};
	}
	spin_unlock_irqrestore(&p->siglock, flags);
}

/* Copy the parent's dispositions and mask into a new child (nothing pending). */
void signal_fork(struct process *child, struct process *parent)
{
	unsigned long flags = spin_lock_irqsave(&parent->siglock);
	memcpy(child->sigactions, parent->sigactions, sizeof(child->sigactions));
	child->blocked = parent->blocked;
	spin_unlock_irqrestore(&parent->siglock, flags);
}

/* The mask and pending set, as rt_sigprocmask and rt_sigpending see them. */
ksigset_t signal_blocked(struct process *p)
{
	return READ_ONCE(p->blocked);
}

ksigset_t signal_pending_set(struct process *p)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	ksigset_t s = p->pending & p->blocked;
	spin_unlock_irqrestore(&p->siglock, flags);
	return s;
}

void signal_set_blocked(struct process *p, ksigset_t mask)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	p->blocked = mask & ~SIG_UNCATCHABLE;
	signal_recalc_locked(p);
	spin_unlock_irqrestore(&p->siglock, flags);
}

int signal_action(struct process *p, int sig, const struct ksigaction *act, struct ksigaction *old)
{
	if (sig <= 0 || sig > NSIG || (act && (SIG_UNCATCHABLE & SIGBIT(sig))))
		return -EINVAL;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	if (old)
		*old = p->sigactions[sig - 1];
	if (act) {
		p->sigactions[sig - 1] = *act;
		p->sigactions[sig - 1].mask &= ~SIG_UNCATCHABLE;
		/* POSIX: setting a pending signal to be ignored discards it. */
		if (sig_ignored_locked(p, sig))
			p->pending &= ~SIGBIT(sig);
		signal_recalc_locked(p);
	}
	spin_unlock_irqrestore(&p->siglock, flags);
	return 0;
}

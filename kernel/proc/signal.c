/*
 * Signals of processes: sending (kill, the kernel's own), the process groups
 * kill and the terminal address, and delivery on the way back to user mode.
 *
 * A signal is sent to the process (kill, the terminal, SIGCHLD), for whichever
 * thread does not block it, or to one thread (a fault, tgkill, SIGPIPE); each
 * thread has its own mask. All of it is under the process's siglock. Standard
 * signals do not queue: a second SIGINT while one is pending is the same
 * pending bit, and the siginfo is the latest sender's. task->sigpending says
 * "pending and not blocked, or told to exit" for the thread, so that an
 * interruptible sleep (wait_event_interruptible) can check it in one load; it
 * is recomputed whenever pending or blocked change. A signal sent to the
 * process wakes every thread that does not block it (Linux wakes one): the
 * first to take it runs it, and the others' interrupted calls restart.
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

/* Recompute t's sigpending; its process's siglock held. */
static void signal_recalc_locked(struct thread *t)
{
	bool ready = ((t->pending | t->proc->pending) & ~t->blocked) || t->exiting;
	WRITE_ONCE(t->task->sigpending, ready);
}

/*
 * Is sig, sent to p (to thread t, or for the process with t its first thread), dropped?
 * An ignored signal is dropped when sent, unless blocked (it may be unignored
 * first); so is one init has left at its default action, SIGKILL included, as
 * Linux protects init. p's siglock held.
 */
static bool signal_dropped_locked(struct process *p, struct thread *t, int sig)
{
	return p->state == PROC_ZOMBIE || p->group_exit ||
	       (sig_ignored_locked(p, sig) && !(t->blocked & SIGBIT(sig))) ||
	       (p->unkillable && p->sigactions[sig - 1].handler == SIG_DFL);
}

void signal_send(struct process *p, int sig, const struct ksiginfo *info)
{
	if (sig <= 0 || sig > NSIG)
		return;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	/* Whether it is ignored while blocked: the first thread's mask says, as Linux's leader's.
	 */
	struct thread *t =
	    list_empty(&p->threads) ? NULL : list_first_entry(&p->threads, struct thread, node);
	bool drop = !t || signal_dropped_locked(p, t, sig);
	if (!drop) {
		p->pending |= SIGBIT(sig);
		p->siginfo[sig - 1] = *info;
		list_for_each_entry(t, &p->threads, node) {
			signal_recalc_locked(t);
			/* wake_up_process() orders sigpending's store before its read of the state.
			 */
			if (!(t->blocked & SIGBIT(sig)))
				wake_up_process(t->task);
		}
	}
	spin_unlock_irqrestore(&p->siglock, flags);
}

void signal_send_thread(struct thread *t, int sig, const struct ksiginfo *info)
{
	struct process *p = t->proc;
	if (sig <= 0 || sig > NSIG)
		return;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	/* Gone from the list: it exited after the caller found it. */
	bool drop = list_empty(&t->node) || signal_dropped_locked(p, t, sig);
	if (!drop) {
		t->pending |= SIGBIT(sig);
		t->siginfo[sig - 1] = *info;
		signal_recalc_locked(t);
		wake_up_process(t->task);
	}
	spin_unlock_irqrestore(&p->siglock, flags);
}

static void force(int sig, const struct ksiginfo *info, bool fatal)
{
	struct thread *t = current_thread();
	struct process *p = t->proc;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	struct ksigaction *ka = &p->sigactions[sig - 1];
	/* Blocked or ignored, it would never end: the default action takes over instead. */
	if (fatal || ka->handler == SIG_IGN || (t->blocked & SIGBIT(sig))) {
		ka->handler = SIG_DFL;
		t->blocked &= ~SIGBIT(sig);
	}
	t->pending |= SIGBIT(sig);
	t->siginfo[sig - 1] = *info;
	signal_recalc_locked(t);
	spin_unlock_irqrestore(&p->siglock, flags);
}

void signal_force(int sig, const struct ksiginfo *info)
{
	force(sig, info, false);
}

void signal_force_fatal(int sig, const struct ksiginfo *info)
{
	force(sig, info, true);
}

bool signal_handled(int sig)
{
	struct thread *t = current_thread();
	struct process *p = t->proc;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	bool handled = p->sigactions[sig - 1].handler > SIG_IGN && !(t->blocked & SIGBIT(sig));
	spin_unlock_irqrestore(&p->siglock, flags);
	return handled;
}

/*
 * The lowest signal pending for t and not blocked, its own before the
 * process's (a fault's signal first, as Linux), taken off its pending set with
 * its info; 0 if none.
 */
static int signal_dequeue(struct thread *t, struct ksiginfo *info, struct ksigaction *ka)
{
	struct process *p = t->proc;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	ksigset_t *set = &t->pending;
	struct ksiginfo *infos = t->siginfo;
	if (!(*set & ~t->blocked)) {
		set = &p->pending;
		infos = p->siginfo;
	}
	ksigset_t ready = *set & ~t->blocked;
	int sig = ready ? __builtin_ctzll(ready) + 1 : 0;
	if (sig) {
		*set &= ~SIGBIT(sig);
		*info = infos[sig - 1];
		*ka = p->sigactions[sig - 1];
		if (ka->handler > SIG_IGN && (ka->flags & SA_RESETHAND))
			p->sigactions[sig - 1].handler = SIG_DFL;
	}
	if (set == &p->pending) {
		/* Taken for the process: the other threads it woke need not look for it. */
		struct thread *o;
		list_for_each_entry(o, &p->threads, node)
			signal_recalc_locked(o);
	}
	signal_recalc_locked(t);
	spin_unlock_irqrestore(&p->siglock, flags);
	return sig;
}

/* The calling thread has been told to exit (exit_group, a fatal signal, exec)? */
static bool signal_told_to_exit(struct thread *t)
{
	unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
	bool exiting = t->exiting;
	spin_unlock_irqrestore(&t->proc->siglock, flags);
	return exiting;
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
	struct thread *t = current_thread();
	struct process *p = t->proc;
	struct ksiginfo info;
	struct ksigaction ka;
	int sig;

	if (signal_told_to_exit(t))
		thread_exit(0); /* the status is the group's, or exec goes on without it */
	while ((sig = signal_dequeue(t, &info, &ka))) {
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
		ksigset_t old = t->restore_blocked ? t->saved_blocked : t->blocked;
		spin_unlock_irqrestore(&p->siglock, flags);
		if (arch_signal_frame_setup(regs, sig, &ka, &uinfo, old))
			proc_exit(SIGSEGV); /* no room for the frame: Linux forces SIGSEGV */
		flags = spin_lock_irqsave(&p->siglock);
		t->blocked = old | ka.mask | ((ka.flags & SA_NODEFER) ? 0 : SIGBIT(sig));
		t->blocked &= ~SIG_UNCATCHABLE;
		t->restore_blocked = false;
		signal_recalc_locked(t);
		spin_unlock_irqrestore(&p->siglock, flags);
		break; /* one frame per return; the next signal is taken on the next one */
	}
	/* Interrupted, and no handler ran: the call goes on as if nothing happened. */
	if (restart == -ERESTARTSYS)
		arch_syscall_restart(regs);
	if (t->restore_blocked) {
		unsigned long flags = spin_lock_irqsave(&p->siglock);
		t->blocked = t->saved_blocked;
		t->restore_blocked = false;
		signal_recalc_locked(t);
		spin_unlock_irqrestore(&p->siglock, flags);
	}
}

void signal_restore_after_handler(ksigset_t old)
{
	struct thread *t = current_thread();
	unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
	t->saved_blocked = old;
	t->restore_blocked = true;
	spin_unlock_irqrestore(&t->proc->siglock, flags);
}

/* Is a signal pending for t and not blocked (sigpending recomputed, not as last set)? */
static bool signal_ready(struct thread *t)
{
	unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
	signal_recalc_locked(t);
	bool ready = READ_ONCE(t->task->sigpending);
	spin_unlock_irqrestore(&t->proc->siglock, flags);
	return ready;
}

int signal_suspend(ksigset_t mask)
{
	signal_restore_after_handler(signal_blocked());
	signal_set_blocked(mask);
	/* Nothing wakes it but a signal: the queue is its own and no one wakes it. */
	static DEFINE_WAIT_QUEUE_HEAD(suspend_wq);
	/* A signal for the process that another thread took first leaves it asleep. */
	do
		wait_event_interruptible(suspend_wq, false);
	while (!signal_ready(current_thread()));
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

void signal_fork(struct process *child, struct thread *first)
{
	struct thread *self = current_thread();
	struct process *parent = self->proc;
	unsigned long flags = spin_lock_irqsave(&parent->siglock);
	memcpy(child->sigactions, parent->sigactions, sizeof(child->sigactions));
	first->blocked = self->blocked;
	spin_unlock_irqrestore(&parent->siglock, flags);
}

/* The mask and pending set, as rt_sigprocmask and rt_sigpending see them. */
ksigset_t signal_blocked(void)
{
	return READ_ONCE(current_thread()->blocked);
}

ksigset_t signal_pending_set(void)
{
	struct thread *t = current_thread();
	unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
	ksigset_t s = (t->pending | t->proc->pending) & t->blocked;
	spin_unlock_irqrestore(&t->proc->siglock, flags);
	return s;
}

void signal_set_blocked(ksigset_t mask)
{
	struct thread *t = current_thread();
	unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
	t->blocked = mask & ~SIG_UNCATCHABLE;
	signal_recalc_locked(t);
	spin_unlock_irqrestore(&t->proc->siglock, flags);
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
		/* POSIX: setting a pending signal to be ignored discards it, in every thread. */
		if (sig_ignored_locked(p, sig)) {
			struct thread *t;
			p->pending &= ~SIGBIT(sig);
			list_for_each_entry(t, &p->threads, node) {
				t->pending &= ~SIGBIT(sig);
				signal_recalc_locked(t);
			}
		}
	}
	spin_unlock_irqrestore(&p->siglock, flags);
	return 0;
}

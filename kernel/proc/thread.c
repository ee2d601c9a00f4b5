/*
 * Threads of a process: clone() with CLONE_THREAD, a thread's exit, the end of
 * every thread at exit_group() or a fatal signal, and exec's end of the
 * others (Linux's de_thread).
 *
 * A thread's struct task belongs to it alone: a thread that is not the last
 * to exit detaches its task (the reaper frees the stack once it is off the
 * CPU), and the last one is joined by whoever collects the zombie
 * (proc_teardown). So a program that starts and joins a million threads holds
 * the stacks of only those alive.
 *
 * To end the others, a thread marks them exiting under the process's siglock
 * and wakes them: each sees it as a pending signal, so an interruptible sleep
 * ends, a thread in user mode traps back at its next tick, and on its way
 * back to user mode it exits instead (signal_deliver()).
 */
#include <grace/address_space.h>
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/futex.h>
#include <grace/kthread.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/syscall.h>
#include <grace/uaccess.h>
#include "proc_internal.h"

struct thread *thread_alloc(struct process *p, int tid)
{
	struct thread *t = kzalloc(sizeof(*t));
	if (!t)
		return NULL;
	t->proc = p;
	t->tid = tid;
	list_init(&t->node);
	hlist_init_node(&t->tid_node);
	return t;
}

void thread_free(struct thread *t)
{
	kfree_rcu(t,
		  rcu); /* hashed for a moment by a failed thread_attach(): a lookup may hold it */
}

bool thread_attach(struct thread *t, struct task *task)
{
	struct process *p = t->proc;
	struct thread *creator = current_thread();
	t->task = task;
	/* Findable by tid before it is on the list: from there it may run and exit at once. */
	pid_hash_thread(t);
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	/*
	 * Not while the process exits, nor while another thread's exec waits for this
	 * one (the creator) to leave: the new thread would outlive that wait's check.
	 */
	bool ok = !p->group_exit && !(creator && creator->proc == p && creator->exiting);
	if (ok) {
		list_add_tail(&t->node, &p->threads);
		p->nr_threads++;
	}
	spin_unlock_irqrestore(&p->siglock, flags);
	if (!ok)
		pid_unhash_thread(t);
	return ok;
}

void thread_start(struct thread *t)
{
	current->proc = t->proc;
	current->thread = t;
}

int thread_user_start(void *arg)
{
	struct thread_start *cs = arg;
	struct regs regs = cs->regs;

	if (!cs->thread) {
		kfree(cs); /* the clone failed after this thread was made: it ends unrun */
		return 0;
	}
	thread_start(cs->thread);
	mm_switch(cs->thread->proc->mm);
	if (cs->settls)
		arch_set_user_tls(&regs, cs->tls);
	/* As Linux, a fault here is ignored: the program finds its tid unset. */
	if (cs->set_ctid)
		copy_to_user((void __user *)cs->set_ctid, &cs->thread->tid, sizeof(int));
	kfree(cs);
	arch_return_to_user(&regs);
}

long proc_clone_thread(const struct regs *regs, bool settls, uintptr_t tls, uintptr_t ptid,
		       uintptr_t ctid, bool set_ctid, bool clear_ctid)
{
	struct process *p = current_process();
	struct thread_start *cs = kzalloc(sizeof(*cs));
	struct thread *t = cs ? thread_alloc(p, pid_alloc()) : NULL;
	struct task *task = NULL;
	long err = -ENOMEM;

	if (!t)
		goto fail;
	cs->thread = t;
	cs->regs = *regs;
	syscall_set_return(&cs->regs, 0); /* the new thread's clone() returns 0 */
	cs->settls = settls;
	cs->tls = tls;
	cs->set_ctid = set_ctid ? ctid : 0;
	t->clear_child_tid = clear_ctid ? ctid : 0;
	t->blocked = signal_blocked();
	task = kthread_create(thread_user_start, cs, "%s", p->comm);
	if (!task)
		goto fail;
	set_cpus_allowed(task, &current->allowed); /* as Linux: the thread keeps our CPUs */
	if ((err = fs_task_share(task)))
		goto fail_task;
	arch_user_fork(task);
	if (ptid) {
		int tid = t->tid; /* as Linux, written before the thread runs; a fault is ignored */
		copy_to_user((void __user *)ptid, &tid, sizeof(tid));
	}
	/*
	 * Once attached, a signal or an exit_group may start the thread and it may be
	 * gone before the wake below: its tid is read first, and its task held.
	 */
	err = t->tid;
	task_get(task);
	if (!thread_attach(t, task)) {
		task_put(task);
		err = -EAGAIN; /* the process is exiting: this thread never runs */
		goto fail_task;
	}
	wake_up_process(task);
	task_put(task);
	return err;
fail_task:
	if (task->fs)
		fs_task_exit(task);
	cs->thread = NULL; /* it only frees cs and ends */
	kthread_stop(task);
	thread_free(t);
	return err;
fail:
	if (t)
		thread_free(t);
	kfree(cs);
	return err;
}

/* Mark every thread of p but self exiting and wake them. p's siglock held. */
static void thread_kill_others_locked(struct process *p, struct thread *self)
{
	struct thread *t;
	list_for_each_entry(t, &p->threads, node) {
		if (t == self)
			continue;
		t->exiting = true;
		WRITE_ONCE(t->task->sigpending, 1);
		wake_up_process(t->task);
	}
}

void proc_exit(int status)
{
	struct thread *self = current_thread();
	struct process *p = self->proc;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	/* The first to end the group sets its status; later ones only leave. */
	if (!p->group_exit) {
		p->group_exit = true;
		p->group_exit_status = status;
	}
	thread_kill_others_locked(p, self);
	spin_unlock_irqrestore(&p->siglock, flags);
	thread_exit(status);
}

void thread_exit(int status)
{
	struct thread *self = current_thread();
	struct process *p = self->proc;

	/* libc's join waits for this word to become 0: while the memory is still there. */
	if (self->clear_child_tid && p->mm) {
		u32 __user *word = (u32 __user *)self->clear_child_tid;
		int zero = 0;
		if (!copy_to_user(word, &zero, sizeof(zero)))
			futex_wake(word, 1, FUTEX_BITSET_ANY);
	}
	mm_switch(NULL);
	fs_task_exit(current);

	pid_unhash_thread(self);
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	list_del_init(&self->node);
	bool last = --p->nr_threads == 0;
	if (p->group_exit)
		status = p->group_exit_status;
	/* Under the lock: once it is dropped the last thread may end and p be freed. */
	wake_up(&p->thread_exited);
	spin_unlock_irqrestore(&p->siglock, flags);

	current->thread = NULL;
	kfree_rcu(self, rcu); /* tgkill may have found it under RCU */
	if (last)
		proc_teardown(status);
	kthread_detach(current);
	kthread_exit(0);
}

static bool proc_alone(struct process *p)
{
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	bool alone = p->nr_threads == 1;
	spin_unlock_irqrestore(&p->siglock, flags);
	return alone;
}

int proc_exec_alone(void)
{
	struct thread *self = current_thread();
	struct process *p = self->proc;
	unsigned long flags = spin_lock_irqsave(&p->siglock);
	bool exiting = p->group_exit || self->exiting;
	if (!exiting)
		thread_kill_others_locked(p, self);
	spin_unlock_irqrestore(&p->siglock, flags);
	if (exiting)
		return -EAGAIN;
	/* Uninterruptible: the others are leaving, and this thread is about to be all there is. */
	wait_event(p->thread_exited, proc_alone(p));
	if (self->tid != p->pid) {
		/* The thread that execs carries on as the process: its pid is now its tid. */
		pid_unhash_thread(self);
		/* Re-hashed at once, a lookup walking its old bucket would follow it into the new
		 * one. */
		synchronize_rcu();
		WRITE_ONCE(self->tid, p->pid);
		pid_hash_thread(self);
	}
	return 0;
}

int proc_tgkill(int tgid, int tid, int sig)
{
	struct process *self = current_process();
	struct ksiginfo info = {.code = SI_TKILL, .pid = self->pid};
	if (tid <= 0 || tgid < 0 || sig < 0 || sig > NSIG)
		return -EINVAL;
	rcu_read_lock();
	struct thread *t = pid_find_thread(tid);
	int err = t && (!tgid || t->proc->pid == tgid) ? 0 : -ESRCH;
	if (!err && sig)
		signal_send_thread(t, sig, &info);
	rcu_read_unlock();
	return err;
}

struct task *thread_task_get(int tid)
{
	struct task *task = NULL;
	rcu_read_lock();
	struct thread *t = pid_find_thread(tid);
	if (t) {
		/* Still on its process's list, it has not begun to exit: its task is alive. */
		unsigned long flags = spin_lock_irqsave(&t->proc->siglock);
		if (!list_empty(&t->node)) {
			task = t->task;
			task_get(task);
		}
		spin_unlock_irqrestore(&t->proc->siglock, flags);
	}
	rcu_read_unlock();
	return task;
}

/*
 * Processes: their creation from a program file or by fork, their end, their
 * collection by whoever waits for them, and the lookups kill and the process
 * groups need. See grace/process.h for the model and the locks.
 *
 * A process's first thread is a kernel thread whose function execs the
 * program (or, for fork's child, takes its parent's registers) and enters user
 * mode; it never returns from there. The last of its threads to exit
 * (kernel/proc/thread.c) calls proc_teardown(), which frees what the process
 * holds at once (its address space first, off this CPU), gives its children to
 * init or marks them orphans, sends its parent SIGCHLD, and leaves the struct
 * as a zombie.
 *
 * kill of one pid finds it in the pid hash (kernel/proc/pid.c); kill of a
 * process group and the group and session rules walk the list of processes
 * under proc_lock: O(processes), which a test run keeps small.
 */
#include <grace/address_space.h>
#include <grace/arch.h>
#include <grace/completion.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/syscall.h>
#include <grace/uaccess.h>
#include <grace/uapi/wait.h>
#include "proc_internal.h"

static DEFINE_SPINLOCK(proc_lock);
static unsigned nr_processes;	     /* under proc_lock */
static LIST_HEAD(orphan_zombies);    /* under proc_lock: exited, nobody to collect them */
static LIST_HEAD(all_processes);     /* under proc_lock: every process until it is freed */
static struct process *init_process; /* under proc_lock: what init= started, while it lives */

struct process *current_process(void)
{
	return current->proc;
}

unsigned proc_count(void)
{
	return READ_ONCE(nr_processes);
}

/*
 * A new process named comm with the next pid, counted, and its first thread
 * (*first, with the pid as its tid), neither started; NULL on ENOMEM.
 */
static struct process *proc_alloc(const char *comm, struct thread **first)
{
	struct process *p = kzalloc(sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid_alloc();
	*first = thread_alloc(p, p->pid);
	if (!*first) {
		kfree(p);
		return NULL;
	}
	list_init(&p->children);
	list_init(&p->sibling);
	list_init(&p->threads);
	hlist_init_node(&p->pid_node);
	wait_queue_init(&p->child_exit);
	wait_queue_init(&p->exited);
	wait_queue_init(&p->thread_exited);
	mutex_init(&p->brk_lock);
	p->umask = 022;
	strlcpy(p->comm, comm, sizeof(p->comm));
	spin_lock_init(&p->siglock);
	/* Its own group and session until setpgid, setsid or fork says otherwise. */
	p->pgid = p->sid = p->pid;
	spin_lock(&proc_lock);
	nr_processes++;
	list_add_tail(&p->all, &all_processes);
	spin_unlock(&proc_lock);
	return p;
}

/* p's first thread runs from now: kill and wait4 may find it. proc_lock held. */
static void proc_started_locked(struct process *p)
{
	p->started = true;
	pid_hash_process(p);
}

/* Uncount p and take it off the list and the hash (its pid is never reused). */
static void proc_unhash(struct process *p)
{
	spin_lock(&proc_lock);
	nr_processes--;
	list_del_init(&p->all);
	pid_unhash_process(p);
	spin_unlock(&proc_lock);
}

/* Free a zombie nobody else can reach, once its last thread has finished leaving. */
static void proc_free(struct process *p)
{
	proc_unhash(p); /* first: nothing finds it once its task is gone */
	kthread_join(p->exit_task);
	kfree_rcu(p, rcu); /* a lookup under RCU may still hold it */
}

/* A process that never started: its first thread never ran. */
static void proc_free_unstarted(struct process *p, struct thread *first)
{
	proc_unhash(p);
	thread_free(first);
	kfree(p);
}

/* What the new thread needs to exec, on the spawner's stack until it is done with it. */
struct spawn_args {
	struct thread *thread;
	const char *path;
	char *const *argv, *const *envp;
	int err;		/* exec's result, for the spawner */
	struct completion done; /* completed once err is set: a completion, as the spawner's
				   stack frame goes as soon as it sees it */
};

/* Descriptors 0, 1 and 2 on the console, as init gets them. */
static int proc_open_console(void)
{
	int fd = vfs_open("/dev/console", O_RDWR, 0);
	if (fd < 0)
		return fd;
	if (fd != 0 || vfs_dup(0) != 1 || vfs_dup(0) != 2)
		return -EBADF;
	return 0;
}

static int proc_thread(void *arg)
{
	struct spawn_args *sa = arg;
	struct process *p = sa->thread->proc;
	uintptr_t pc = 0, sp = 0;

	thread_start(sa->thread);
	int err = proc_open_console();
	if (!err)
		err = exec_load(p, sa->path, (struct exec_vec){.kernel = sa->argv},
				(struct exec_vec){.kernel = sa->envp}, &pc, &sp);
	sa->err = err;
	complete(&sa->done); /* orders err before the spawner's return from the wait */
	if (err)
		proc_exit(SIGKILL); /* the spawner reports err and collects us */
	/* sa belongs to the spawner from here: it may be gone. */
	arch_enter_user(pc, sp);
}

struct process *proc_spawn(const char *path, char *const argv[], char *const envp[], int *err)
{
	const char *name = strrchr(path, '/');
	struct thread *first;
	struct process *p = proc_alloc(name ? name + 1 : path, &first);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	struct spawn_args sa = {.thread = first, .path = path, .argv = argv, .envp = envp};
	completion_init(&sa.done);
	struct task *t = kthread_create(proc_thread, &sa, "%s", p->comm);
	if (!t) {
		*err = -ENOMEM;
		proc_free_unstarted(p, first);
		return NULL;
	}
	thread_attach(first, t);
	spin_lock(&proc_lock);
	proc_started_locked(p);
	spin_unlock(&proc_lock);
	wake_up_process(t);
	wait_for_completion(&sa.done);
	if (sa.err) {
		*err = sa.err;
		proc_wait(p);
		return NULL;
	}
	return p;
}

/*
 * Who collects the calling process's children once it is gone: the first
 * process (init=), as on Linux, or nobody when it is the one exiting or there
 * is none (a program run from the prompt): such children are freed as soon as
 * they exit. Called with proc_lock held.
 */
static void proc_reparent_children_locked(struct process *p)
{
	struct process *init = init_process != p ? init_process : NULL;
	struct process *c, *tmp;
	list_for_each_entry_safe(c, tmp, &p->children, sibling) {
		list_del_init(&c->sibling);
		WRITE_ONCE(c->parent, init); /* getppid reads it under RCU alone */
		c->orphaned = !init;
		if (init)
			list_add_tail(&c->sibling, &init->children);
		if (c->state == PROC_ZOMBIE && !init)
			list_add_tail(&c->sibling, &orphan_zombies);
		else if (c->state == PROC_ZOMBIE)
			wake_up(&init->child_exit);
	}
}

void proc_make_init(struct process *p)
{
	spin_lock(&proc_lock);
	init_process = p;
	p->unkillable = true; /* as Linux's SIGNAL_UNKILLABLE: only signals it handles reach it */
	spin_unlock(&proc_lock);
}

/* Free zombies no process will collect. Their threads are gone or going: join them. */
static void proc_reap_orphans(void)
{
	for (;;) {
		spin_lock(&proc_lock);
		struct process *z =
		    list_empty(&orphan_zombies)
			? NULL
			: list_first_entry(&orphan_zombies, struct process, sibling);
		if (z)
			list_del_init(&z->sibling);
		spin_unlock(&proc_lock);
		if (!z)
			return;
		proc_free(z);
	}
}

void proc_teardown(int status)
{
	struct process *p = current->proc;
	struct mm *mm = p->mm;

	/* A vfork child leaves its parent's address space to the parent. */
	if (p->mm_borrowed) {
		proc_vfork_release(p);
		mm = NULL;
	}
	/* No thread runs on it now (thread_exit() left it): nothing may run on freed tables. */
	if (mm)
		mm_destroy(mm);
	proc_reap_orphans();

	spin_lock(&proc_lock);
	p->exit_task = current;
	p->mm = NULL;
	p->exit_status = status;
	p->state = PROC_ZOMBIE;
	proc_reparent_children_locked(p);
	if (init_process == p)
		init_process = NULL;
	struct process *parent = p->parent;
	/* Nobody will collect an orphan: the next exit or proc_wait() frees it. */
	if (p->orphaned)
		list_add_tail(&p->sibling, &orphan_zombies);
	/* Spawned from the kernel (parent NULL): proc_wait() collects it through p->exited. */
	if (parent) {
		struct ksiginfo info = {.code = (status & 0x7f) ? CLD_KILLED : CLD_EXITED,
					.pid = p->pid,
					.status =
					    (status & 0x7f) ? status & 0x7f : (status >> 8) & 0xff};
		signal_send(parent, SIGCHLD, &info);
		wake_up(&parent->child_exit);
	}
	wake_up(&p->exited);
	spin_unlock(&proc_lock);
	kthread_exit(status);
}

static bool proc_is_zombie(struct process *p)
{
	spin_lock(&proc_lock);
	bool z = p->state == PROC_ZOMBIE;
	spin_unlock(&proc_lock);
	return z;
}

int proc_wait(struct process *p)
{
	wait_event(p->exited, proc_is_zombie(p));
	int status = p->exit_status;
	proc_free(p);
	proc_reap_orphans(); /* its children that ended after it, if nothing else exits */
	return status;
}

void proc_vfork_release(struct process *p)
{
	if (p->vfork_done)
		complete(p->vfork_done);
	p->vfork_done = NULL;
	p->mm_borrowed = false;
	p->mm = NULL;
}

long proc_fork(const struct regs *regs, uintptr_t set_child_tid, uintptr_t clear_child_tid,
	       bool share_mm, bool vfork_wait)
{
	struct completion vfork_done;
	struct process *parent = current_process();
	struct thread *first;
	int err = -ENOMEM;
	struct process *p = proc_alloc(parent->comm, &first);
	if (!p)
		return -ENOMEM;
	struct thread_start *ts = kzalloc(sizeof(*ts));
	if (!ts)
		goto fail;
	ts->thread = first;
	ts->regs = *regs;
	syscall_set_return(&ts->regs, 0); /* the child's fork() returns 0 */
	ts->set_ctid = set_child_tid;
	first->clear_child_tid = clear_child_tid;
	if (share_mm) {
		p->mm = parent->mm;
		p->mm_borrowed = true;
	} else if (!(p->mm = mm_fork(parent->mm, &err))) {
		goto fail;
	}
	if (vfork_wait) {
		completion_init(&vfork_done);
		p->vfork_done = &vfork_done;
	}
	mutex_lock(&parent->brk_lock);
	p->brk_start = parent->brk_start;
	p->brk = parent->brk;
	mutex_unlock(&parent->brk_lock);
	p->mmap_base = parent->mmap_base;
	p->umask = parent->umask;
	p->sigreturn_tramp = parent->sigreturn_tramp;
	signal_fork(p, first);
	struct task *t = kthread_create(thread_user_start, ts, "%s", p->comm);
	if (!t) {
		err = -ENOMEM;
		goto fail;
	}
	set_cpus_allowed(t, &current->allowed); /* as Linux: the child keeps our CPUs */
	if ((err = fs_task_fork(t))) {
		/* It must not reach user mode without descriptors: it ends unrun. */
		ts->thread = NULL;
		kthread_stop(t);
		ts = NULL; /* freed by the thread */
		goto fail;
	}
	arch_user_fork(t);
	/* Findable from here, it may be killed and collected before the wake below. */
	task_get(t);
	thread_attach(first, t);
	spin_lock(&proc_lock);
	WRITE_ONCE(p->parent, parent);
	p->pgid = parent->pgid;
	p->sid = parent->sid;
	list_add_tail(&p->sibling, &parent->children);
	proc_started_locked(p);
	spin_unlock(&proc_lock);
	int pid = p->pid;
	wake_up_process(t);
	task_put(t);
	/* p may be gone once it has exec'd or exited: its pid was read before. */
	if (vfork_wait)
		wait_for_completion(&vfork_done);
	return pid;
fail:
	if (p->mm && !p->mm_borrowed)
		mm_destroy(p->mm);
	kfree(ts);
	proc_free_unstarted(p, first);
	return err;
}

/* Does wait4's pid select child c of p: > 0 that pid, -1 any, 0 p's group, < -1 group -pid? */
static bool proc_wait_selects(struct process *p, struct process *c, int pid)
{
	return pid > 0	   ? c->pid == pid
	       : pid == -1 ? true
	       : pid == 0  ? c->pgid == p->pgid
			   : c->pgid == -pid;
}

/* A zombie child of p that pid selects (-1 any, > 0 that one), unlinked; NULL if none. */
static struct process *proc_take_zombie_locked(struct process *p, int pid, bool *any)
{
	struct process *c;
	*any = false;
	list_for_each_entry(c, &p->children, sibling) {
		if (!proc_wait_selects(p, c, pid))
			continue;
		*any = true;
		if (c->state == PROC_ZOMBIE) {
			list_del_init(&c->sibling);
			return c;
		}
	}
	return NULL;
}

/* Has a child that pid selects exited, or is there none left to wait for? */
static bool proc_child_exited(struct process *p, int pid)
{
	struct process *c;
	bool found = false, any = false;
	spin_lock(&proc_lock);
	list_for_each_entry(c, &p->children, sibling) {
		if (!proc_wait_selects(p, c, pid))
			continue;
		any = true;
		if (c->state == PROC_ZOMBIE)
			found = true;
	}
	spin_unlock(&proc_lock);
	return found || !any;
}

long proc_wait4(int pid, int *status, unsigned options)
{
	struct process *p = current_process();
	struct process *z;
	bool any;

	if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WALL | __WCLONE))
		return -EINVAL;
	for (;;) {
		spin_lock(&proc_lock);
		z = proc_take_zombie_locked(p, pid, &any);
		spin_unlock(&proc_lock);
		if (z || !any || (options & WNOHANG))
			break;
		/* A child's exit wakes child_exit after making itself a zombie under proc_lock. */
		if (wait_event_interruptible(p->child_exit, proc_child_exited(p, pid)))
			return -ERESTARTSYS;
	}
	if (!z)
		return any ? 0 : -ECHILD;
	int zpid = z->pid;
	*status = z->exit_status;
	proc_free(z);
	return zpid;
}

/*
 * The process with pid (a zombie too), or NULL. proc_lock held: it stays
 * hashed, and so alive, until that is dropped.
 */
static struct process *proc_find_locked(int pid)
{
	rcu_read_lock();
	struct process *p = pid_find_process(pid);
	rcu_read_unlock();
	return p;
}

int proc_kill(int pid, int sig, int code)
{
	struct process *self = current_process(), *p;
	struct ksiginfo info = {.code = code, .pid = self ? self->pid : 0};
	int found = 0;

	if (sig < 0 || sig > NSIG)
		return -EINVAL;
	if (pid > 0) {
		/* One process: found under RCU, no global lock. */
		rcu_read_lock();
		p = pid_find_process(pid);
		if (!p) {
			/* A tid names its process too, as on Linux. */
			struct thread *t = pid_find_thread(pid);
			p = t ? t->proc : NULL;
		}
		if (p && sig)
			signal_send(p, sig, &info);
		rcu_read_unlock();
		return p ? 0 : -ESRCH;
	}
	spin_lock(&proc_lock);
	{
		int pgid = pid == 0 ? (self ? self->pgid : 0) : -pid;
		list_for_each_entry(p, &all_processes, all) {
			if (!p->started)
				continue;
			if (pid == -1 ? (p == self || p == init_process) : p->pgid != pgid)
				continue;
			found++;
			if (sig)
				signal_send(p, sig, &info);
		}
	}
	spin_unlock(&proc_lock);
	return found ? 0 : -ESRCH;
}

/*
 * No lock: the parent is read under RCU, as Linux reads real_parent. A parent
 * that exits hands its children to init (a store under proc_lock) before it can
 * be collected, and is freed a grace period after that (kfree_rcu), so the
 * parent seen here is whole until rcu_read_unlock().
 */
int proc_getppid(void)
{
	rcu_read_lock();
	struct process *parent = READ_ONCE(current_process()->parent);
	int ppid = parent ? parent->pid : 0; /* started by the kernel, as init is */
	rcu_read_unlock();
	return ppid;
}

int proc_getsid(int pid)
{
	struct process *self = current_process();
	spin_lock(&proc_lock);
	struct process *p = pid ? proc_find_locked(pid) : self;
	int sid = p ? p->sid : -ESRCH;
	spin_unlock(&proc_lock);
	return sid;
}

int proc_getpgid(int pid)
{
	struct process *self = current_process();
	spin_lock(&proc_lock);
	struct process *p = pid ? proc_find_locked(pid) : self;
	int pgid = p ? p->pgid : -ESRCH;
	spin_unlock(&proc_lock);
	return pgid;
}

/* Is there a process of group pgid in session sid? proc_lock held. */
static bool proc_group_in_session_locked(int pgid, int sid)
{
	struct process *p;
	list_for_each_entry(p, &all_processes, all)
		if (p->pgid == pgid && p->sid == sid && p->started)
			return true;
	return false;
}

int proc_setpgid(int pid, int pgid)
{
	struct process *self = current_process();
	int err = 0;

	if (pgid < 0)
		return -EINVAL;
	spin_lock(&proc_lock);
	struct process *p = pid ? proc_find_locked(pid) : self;
	/* Linux's order of checks (kernel/sys.c): only itself or a child of its own. */
	if (!p || (p != self && p->parent != self))
		err = -ESRCH;
	else if (p != self && p->sid != self->sid)
		err = -EPERM;
	else if (p->sid == p->pid)
		err = -EPERM; /* a session leader stays in its group */
	else {
		if (!pgid)
			pgid = p->pid;
		if (pgid != p->pid && !proc_group_in_session_locked(pgid, self->sid))
			err = -EPERM;
		else
			p->pgid = pgid;
	}
	spin_unlock(&proc_lock);
	return err;
}

int proc_setsid(void)
{
	struct process *self = current_process(), *p;
	int ret;
	spin_lock(&proc_lock);
	/* A group leader, or a pid some group already uses, cannot start a session. */
	bool taken = false;
	list_for_each_entry(p, &all_processes, all)
		if (p->pgid == self->pid && p->started)
			taken = true;
	if (self->pgid == self->pid || taken)
		ret = -EPERM;
	else
		ret = self->pgid = self->sid = self->pid;
	spin_unlock(&proc_lock);
	return ret;
}

/*
 * Processes: their creation from a program file, their end, and their
 * collection by whoever waits for them. See grace/process.h for the model.
 *
 * A process's thread is a kernel thread whose function execs the program and
 * enters user mode; it never returns from there. It leaves through
 * proc_exit(), from exit_group() or a fatal signal, which frees what the
 * process holds at once (its address space first, off this CPU) and leaves
 * the struct process as a zombie for proc_wait().
 *
 * Pids count up from 1 and are not reused while the kernel runs: 2^31 spawns
 * is far beyond a test run.
 */
#include <grace/address_space.h>
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "proc_internal.h"

static DEFINE_SPINLOCK(proc_lock);
static int next_pid = 1;      /* under proc_lock */
static unsigned nr_processes; /* under proc_lock */

struct process *current_process(void)
{
	return current->proc;
}

unsigned proc_count(void)
{
	return READ_ONCE(nr_processes);
}

/* What the new thread needs to exec, freed by it once exec has copied it out. */
struct spawn_args {
	struct process *proc;
	char *path;
	char **argv, **envp;
	int err;		     /* exec's result, for the spawner */
	struct wait_queue_head done; /* woken once err is set */
	bool started;
};

/* Descriptors 0, 1 and 2 on the console, as init gets them. */
static int proc_open_console(void)
{
	int fd = sys_open("/dev/console", O_RDWR, 0);
	if (fd < 0)
		return fd;
	if (fd != 0 || sys_dup(0) != 1 || sys_dup(0) != 2)
		return -EBADF;
	return 0;
}

static int proc_thread(void *arg)
{
	struct spawn_args *sa = arg;
	struct process *p = sa->proc;
	uintptr_t pc = 0, sp = 0;

	current->proc = p;
	int err = proc_open_console();
	if (!err)
		err = exec_load(p, sa->path, sa->argv, sa->envp, &pc, &sp);
	WRITE_ONCE(sa->err, err);
	smp_store_release(&sa->started, true);
	wake_up(&sa->done);
	if (err)
		proc_exit(SIGKILL); /* the spawner reports err and collects us */
	/* sa belongs to the spawner from here: it may be gone. */
	arch_enter_user(pc, sp);
}

struct process *proc_spawn(const char *path, char *const argv[], char *const envp[], int *err)
{
	struct process *p = kzalloc(sizeof(*p));
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	list_init(&p->children);
	list_init(&p->sibling);
	wait_queue_init(&p->child_exit);
	wait_queue_init(&p->exited);
	p->umask = 022;
	const char *name = strrchr(path, '/');
	strlcpy(p->comm, name ? name + 1 : path, sizeof(p->comm));

	spin_lock(&proc_lock);
	p->pid = next_pid++;
	nr_processes++;
	spin_unlock(&proc_lock);

	struct spawn_args sa = {
	    .proc = p, .path = (char *)path, .argv = (char **)argv, .envp = (char **)envp};
	wait_queue_init(&sa.done);
	struct task *t = kthread_create(proc_thread, &sa, "%s", p->comm);
	if (!t) {
		*err = -ENOMEM;
		spin_lock(&proc_lock);
		nr_processes--;
		spin_unlock(&proc_lock);
		kfree(p);
		return NULL;
	}
	p->task = t;
	wake_up_process(t);
	/* Until exec is done, sa (on this stack) holds the thread's arguments. */
	wait_event(sa.done, smp_load_acquire(&sa.started));
	if (sa.err) {
		*err = sa.err;
		proc_wait(p);
		return NULL;
	}
	return p;
}

void proc_exit(int status)
{
	struct process *p = current->proc;
	struct mm *mm = p->mm;

	/* Off the address space before it goes: nothing may run on freed tables. */
	mm_switch(NULL);
	if (mm)
		mm_destroy(mm);
	fs_task_exit(current);

	spin_lock(&proc_lock);
	p->mm = NULL;
	p->exit_status = status;
	p->state = PROC_ZOMBIE;
	struct process *parent = p->parent;
	spin_unlock(&proc_lock);
	if (parent)
		wake_up(&parent->child_exit);
	wake_up(&p->exited);
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
	/* Its thread may still be on its way out of kthread_exit(): join it. */
	kthread_join(p->task);
	spin_lock(&proc_lock);
	nr_processes--;
	spin_unlock(&proc_lock);
	int status = p->exit_status;
	kfree(p);
	return status;
}

/*
 * User processes (kernel/proc/): a process is an address space, a descriptor
 * table and current directory, signal handlers, a pid, a parent and an exit
 * status, run by one or more threads (struct thread). Each thread is a kernel
 * thread (struct task) that entered user mode with arch_enter_user(); its
 * kernel stack serves its system calls and traps, and it has its own thread
 * id, signal mask and signals sent to it alone.
 *
 * Lifetime: proc_spawn() (the kernel's `run` and init=) or proc_fork() makes
 * the process and its first thread; clone() with CLONE_THREAD adds threads
 * (kernel/proc/thread.c). A thread's exit() ends only that thread;
 * exit_group() (or a fatal signal) tells every thread to exit. The last thread
 * out tears down the address space and descriptors and leaves a zombie: the
 * struct with its exit status, until it is collected: by its parent's wait4(),
 * by proc_wait() for one the kernel started, or, once orphaned with no init to
 * take it, by the next exit. Collecting frees it, after a grace period: pids
 * are looked up under RCU.
 *
 * Locks (outermost first): proc_lock protects the pid counter, the list of
 * processes, every parent/children link, process groups and sessions, state and
 * exit_status (written once by the exiting thread before it wakes the
 * waiters); a process's siglock its signal state and its list of threads
 * (kernel/proc/signal.c). brk_lock the heap's bounds. Everything else is set
 * when the process is made or by exec, which runs with no other thread left.
 */
#ifndef GRACE_PROCESS_H
#define GRACE_PROCESS_H

#include <grace/list.h>
#include <grace/mutex.h>
#include <grace/rculist.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/spinlock.h>
#include <grace/types.h>
#include <grace/wait.h>

struct completion;
struct mm;
struct regs;
struct task;

/* What a pending signal's siginfo will say (one per signal: standard signals do not queue). */
struct ksiginfo {
	s32 code;   /* si_code */
	s32 pid;    /* the sender, or the child for SIGCHLD */
	s32 status; /* SIGCHLD: exit code or signal */
	u64 addr;   /* a fault's address */
};

/*
 * A thread of a user process. The process's first thread has the process's pid
 * as its tid; the others take the next pids. Freed when it exits.
 */
struct thread {
	struct task *task;
	struct process *proc;
	int tid;
	struct list_head node;	    /* on proc->threads, under proc->siglock */
	struct hlist_node tid_node; /* in the tid hash (kernel/proc/pid.c) */
	struct rcu_head rcu;
	uintptr_t clear_child_tid; /* zeroed and futex-woken at exit (CLONE_CHILD_CLEARTID) */
	bool exiting; /* under siglock: told to exit (exit_group, a fatal signal, exec) */

	/* Its signal state, under proc->siglock (kernel/proc/signal.c). */
	ksigset_t blocked;	 /* its mask */
	ksigset_t pending;	 /* sent to this thread: faults, tgkill, SIGPIPE */
	ksigset_t saved_blocked; /* rt_sigsuspend's caller's mask, for the handler's frame */
	bool restore_blocked;	 /* saved_blocked is to be restored once a handler is set up */
	struct ksiginfo siginfo[NSIG]; /* who sent each signal pending for it */
};

enum proc_state {
	PROC_RUNNING,
	PROC_ZOMBIE, /* exited; exit_status valid, waiting to be collected */
};

struct process {
	int pid;
	enum proc_state state;	/* under proc_lock */
	int exit_status;	/* wait4's status word: code << 8, or the signal number */
	struct process *parent; /* written under proc_lock, read under it or RCU; NULL: a kernel
				 * thread waits for it, or orphaned */
	bool orphaned;		/* under proc_lock: its parent exited and no init took it */
	bool unkillable;	/* init: a signal left at its default action does not reach it */
	struct list_head children, sibling; /* under proc_lock */
	struct wait_queue_head child_exit;  /* woken when one of its children exits */
	struct wait_queue_head exited;	    /* woken when it exits (its kernel waiter) */
	bool started;			    /* under proc_lock: its first thread exists */
	struct task *exit_task;		    /* the last thread out, which proc_free() joins */
	struct list_head all;		    /* on the list of processes, under proc_lock */
	struct hlist_node pid_node;	    /* in the pid hash: under proc_lock, read under RCU */
	struct rcu_head rcu;
	struct mm *mm;	  /* its address space; NULL once it exited */
	bool mm_borrowed; /* vfork's child: mm is its parent's until it execs or exits */
	struct completion *vfork_done; /* completed when it execs or exits: its parent waits */
	struct mutex brk_lock;	       /* brk_start and brk, against threads' concurrent brk() */
	uintptr_t brk_start, brk;      /* the heap: [brk_start, brk), mapped to page ends */
	uintptr_t mmap_base;	       /* mmap() without a hint searches below this */
	unsigned umask;
	char comm[16]; /* the program's file name, for the console and ps */
	int pgid;      /* process group: under proc_lock; its own pid, or its parent's group */
	int sid;       /* session: under proc_lock */
	uintptr_t sigreturn_tramp; /* where exec mapped arch_sigreturn_code, or 0 */

	/* Signals (kernel/proc/signal.c): siglock protects these; senders take it with irqs off. */
	spinlock_t siglock;
	struct ksigaction sigactions[NSIG];
	ksigset_t pending; /* sent to the process, for any thread that does not block it */
	struct ksiginfo siginfo[NSIG]; /* who sent each pending signal, and why */
	struct list_head threads;      /* its live threads */
	unsigned nr_threads;
	bool group_exit;		      /* every thread has been told to exit ... */
	int group_exit_status;		      /* ... and this is the process's wait status */
	struct wait_queue_head thread_exited; /* woken as each thread leaves (exec waits) */
};

/* The calling thread's process, or NULL in a kernel thread. */
struct process *current_process(void);
/* The calling user thread, or NULL in a kernel thread. */
static inline struct thread *current_thread(void)
{
	return current->thread;
}

/*
 * Start path as a new process, argv and envp (NULL-terminated arrays of kernel
 * strings) its arguments and environment, descriptors 0-2 on the console. The
 * new process, or NULL with *err set (-ENOENT, -EACCES, -ENOEXEC, -E2BIG,
 * -ENOMEM: what execve() would fail with). The program may still fail later,
 * in the new thread, for want of memory; it then exits with SIGKILL's status.
 */
struct process *proc_spawn(const char *path, char *const argv[], char *const envp[], int *err);

/*
 * Wait for a process that proc_spawn() started (parent NULL) to exit, free it,
 * and return its wait status (exit code << 8, or the terminating signal).
 */
int proc_wait(struct process *p);

/*
 * exit_group(): end the calling process with the wait status status (exit code
 * << 8 | signal), unless another thread ended it first: every other thread is
 * told to exit, and the last one out frees the address space and descriptors;
 * the struct goes when it is collected.
 */
void __noreturn proc_exit(int status);

/* p (spawned by init=) collects orphans from now until it exits. */
void proc_make_init(struct process *p);

/*
 * With init=PATH on the command line: start a thread that runs PATH as the first
 * process, prints how it ended and powers off; true. Without: false.
 */
bool proc_start_init(void);

/*
 * An argv or envp for exec: a NULL-terminated vector of strings in the calling
 * program's memory (execve's, user) or in the kernel's (a program the kernel
 * starts, kernel). Both NULL: an empty one.
 */
struct exec_vec {
	const char __user *const __user *user;
	char *const *kernel;
};

/*
 * Load path into a new address space for p (the calling thread's process),
 * argv, envp and the auxiliary vector on its stack, end p's other threads and
 * switch to it. *pc and *sp: where the program starts (the caller enters it
 * with arch_enter_user()). execve()'s errors, with nothing of p changed:
 * -ENOENT, -EACCES, -E2BIG, -EFAULT, -ENOEXEC, -ENOMEM, and -EAGAIN when p is
 * exiting already. -EINVAL (an image Linux refuses past its point of no
 * return) comes back with p's other threads ended and SIGSEGV pending.
 */
int exec_load(struct process *p, const char *path, struct exec_vec argv, struct exec_vec envp,
	      uintptr_t *pc, uintptr_t *sp);

/*
 * The argument area, Linux's (fs/exec.c): the strings of argv and envp and the
 * file name, with a pointer for each string, take at most a quarter of the stack
 * limit (RLIMIT_STACK, so 2 MiB; Linux also caps it at 6 MiB and raises it to
 * 128 KiB, neither of which a fixed 8 MiB limit reaches), which is what glibc's
 * sysconf(_SC_ARG_MAX) reports. One string takes at most MAX_ARG_STRLEN bytes
 * with its NUL, and a vector at most MAX_ARG_STRINGS pointers.
 */
#define EXEC_ARGS_MAX (EXEC_STACK_SIZE / 4)
#define MAX_ARG_STRLEN (32 * PAGE_SIZE)
#define MAX_ARG_STRINGS 0x7fffffff

/* A program's stack, mapped whole at exec: RLIMIT_STACK's default, 8 MiB. */
#define EXEC_STACK_SIZE (8 * MiB)

/*
 * fork(): a copy of the calling process (its address space copy-on-write, its
 * descriptors shared, its registers regs with fork's result 0) as its child,
 * started. set_child_tid and clear_child_tid (0: none) are the child's
 * CLONE_CHILD_SETTID and CLONE_CHILD_CLEARTID words. With share_mm (vfork's
 * CLONE_VM) the child runs on the parent's address space instead of a copy;
 * with vfork_wait (CLONE_VFORK) the caller sleeps until the child has exec'd
 * or exited. The child's pid, or -ENOMEM.
 */
long proc_fork(const struct regs *regs, uintptr_t set_child_tid, uintptr_t clear_child_tid,
	       bool share_mm, bool vfork_wait);

/*
 * clone() with CLONE_THREAD: a new thread of the calling process that starts
 * with regs (clone's result 0 in it), its TLS pointer tls if settls, its tid
 * written to ptid in the parent's memory (if ptid), to ctid in its own (if
 * set_ctid), and ctid zeroed and woken at its exit (if clear_ctid). Its tid,
 * -ENOMEM, or -EAGAIN when the process is exiting.
 */
long proc_clone_thread(const struct regs *regs, bool settls, uintptr_t tls, uintptr_t ptid,
		       uintptr_t ctid, bool set_ctid, bool clear_ctid);

/*
 * exit(): end the calling thread; the process with it, wait status status, if
 * it is the last one.
 */
void __noreturn thread_exit(int status);

/*
 * For execve: end every other thread of the calling process and wait until
 * they are gone, the caller then taking the process's pid as its tid. 0, or
 * -EAGAIN if the process is exiting already (the caller exits too on its way
 * back to user mode).
 */
int proc_exec_alone(void);

/*
 * tgkill() (tgid > 0) and tkill() (tgid 0): send sig to the thread tid (of
 * process tgid). 0, -ESRCH, -EINVAL (sig or an id out of range).
 */
int proc_tgkill(int tgid, int tid, int sig);

/* The kernel thread of user thread tid, held (task_put() when done), or NULL if none. */
struct task *thread_task_get(int tid);

/*
 * wait4(): collect a child of the calling process that has exited (pid -1: any;
 * > 0: that one; 0: one of the caller's process group; < -1: one of group -pid),
 * waiting unless options has WNOHANG. The child's pid with *status its wait
 * status; 0 (WNOHANG, none exited yet); -ECHILD (no such child); -EINVAL.
 */
long proc_wait4(int pid, int *status, unsigned options);

/* Where exec mapped the sigreturn trampoline in the calling process (arch_sigreturn_code). */
uintptr_t proc_sigreturn_trampoline(void);

/*
 * Send sig to p (sig 0: only check that p exists). A signal p ignores is dropped;
 * a blocked one stays pending. Any context but an interrupt handler.
 */
void signal_send(struct process *p, int sig, const struct ksiginfo *info);
/* Send sig to the thread t alone (tgkill, SIGPIPE), under the same rules. */
void signal_send_thread(struct thread *t, int sig, const struct ksiginfo *info);
/*
 * Raise sig against the calling thread for what it did (a fault): pending
 * even if blocked or ignored, whose default action then applies, as Linux's
 * force_sig_fault().
 */
void signal_force(int sig, const struct ksiginfo *info);
/* The same with the default action whatever the handler (Linux's force_fatal_sig()). */
void signal_force_fatal(int sig, const struct ksiginfo *info);
/* Will a handler run for sig in the calling thread (installed and not blocked)? */
bool signal_handled(int sig);
/*
 * kill(): pid > 0 that process, 0 the caller's group, -1 every process but init
 * and the caller, < -1 the group -pid; code is the siginfo's si_code (SI_USER
 * for kill, SI_TKILL for tgkill, SI_KERNEL for the terminal's Ctrl-C). 0, -ESRCH
 * (no such process or group), -EINVAL (sig out of range).
 */
int proc_kill(int pid, int sig, int code);
/* setpgid(), getpgid(), setsid(): Linux's rules and errors. */
int proc_setpgid(int pid, int pgid);
int proc_getpgid(int pid);
int proc_setsid(void);
int proc_getsid(int pid);
/* getppid(): the parent's pid, 0 for a process the kernel started or one orphaned. */
int proc_getppid(void);
/*
 * Deliver what is pending and not blocked for the calling process, on the way back
 * to user mode with regs (interrupts on): a handler gets a signal frame, a default
 * action that ends the program ends it here. restart is the system call's result
 * when it returned -ERESTARTSYS (else 0): restarted or turned into -EINTR.
 */
void signal_deliver(struct regs *regs, long restart);
/* The process's handlers across exec: handled signals go back to SIG_DFL. */
void signal_exec_reset(struct process *p);
/* A new child's dispositions and its first thread's mask: the calling thread's (nothing pending).
 */
void signal_fork(struct process *child, struct thread *first);
/* rt_sigaction's core: sig's disposition into *old (if old), then act's (if act). -EINVAL. */
int signal_action(struct process *p, int sig, const struct ksigaction *act, struct ksigaction *old);
/* The calling thread's mask; set it (SIGKILL and SIGSTOP are never blocked). */
ksigset_t signal_blocked(void);
void signal_set_blocked(ksigset_t mask);
/*
 * The mask old comes back once the signal now to be delivered has had its frame
 * set up (it goes into the frame, to be restored by rt_sigreturn), or at once if
 * no handler runs: for a call that waited under a temporary mask (rt_sigsuspend,
 * ppoll).
 */
void signal_restore_after_handler(ksigset_t old);
/*
 * rt_sigsuspend: block mask until a signal comes, which the way back to user mode
 * delivers with the old mask in its frame (and then restores). Always -EINTR.
 */
int signal_suspend(ksigset_t mask);
/* Pending for the calling thread (its own and the process's) and blocked, as rt_sigpending reports.
 */
ksigset_t signal_pending_set(void);

/* Processes alive now (running or zombie), for tests and the console. */
unsigned proc_count(void);

#endif

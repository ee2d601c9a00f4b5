/*
 * User processes (kernel/proc/): a process is an address space, a descriptor
 * table and current directory, a pid, a parent and an exit status, run by one
 * thread, a kernel thread (struct task) that entered user mode with
 * arch_enter_user(). Its kernel stack serves its system calls and traps.
 *
 * Lifetime: proc_spawn() (the kernel's `run` and init=) or proc_fork() makes
 * the process and its thread. exit_group() (or a fatal signal) tears down the
 * address space and descriptors at once and leaves a zombie: the struct with
 * its exit status, until it is collected: by its parent's wait4(), by
 * proc_wait() for one the kernel started, or, once orphaned with no init to
 * take it, by the next exit. Collecting frees it.
 *
 * Locks (outermost first): proc_lock protects the pid counter, the list of
 * processes, every parent/children link, process groups and sessions, state and
 * exit_status (written once by the exiting thread before it wakes the
 * waiters); a process's siglock its signal state (kernel/proc/signal.c).
 * Everything else is written only by the process's own thread.
 */
#ifndef GRACE_PROCESS_H
#define GRACE_PROCESS_H

#include <grace/list.h>
#include <grace/signal.h>
#include <grace/spinlock.h>
#include <grace/types.h>
#include <grace/wait.h>

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

enum proc_state {
	PROC_RUNNING,
	PROC_ZOMBIE, /* exited; exit_status valid, waiting to be collected */
};

struct process {
	int pid;
	enum proc_state state; /* under proc_lock */
	int exit_status;       /* wait4's status word: code << 8, or the signal number */
	struct process
	    *parent;	 /* under proc_lock; NULL: a kernel thread waits for it, or orphaned */
	bool orphaned;	 /* under proc_lock: its parent exited and no init took it */
	bool unkillable; /* init: a signal left at its default action does not reach it */
	struct list_head children, sibling; /* under proc_lock */
	struct wait_queue_head child_exit;  /* woken when one of its children exits */
	struct wait_queue_head exited;	    /* woken when it exits (its kernel waiter) */
	struct task *task;		    /* its thread */
	struct list_head all;		    /* on the list of processes, under proc_lock */
	struct mm *mm;			    /* its address space; NULL once it exited */
	uintptr_t brk_start, brk;	    /* the heap: [brk_start, brk), mapped to page ends */
	uintptr_t mmap_base;		    /* mmap() without a hint searches below this */
	struct regs *fork_regs;	 /* fork's child: its first user registers, until it runs */
	uintptr_t set_child_tid; /* fork's child writes its pid there first (CLONE_CHILD_SETTID) */
	uintptr_t clear_child_tid; /* zeroed at exit (CLONE_CHILD_CLEARTID, set_tid_address) */
	unsigned umask;
	char comm[16]; /* the program's file name, for the console and ps */
	int pgid;      /* process group: under proc_lock; its own pid, or its parent's group */
	int sid;       /* session: under proc_lock */
	uintptr_t sigreturn_tramp; /* where exec mapped arch_sigreturn_code, or 0 */

	/* Signals (kernel/proc/signal.c): siglock protects these; senders take it with irqs off. */
	spinlock_t siglock;
	struct ksigaction sigactions[NSIG];
	ksigset_t pending;	 /* sent, not yet delivered */
	ksigset_t blocked;	 /* the thread's mask */
	ksigset_t saved_blocked; /* rt_sigsuspend's caller's mask, for the handler's frame */
	bool restore_blocked;	 /* saved_blocked is to be restored once a handler is set up */
	struct ksiginfo siginfo[NSIG]; /* who sent each pending signal, and why */
};

/* The calling thread's process, or NULL in a kernel thread. */
struct process *current_process(void);

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
 * End the calling process with the wait status status (exit code << 8 | signal):
 * its address space and descriptors are freed now, the struct when collected.
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
 * Load path into a new address space for p (the calling thread's process),
 * argv, envp and the auxiliary vector on its stack, and switch to it; the old
 * one is destroyed only on success. *pc and *sp: where the program starts (the
 * caller enters it with arch_enter_user()). execve()'s errors: -ENOENT,
 * -EACCES, -ENOEXEC, -E2BIG, -ENOMEM.
 */
int exec_load(struct process *p, const char *path, char *const argv[], char *const envp[],
	      uintptr_t *pc, uintptr_t *sp);

/*
 * The bytes of argument and environment strings execve() takes, all together; one
 * string may use them all (Linux bounds one by MAX_ARG_STRLEN, the same 32 pages).
 */
#define EXEC_ARGS_MAX (128 * 1024)

/*
 * fork(): a copy of the calling process (its address space copy-on-write, its
 * descriptors shared, its registers regs with fork's result 0) as its child,
 * started. set_child_tid and clear_child_tid (0: none) are the child's
 * CLONE_CHILD_SETTID and CLONE_CHILD_CLEARTID words. The child's pid, or -ENOMEM.
 */
long proc_fork(const struct regs *regs, uintptr_t set_child_tid, uintptr_t clear_child_tid);

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
/*
 * Raise sig against p, the calling process, for what it did (a fault): pending
 * even if blocked or ignored, whose default action then applies, as Linux's
 * force_sig_fault().
 */
void signal_force(struct process *p, int sig, const struct ksiginfo *info);
/* Will a handler run for sig (installed and not blocked)? */
bool signal_handled(struct process *p, int sig);
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
/* A new child's dispositions and mask: its parent's (nothing pending). */
void signal_fork(struct process *child, struct process *parent);
/* rt_sigaction's core: sig's disposition into *old (if old), then act's (if act). -EINVAL. */
int signal_action(struct process *p, int sig, const struct ksigaction *act, struct ksigaction *old);
/* The thread's mask; set it (SIGKILL and SIGSTOP are never blocked). */
ksigset_t signal_blocked(struct process *p);
void signal_set_blocked(struct process *p, ksigset_t mask);
/*
 * The mask old comes back once the signal now to be delivered has had its frame
 * set up (it goes into the frame, to be restored by rt_sigreturn), or at once if
 * no handler runs: for a call that waited under a temporary mask (rt_sigsuspend,
 * ppoll).
 */
void signal_restore_after_handler(struct process *p, ksigset_t old);
/*
 * rt_sigsuspend: block mask until a signal comes, which the way back to user mode
 * delivers with the old mask in its frame (and then restores). Always -EINTR.
 */
int signal_suspend(ksigset_t mask);
/* Pending and blocked, as rt_sigpending reports. */
ksigset_t signal_pending_set(struct process *p);

/* Processes alive now (running or zombie), for tests and the console. */
unsigned proc_count(void);

#endif

/*
 * Threads and the scheduler: struct task, the run-queue operations the rest of
 * the kernel uses (schedule, wake_up_process, affinity), and the entry points
 * that boot, the tick and IPIs use. Policy and locking: kernel/sched/core.c.
 *
 * Sleeping follows the one pattern that cannot lose a wake-up:
 *
 *	set_current_state(TASK_SLEEPING);	(a full barrier after the store)
 *	if (!condition)
 *		schedule();
 *	__set_current_state(TASK_RUNNING);
 *
 * and the waker makes the condition true before wake_up_process(). Either the
 * sleeper sees the condition, or the waker sees TASK_SLEEPING and makes it
 * runnable again (even if it has not reached schedule() yet). wait_event() in
 * grace/wait.h wraps this.
 */
#ifndef GRACE_SCHED_H
#define GRACE_SCHED_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/cpumask.h>
#include <grace/list.h>
#include <grace/lockdep.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/types.h>
#include <grace/wait.h>
#include <asm/switch.h>

struct mm;
struct fs_context;
struct process;
struct thread;

enum task_state {
	TASK_RUNNING,  /* on a run queue, or running */
	TASK_SLEEPING, /* waiting for wake_up_process() */
	TASK_DEAD,     /* exited; its stack is freed once it has switched out */
};

#define TASK_NAME_LEN 16

/* task->flags */
#define TASK_IDLE (1u << 0) /* a CPU's idle thread: never queued, runs when nothing else can */
#define TASK_URGENT                                                                                \
	(1u << 1) /* deferred-work threads: queued at the head, preempt normal threads */
#define TASK_CONSOLE                                                                               \
	(1u << 2) /* answers on the console (the shell): its printk lines ignore `quiet` */

struct task {
	struct task_preempt preempt; /* first: grace/preempt.h reaches it via arch_current() */
	struct arch_context ctx;     /* saved registers while switched out */
	u32 state;		     /* enum task_state; written by the task or under its rq lock */
	u32 on_rq;		     /* queued or running on cpu's queue; under its rq lock */
	u32 on_cpu;   /* registers live on a CPU; 0 once a switch away has finished */
	unsigned cpu; /* run queue it is on, or last ran on; changes under that rq lock */
	u32 flags;
	int slice;		   /* ticks left in its time slice; under its rq lock */
	struct list_head run_node; /* its run-queue link while queued; under its rq lock */
	struct cpumask allowed;	   /* CPUs it may run on */
	struct mm *mm;		   /* address space (mm_switch), loaded when it is switched in */

	u64 runtime_ns;	    /* CPU time, up to its last switch away */
	u64 last_switch_ns; /* when it last started running */
	u64 nr_switches;    /* times it was switched in */

	u64 shown_runtime_ns; /* runtime_ns at the last console report */
	char name[TASK_NAME_LEN];
	unsigned id;
	struct list_head all_node; /* the thread table (sched_for_each_task) */

	/* Kernel threads (kernel/sched/kthread.c). */
	int (*fn)(void *arg);
	void *arg;
	int exit_code;
	u32 should_stop;
	struct wait_queue_head exited; /* woken once state is TASK_DEAD */
	atomic_t refs;		       /* the thread's own, plus its creator's handle */
	void *stack;		/* lowest address of its stack (vmap), NULL for boot stacks */
	struct task *reap_next; /* on the reaper's list once both references are gone */
	struct fs_context
	    *fs; /* descriptors and current directory (grace/fs.h), made on first use */
	struct process *proc;	/* the user process it is a thread of (grace/process.h), or NULL */
	struct thread *thread;	/* and its thread of that process */
	struct regs *user_regs; /* its user registers' trap frame, during a system call */
	u32 sigpending;		/* a signal it does not block is pending: interruptible waits end */
	bool syscall_restart;	/* its last system call returned -ERESTARTSYS */
#ifdef GRACE_LOCK_CLASSES
	struct task_lockdep lockdep; /* the locks it holds (LOCKDEP, LOCKSTAT builds) */
#endif
};

DECLARE_PER_CPU(struct task, idle_task);
extern struct task boot_task; /* the boot CPU's context until per-CPU areas exist */

#define current (arch_current())

/* Time slice, in ticks of HZ (grace/timer.h). */
#define SCHED_SLICE_TICKS 2

void schedule(void);
/* Give up the CPU to any queued thread of this CPU, staying runnable. */
void yield(void);
/* A voluntary preemption point for long loops: switches only if a reschedule is pending. */
void cond_resched(void);
/* Is a signal waiting for the calling thread? Interruptible sleeps then end (grace/wait.h). */
static inline bool signal_pending(void)
{
	return READ_ONCE(current->sigpending);
}

static inline bool need_resched(void)
{
	return READ_ONCE(current->preempt.need_resched);
}

/*
 * Make p runnable if it sleeps; true if it did. Any context, any CPU. A full
 * barrier first: the caller's stores are visible before p's state is read.
 */
bool wake_up_process(struct task *p);

static inline void __set_current_state(enum task_state s)
{
	WRITE_ONCE(current->state, s);
}
/*
 * With a full barrier: the condition check that follows cannot move before the store.
 * Pairs with the smp_mb() at the start of wake_up_process(), which orders the
 * waker's condition store before its read of the state.
 */
static inline void set_current_state(enum task_state s)
{
	smp_store_mb(current->state, s);
}

/* Restrict p to mask (which must intersect the online CPUs); moves p if needed. */
int set_cpus_allowed(struct task *p, const struct cpumask *mask);

/* Threads in the run queue of cpu (queued plus running), read without its lock. */
unsigned sched_nr_running(unsigned cpu);
/* CPU time of cpu's idle thread, for the console's per-CPU load. */
u64 sched_idle_ns(unsigned cpu);
/* Context switches on cpu since boot. */
u64 sched_nr_switches(unsigned cpu);
/* Reschedule IPIs sent to cpu since boot. */
u64 sched_resched_ipis(unsigned cpu);

/*
 * Scheduler domains (kernel/sched/topology.c): placement and balancing look
 * through levels of CPU groups and read a summary line per group; flat, they
 * read every online CPU's run queue. Boot argument sched_domains=domains|flat.
 */
/* Ticks between a busy CPU's periodic balancing passes (100 ms at HZ 100). */
#define BALANCE_TICKS 10
#define SCHED_LEVELS 3	   /* a group, its node's groups, the machine's */
#define SCHED_GROUP_CPUS 8 /* the most CPUs in a group */
void sched_set_domains(bool on);
bool sched_domains_enabled(void);
/* A CPU's balancing since boot: its passes, and the remote lines (queues or summaries) read. */
struct sched_balance_stats {
	u64 periodic_passes, periodic_reads; /* pushes from the tick */
	u64 pull_passes, pull_reads;	     /* pulls by an idle CPU */
	u64 wide_pulls[SCHED_LEVELS];	     /* idle pulls that looked at level 0, 1, 2 */
	u64 wide_pushes[SCHED_LEVELS];	     /* periodic passes that looked at level 0, 1, 2 */
};
struct sched_balance_stats sched_balance_stats(unsigned cpu);
/*
 * cpu's scheduler group (a sched_domains=domains scan's unit) and the groups
 * [*first, *end) its level spans; false if that level adds nothing to the one below.
 */
unsigned sched_cpu_group(unsigned cpu);
bool sched_level_span(unsigned cpu, unsigned level, unsigned *first, unsigned *end);
/* The CPUs of group g, into cpus (room for SCHED_GROUP_CPUS); returns their count. */
unsigned sched_group_cpus(unsigned g, unsigned *cpus);

/*
 * Walk the thread table under its lock (no sleeping in fn). The table holds
 * every kernel thread and each CPU's idle thread.
 */
void sched_for_each_task(void (*fn)(struct task *p, void *arg), void *arg);
/* Print each CPU's load and the busy threads since the previous call. */
void sched_show(void);
/* Sleep at least ms milliseconds. */
void msleep(u64 ms);
u64 task_runtime_ns(struct task *p);

/* ---- called by the kernel's own machinery ---- */

/* Run queues and idle threads for every CPU; the boot context becomes CPU's idle thread. */
void sched_init(void);
/* The boot CPU, once the other CPUs are up: start the per-CPU kernel threads. */
void sched_start(void);
/* The current CPU's idle loop; the boot context of each CPU ends here. */
void __noreturn cpu_idle_loop(void);
/* The tick (HZ, on a CPU with more than one runnable thread): time slices, balancing, RCU. */
void sched_tick(void);
/*
 * Make cpu reschedule: set need_resched on what it runs and send the IPI; the
 * switch happens on the IPI's return (sched_irq_return) or in its idle loop.
 */
void sched_kick(unsigned cpu);

#endif

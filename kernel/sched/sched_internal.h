/*
 * The run queue, shared by the files of kernel/sched/ and nothing else.
 */
#ifndef SCHED_INTERNAL_H
#define SCHED_INTERNAL_H

#include <grace/sched.h>
#include <grace/spinlock.h>

/* Scheduler domains (topology.c). */
struct sched_group {
	u16 cpus[SCHED_GROUP_CPUS];
	unsigned nr_cpus;
	unsigned node;
};

/* The loads of a group's CPUs, a byte each (nr_running up to 255): one line, read by scans. */
struct sched_group_load {
	u8 nr_running[SCHED_GROUP_CPUS];
} __cacheline_aligned;

extern struct sched_group sched_groups[MAX_CPUS];
extern struct sched_group_load sched_group_loads[MAX_CPUS];
extern unsigned sched_nr_groups;
extern bool sched_domains_on;

struct rq {
	/*
	 * Protects queue, nr_running, curr, prev and nr_switches, and of the threads
	 * on this queue the fields struct task marks "under its rq lock". Always
	 * taken with interrupts off (kernel/sched/core.c says how).
	 */
	spinlock_t lock;
	unsigned cpu;
	unsigned nr_running;	 /* queued + the running thread if not idle; written under lock */
	struct list_head queue;	 /* runnable and not running, in the order they run */
	struct task *curr;	 /* under lock */
	struct task *idle;	 /* fixed at boot */
	struct task *prev;	 /* switched away from, for finish_switch(); under lock */
	u64 nr_switches;	 /* under lock */
	unsigned balance_ticks;	 /* ticks until this CPU's next periodic balance */
	u64 idle_pull_after;	 /* no idle balance before this clock time; this CPU's */
	atomic64_t resched_ipis; /* reschedule IPIs sent to this CPU */
	unsigned group;		 /* its scheduler group (topology.c), fixed at boot */
	unsigned group_slot;	 /* its byte in the group's load summary */
	/* This CPU's balancing, written by it alone (balance.c): */
	u64 pull_after[SCHED_LEVELS];	  /* no idle pull at that level before this time */
	struct sched_balance_stats stats; /* passes and the lines they read */
} __cacheline_aligned;

DECLARE_PER_CPU(struct rq, runqueue);
#define cpu_rq(cpu) (&per_cpu(runqueue, (cpu)))
/* With interrupts or preemption off. */
#define this_rq() (&this_cpu(runqueue))

void enqueue_task(struct rq *rq, struct task *p, bool head);
void dequeue_task(struct rq *rq, struct task *p);
/* p is queued on from (not running there); move it to to's queue. Both locks held. */
void move_queued_task(struct rq *from, struct rq *to, struct task *p);
/* Make rq's current thread reschedule soon. rq lock held. */
void resched_curr(struct rq *rq);
/* p was just queued on rq (lock held): reschedule rq if p should run now. */
void check_preempt(struct rq *rq, struct task *p);

/* Lock two run queues in a fixed order (lower CPU first); interrupts must be off. */
void double_rq_lock(struct rq *a, struct rq *b);
void double_rq_unlock(struct rq *a, struct rq *b);

/* kernel/sched/balance.c */

/* A CPU found its queue empty: pull a thread from the busiest queue. true if it did. */
bool idle_balance(struct rq *rq);
/* From the tick every BALANCE_TICKS: push queued threads to less loaded CPUs. */
void periodic_balance(struct rq *rq);
/* Where a thread allowed on allowed, last on prev_cpu, should go on wake-up or creation. */
unsigned select_cpu(const struct cpumask *allowed, unsigned prev_cpu);

/* kernel/sched/topology.c */
/* Group the CPUs 0..nr_cpus-1 and read sched_domains=; before any CPU but the boot one runs. */
void sched_topology_init(unsigned nr_cpus);
/* Write rq's nr_running into its group's summary. rq lock held. */
void sched_publish_load(struct rq *rq);

static inline unsigned group_load(unsigned group, unsigned slot)
{
	return READ_ONCE(sched_group_loads[group].nr_running[slot]);
}

/* Every change of nr_running goes through here: rq lock held. */
static inline void rq_set_nr_running(struct rq *rq, unsigned n)
{
	WRITE_ONCE(rq->nr_running, n);
	if (READ_ONCE(sched_domains_on))
		sched_publish_load(rq);
}

/* Mark the current thread dead and switch away for good (kthread_exit). */
void __noreturn sched_exit_current(void);

/* kernel/sched/kthread.c */
void task_table_add(struct task *p);
/* The last reference to p was dropped where it cannot be freed (finish_switch). */
void task_reap_later(struct task *p);

#endif

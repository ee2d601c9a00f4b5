/*
 * The run queue, shared by the files of kernel/sched/ and nothing else.
 */
#ifndef SCHED_INTERNAL_H
#define SCHED_INTERNAL_H

#include <grace/sched.h>
#include <grace/spinlock.h>

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
/* Ticks between a busy CPU's periodic balancing passes (100 ms at HZ 100). */
#define BALANCE_TICKS 10

/* A CPU found its queue empty: pull a thread from the busiest queue. true if it did. */
bool idle_balance(struct rq *rq);
/* From the tick every BALANCE_TICKS: push queued threads to less loaded CPUs. */
void periodic_balance(struct rq *rq);
/* Where a thread allowed on allowed, last on prev_cpu, should go on wake-up or creation. */
unsigned select_cpu(const struct cpumask *allowed, unsigned prev_cpu);

/* Mark the current thread dead and switch away for good (kthread_exit). */
void __noreturn sched_exit_current(void);

/* kernel/sched/kthread.c */
void task_table_add(struct task *p);
/* The last reference to p was dropped where it cannot be freed (finish_switch). */
void task_reap_later(struct task *p);

#endif

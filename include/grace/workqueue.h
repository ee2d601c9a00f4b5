/*
 * Workqueues: run a function later in thread context, where it may sleep. Each
 * CPU has a worker thread, kworker/N, with a FIFO of work items. queue_work_on()
 * picks the CPU; queue_work() uses the caller's. A work item is queued at most
 * once at a time; queueing it again while pending does nothing (returns false).
 * It may be queued again from its own function.
 *
 * A delayed_work is a work item and a timer: queue_delayed_work_on() arms the
 * timer, whose function queues the work on the chosen CPU's worker, so it runs
 * no earlier than delay ticks (grace/timer.h: HZ) after the call. Like Linux's,
 * queueing it while pending (timer armed, or queued) does nothing and returns
 * false: the first expiry stands.
 */
#ifndef GRACE_WORKQUEUE_H
#define GRACE_WORKQUEUE_H

#include <grace/list.h>
#include <grace/timer.h>
#include <grace/types.h>

struct work {
	struct list_head node;
	void (*fn)(struct work *w);
	u32 pending; /* queued and not yet started */
};

/* clang-format off */
#define WORK_INIT(name, f) { LIST_HEAD_INIT((name).node), (f), 0 }
/* clang-format on */

struct delayed_work {
	struct work work; /* work.pending covers the timer's wait too */
	struct timer timer;
	u32 cpu; /* the worker it goes to; set while not pending, by the queuer */
};

void work_init(struct work *w, void (*fn)(struct work *w));
void delayed_work_init(struct delayed_work *dw, void (*fn)(struct work *w));
/* The delayed_work a work function was given. */
static inline struct delayed_work *to_delayed_work(struct work *w)
{
	return container_of(w, struct delayed_work, work);
}
/* Any context. false if w was already pending. */
bool queue_work_on(unsigned cpu, struct work *w);
bool queue_work(struct work *w);
/* Any context. Run dw's function on cpu's worker after delay ticks; false if pending. */
bool queue_delayed_work_on(unsigned cpu, struct delayed_work *dw, u64 delay);
bool queue_delayed_work(struct delayed_work *dw, u64 delay);
/*
 * Stop dw: after it returns dw is not pending, its function is not running, and
 * queueing it failed meanwhile, so a function that queues itself again is stopped
 * too. True if it was pending. Thread context, not from a worker (it flushes
 * dw's CPU's worker), not with a lock dw's function takes.
 */
bool cancel_delayed_work_sync(struct delayed_work *dw);
/* Wait until every item queued on cpu before this call has run (not from a worker). */
void flush_workqueue_cpu(unsigned cpu);
/* Items run by cpu's worker since boot. */
u64 work_runs(unsigned cpu);

void workqueue_start(void); /* the per-CPU workers, from sched_start() */

#endif

/*
 * Workqueues: run a function later in thread context, where it may sleep. Each
 * CPU has a worker thread, kworker/N, with a FIFO of work items. queue_work_on()
 * picks the CPU; queue_work() uses the caller's. A work item is queued at most
 * once at a time; queueing it again while pending does nothing (returns false).
 * It may be queued again from its own function.
 */
#ifndef GRACE_WORKQUEUE_H
#define GRACE_WORKQUEUE_H

#include <grace/list.h>
#include <grace/types.h>

struct work {
	struct list_head node;
	void (*fn)(struct work *w);
	u32 pending; /* queued and not yet started */
};

/* clang-format off */
#define WORK_INIT(name, f) { LIST_HEAD_INIT((name).node), (f), 0 }
/* clang-format on */

void work_init(struct work *w, void (*fn)(struct work *w));
/* Any context. false if w was already pending. */
bool queue_work_on(unsigned cpu, struct work *w);
bool queue_work(struct work *w);
/* Wait until every item queued on cpu before this call has run (not from a worker). */
void flush_workqueue_cpu(unsigned cpu);
/* Items run by cpu's worker since boot. */
u64 work_runs(unsigned cpu);

void workqueue_start(void); /* the per-CPU workers, from sched_start() */

#endif

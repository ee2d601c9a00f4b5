/*
 * Deferred work per CPU: a handler raised from any context (typically a hard
 * interrupt) runs soon on the same CPU, in thread context, with interrupts on.
 * Each CPU has one urgent thread, softirqd/N, that runs the raised handlers;
 * urgent threads are queued ahead of and preempt ordinary ones, so "soon" means
 * the next preemption point, not the next time slice. A handler raised again
 * while it runs runs again. Handlers must not sleep for long: they hold up the
 * others on their CPU.
 */
#ifndef GRACE_SOFTIRQ_H
#define GRACE_SOFTIRQ_H

#include <grace/types.h>

enum softirq_nr {
	SOFTIRQ_RCU,	/* RCU callbacks */
	SOFTIRQ_NET_RX, /* packet processing */
	SOFTIRQ_NET_TX,
	SOFTIRQ_SELFTEST, /* for the deferred-work selftest */
	NR_SOFTIRQS
};

typedef void (*softirq_fn_t)(void);

void open_softirq(enum softirq_nr nr, softirq_fn_t fn);
/* Run nr's handler soon on this CPU. Any context. */
void raise_softirq(enum softirq_nr nr);
/* Handler runs of nr on cpu since boot, each counted as it begins. */
u64 softirq_runs(unsigned cpu, enum softirq_nr nr);

void softirq_start(void); /* the per-CPU threads, from sched_start() */

#endif

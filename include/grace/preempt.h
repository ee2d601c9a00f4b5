/*
 * Preemption count. There is no preemptive scheduler yet (the scheduler issue adds
 * one); the count exists now so that spinlocks and per-CPU users already mark the
 * sections that must not migrate, and the scheduler only has to start honouring it.
 */
#ifndef GRACE_PREEMPT_H
#define GRACE_PREEMPT_H

#include <grace/atomic.h>
#include <grace/percpu.h>

DECLARE_PER_CPU(int, preempt_count);

static inline void preempt_disable(void)
{
	this_cpu(preempt_count)++;
	barrier();
}

static inline void preempt_enable(void)
{
	barrier();
	this_cpu(preempt_count)--;
}

#endif

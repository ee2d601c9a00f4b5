/*
 * What the scheduler selftests (sched_threads_test.c, sched_wait_test.c) share: the
 * deadline every wait has (64 vCPUs may share two host cores), and an array of
 * threads joined at the end.
 */
#ifndef TESTS_SCHED_TEST_UTIL_H
#define TESTS_SCHED_TEST_UTIL_H

#include <grace/arch.h>
#include <grace/kthread.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/time.h>

#define SCHED_TEST_TIMEOUT_NS (60 * NSEC_PER_SEC)

/* Wait (sleeping) for cond, at most SCHED_TEST_TIMEOUT_NS; the final value of cond. */
#define wait_until(cond)                                                                           \
	({                                                                                         \
		u64 __end = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;                               \
		while (!(cond) && arch_clock_ns() < __end)                                         \
			msleep(1);                                                                 \
		(cond);                                                                            \
	})

static inline struct task **threads_alloc(unsigned n)
{
	return kzalloc(n * sizeof(struct task *));
}

static inline unsigned join_all(struct task **t, unsigned n)
{
	unsigned joined = 0;
	for (unsigned i = 0; i < n; i++)
		if (t[i]) {
			kthread_join(t[i]);
			joined++;
		}
	kfree(t);
	return joined;
}

#endif

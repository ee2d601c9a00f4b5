/*
 * A one-shot rendezvous for tests and benchmarks that fan out with smp_run_all():
 * every participant calls smp_sync_wait() and none returns until all have arrived,
 * so the measured loops start together instead of one CPU at a time.
 */
#ifndef GRACE_SMP_SYNC_H
#define GRACE_SMP_SYNC_H

#include <grace/atomic.h>
#include <asm/cpu.h>

struct smp_sync {
	atomic_t arrived;
};

static inline void smp_sync_wait(struct smp_sync *s, unsigned n)
{
	/* Fully ordered: what we did before is visible to whoever sees our arrival. */
	atomic_inc_return(&s->arrived);
	/* Pairs with the others' atomic_inc_return(): what they did before is before our return. */
	while ((unsigned)atomic_read_acquire(&s->arrived) < n)
		cpu_relax();
}

#endif

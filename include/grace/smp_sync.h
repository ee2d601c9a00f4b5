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
	u32 arrived;
};

static inline void smp_sync_wait(struct smp_sync *s, unsigned n)
{
	__atomic_fetch_add(&s->arrived, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&s->arrived, __ATOMIC_ACQUIRE) < n)
		cpu_relax();
}

#endif

/*
 * make bench BENCH=spinlock: every online CPU takes a lock with a short critical
 * section as often as it can for a fixed time, first all on one lock, then spread
 * over 16, each with proportional backoff and with plain ticket spinning, in one
 * boot so the figures compare directly:
 *
 *   bench: spinlock arch=riscv64 online=8 cpus=8 locks=1 mode=backoff acq_per_sec=... fairness=...
 *
 * fairness is the most acquisitions by one CPU over the fewest (inf when a CPU got none).
 */
#include <grace/bench.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/spinlock.h>
#include <grace/time.h>
#include <kernel/locking/spinlock_internal.h>

#define SPIN_BENCH_MAX_LOCKS 16
#define SPIN_BENCH_CS_LOOPS 10	  /* a short critical section: a few cache lines' worth of work */
#define SPIN_BENCH_CLOCK_EVERY 16 /* read the clock every this many acquisitions */

struct padded_lock {
	spinlock_t lock;
	u64 data; /* what the critical section touches */
} __cacheline_aligned;

static struct spin_bench {
	struct padded_lock locks[SPIN_BENCH_MAX_LOCKS];
	unsigned nr_locks;
	u64 deadline;
	struct smp_sync start;
	u64 acquired[MAX_CPUS] __cacheline_aligned; /* each CPU writes only its own slot */
} sb;

static void spin_bench_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	u64 n = 0;

	smp_sync_wait(&sb.start, num_online_cpus());
	for (;;) {
		/* Each CPU walks the locks in its own order, so 16 locks spread the CPUs out. */
		struct padded_lock *pl = &sb.locks[(n + cpu) % sb.nr_locks];
		spin_lock(&pl->lock);
		for (int i = 0; i < SPIN_BENCH_CS_LOOPS; i++)
			WRITE_ONCE(pl->data, pl->data + 1);
		spin_unlock(&pl->lock);
		n++;
		if (n % SPIN_BENCH_CLOCK_EVERY == 0 && arch_clock_ns() >= READ_ONCE(sb.deadline))
			break;
	}
	sb.acquired[cpu] = n;
}

static void spin_bench_phase(unsigned nr_locks, bool backoff)
{
	unsigned cpus = num_online_cpus(), cpu;
	char phase[48];

	for (unsigned i = 0; i < SPIN_BENCH_MAX_LOCKS; i++)
		spin_lock_init(&sb.locks[i].lock);
	sb.nr_locks = nr_locks;
	sb.start = (struct smp_sync){0};
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		sb.acquired[cpu] = 0;
	spinlock_backoff = backoff;
	spin_delay_reset();

	snprintf(phase, sizeof(phase), "locks=%u/%s", nr_locks, backoff ? "backoff" : "plain");
	u64 start = arch_clock_ns();
	/* Includes the wait for every CPU to arrive; small next to the phase at any CPU count. */
	sb.deadline = start + bench_phase_ns();
	bench_phase_begin(phase, cpus);
	smp_run_all(spin_bench_worker, NULL);
	u64 elapsed = arch_clock_ns() - start;

	u64 total = 0, max = 0, min = ~0ULL;
	for_each_online_cpu(cpu) {
		total += sb.acquired[cpu];
		max = MAX(max, sb.acquired[cpu]);
		min = MIN(min, sb.acquired[cpu]);
	}
	bench_phase_end(total);

	char fairness[32];
	if (min == 0)
		snprintf(fairness, sizeof(fairness), "inf");
	else
		/* Two decimals without floating point (the kernel has no FPU state). */
		snprintf(fairness, sizeof(fairness), "%llu.%02llu", max / min,
			 (max % min) * 100 / min);
	bench_report("spinlock", cpus, "locks=%u mode=%s acq_per_sec=%llu fairness=%s", nr_locks,
		     backoff ? "backoff" : "plain", total * NSEC_PER_SEC / (elapsed ? elapsed : 1),
		     fairness);
}

BENCH(spinlock)
{
	bool saved = spinlock_backoff;
	spin_bench_phase(1, true);
	spin_bench_phase(1, false);
	spin_bench_phase(SPIN_BENCH_MAX_LOCKS, true);
	spin_bench_phase(SPIN_BENCH_MAX_LOCKS, false);
	spinlock_backoff = saved;
	spin_delay_reset();
}

/*
 * make bench BENCH=spinlock: every online CPU takes a lock with a short critical
 * section as often as it can for a fixed time, first all on one lock, then spread
 * over 16, each with proportional backoff, with plain ticket spinning, and with
 * backoff plus paravirtual waits (mode=pv: halt after SPIN_PV_THRESHOLD loops, be
 * kicked by the unlocker), in one boot so the figures compare directly:
 *
 *   bench: spinlock arch=riscv64 online=8 cpus=8 locks=1 mode=backoff acq_per_sec=... fairness=...
 *   bench: spinlock ... locks=1 mode=pv acq_per_sec=... fairness=... halts=... kicks=...
 *
 * fairness is the most acquisitions by one CPU over the fewest (inf when a CPU got
 * none); halts and kicks are per acquisition, over the phase (every lock's, the
 * kernel's own included, but the benchmark's dominate). Then the cost of the
 * unlock's check for a halted waiter, on one CPU with nobody else on the lock:
 *
 *   bench: spinlock arch=x86_64 online=8 cpus=1 locks=1 mode=uncontended-nopv ns_per_acq=...
 *   bench: spinlock arch=x86_64 online=8 cpus=1 locks=1 mode=uncontended-pv ns_per_acq=...
 *
 * The phases turn pv waits on and off at run time (spin_pv_set()) whatever the boot
 * chose, and put back the boot's choice at the end.
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
/* Uncontended lock/unlock pairs per timed round on one CPU, and rounds per mode. */
#define SPIN_BENCH_UNCONTENDED 50000
#define SPIN_BENCH_ROUNDS 5

struct padded_lock {
	spinlock_t lock;
	u64 data; /* what the critical section touches */
} __cacheline_aligned;

static struct spin_bench {
	struct padded_lock locks[SPIN_BENCH_MAX_LOCKS];
	unsigned nr_locks;
	u64 deadline; /* the phase's end: set by the first CPU out of the start sync */
	struct smp_sync start;
	u64 acquired[MAX_CPUS] __cacheline_aligned; /* each CPU writes only its own slot */
} sb;

static void spin_bench_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	u64 n = 0;

	smp_sync_wait(&sb.start, num_online_cpus());
	/*
	 * The phase starts when every CPU is here: at SMP=64 on 2 host cores, waking
	 * the run/N threads can take longer than the phase itself.
	 */
	u64 unset = 0;
	try_cmpxchg(&sb.deadline, &unset, arch_clock_ns() + bench_phase_ns());
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

enum spin_bench_mode { MODE_BACKOFF, MODE_PLAIN, MODE_PV };
static const char *const mode_names[] = {"backoff", "plain", "pv"};

/* Per acquisition, two decimals without floating point (the kernel has no FPU state). */
static void per_acq(char *buf, size_t size, u64 n, u64 acq)
{
	u64 hundredths = acq ? n * 100 / acq : 0;
	snprintf(buf, size, "%llu.%02llu", hundredths / 100, hundredths % 100);
}

static void spin_bench_phase(unsigned nr_locks, enum spin_bench_mode mode)
{
	unsigned cpus = num_online_cpus(), cpu;
	bool backoff = mode != MODE_PLAIN;
	char phase[48];
	struct spin_pv_stats pv_before, pv_after;

	for (unsigned i = 0; i < SPIN_BENCH_MAX_LOCKS; i++)
		spin_lock_init(&sb.locks[i].lock);
	sb.nr_locks = nr_locks;
	sb.start = (struct smp_sync){0};
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		sb.acquired[cpu] = 0;
	spinlock_backoff = backoff;
	spin_pv_set(mode == MODE_PV);
	spin_delay_reset();
	spin_pv_stats_sum(&pv_before);

	snprintf(phase, sizeof(phase), "locks=%u/%s", nr_locks, mode_names[mode]);
	sb.deadline = 0;
	bench_phase_begin(phase, cpus);
	smp_run_all(spin_bench_worker, NULL);
	u64 elapsed = arch_clock_ns() - (sb.deadline - bench_phase_ns());
	spin_pv_stats_sum(&pv_after);

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
	u64 acq_per_sec = total * NSEC_PER_SEC / (elapsed ? elapsed : 1);
	if (mode != MODE_PV) {
		bench_report("spinlock", cpus, "locks=%u mode=%s acq_per_sec=%llu fairness=%s",
			     nr_locks, mode_names[mode], acq_per_sec, fairness);
		return;
	}
	char halts[24], kicks[24];
	per_acq(halts, sizeof(halts), pv_after.halts - pv_before.halts, total);
	per_acq(kicks, sizeof(kicks), pv_after.kicks - pv_before.kicks, total);
	bench_report("spinlock", cpus,
		     "locks=%u mode=%s acq_per_sec=%llu fairness=%s halts=%s kicks=%s", nr_locks,
		     mode_names[mode], acq_per_sec, fairness, halts, kicks);
}

/*
 * One CPU, nobody else on the lock: what the unlock's pv check costs when it finds
 * nobody. The best of SPIN_BENCH_ROUNDS rounds per mode, the modes alternating:
 * with up to 64 vCPUs on 2 host cores a round may lose its host CPU for a while.
 */
static u64 spin_bench_uncontended_round(bool pv)
{
	static struct padded_lock pl;

	spin_lock_init(&pl.lock);
	spin_pv_set(pv);
	u64 start = arch_clock_ns();
	for (unsigned i = 0; i < SPIN_BENCH_UNCONTENDED; i++) {
		spin_lock(&pl.lock);
		WRITE_ONCE(pl.data, pl.data + 1);
		spin_unlock(&pl.lock);
	}
	return arch_clock_ns() - start;
}

static void spin_bench_uncontended(void)
{
	u64 best[2] = {~0ULL, ~0ULL};
	for (unsigned r = 0; r < SPIN_BENCH_ROUNDS; r++)
		for (unsigned pv = 0; pv < 2; pv++)
			best[pv] = MIN(best[pv], spin_bench_uncontended_round(pv));
	for (unsigned pv = 0; pv < 2; pv++) {
		char ns[24];
		per_acq(ns, sizeof(ns), best[pv], SPIN_BENCH_UNCONTENDED);
		bench_report("spinlock", 1, "locks=1 mode=%s ns_per_acq=%s",
			     pv ? "uncontended-pv" : "uncontended-nopv", ns);
	}
}

BENCH(spinlock)
{
	bool saved = spinlock_backoff, saved_pv = spinlock_pv;
	for (unsigned locks = 1; locks <= SPIN_BENCH_MAX_LOCKS; locks *= SPIN_BENCH_MAX_LOCKS)
		for (enum spin_bench_mode m = MODE_BACKOFF; m <= MODE_PV; m++)
			spin_bench_phase(locks, m);
	spin_bench_uncontended();
	spinlock_backoff = saved;
	spin_pv_set(saved_pv);
	spin_delay_reset();
}

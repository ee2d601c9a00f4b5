/*
 * Lock torture, in the style of Linux's kernel/locking/locktorture.c: a writer on
 * every online CPU (or as many as asked) takes one lock of the chosen type over
 * and over, holds it for a random short time (now and then for a long one, so that
 * every other CPU queues behind it), and checks on the way that it was alone
 * inside. Used by the selftests (tests/kernel/locktorture_test.c, a short run per
 * type, on at most 8 CPUs) and by the benchmark (tests/bench/locktorture_bench.c,
 * every CPU, long runs: torture_s=).
 *
 * What a run checks:
 *   - the owner field: a writer finds it 0 on entry, sets it to its CPU + 1, and
 *     finds it still so just before it releases; anything else is a violation;
 *   - a shared counter, read on entry and written back + 1 on the way out (a
 *     non-atomic increment with the hold in between): it must end equal to the sum
 *     of the per-CPU acquisition counts;
 *   - rwlock readers (on the same CPUs, three reads to a write): no writer inside
 *     (the owner field is the writer-inside flag) at entry and exit, and writers
 *     find no reader inside; rwlock and seqlock readers find the payload (words a
 *     writer fills one by one, the hold in the middle) all alike;
 *   - starvation, for the FIFO locks (the ticket spinlocks, the hand-off mutex):
 *     the most acquisitions by one CPU may be at most LT_FIFO_FAIRNESS_BOUND times
 *     the fewest. Only acquisitions made once every CPU had the lock once count,
 *     so a vCPU the host started late is not blamed for rounds it was not there for.
 *
 * A run lasts at least its time and until every CPU has had the lock (for a FIFO
 * lock, its minimum of counted acquisitions), but never past its hard limit: it is sized by
 * time, not by a count, because at SMP=64 on 2 host cores one lock hand-off may wait
 * tens of ms for the host to run the next ticket's vCPU. A run cut short by the hard
 * limit is judged on the counts it has; a slow host makes them small, not unfair.
 */
#ifndef TESTS_LOCKTORTURE_H
#define TESTS_LOCKTORTURE_H

#include <grace/types.h>

enum lt_lock_type {
	LT_SPIN_BACKOFF, /* ticket spinlock, proportional backoff (spinlock_backoff on) */
	LT_SPIN_PLAIN,	 /* ticket spinlock, plain spinning (spin_lock_set_plain) */
	LT_RWLOCK,	 /* rwlock: a write, then LT_READS_PER_WRITE reads, on every CPU */
	LT_MUTEX,	 /* FIFO hand-off mutex; a long hold sleeps */
	LT_SEQLOCK,	 /* seqlock writers, and readers that retry */
	LT_NR_LOCK_TYPES,
	LT_NONE = LT_NR_LOCK_TYPES, /* no lock at all: the negative control, must fail */
};

/*
 * FIFO locks: the most counted acquisitions by one CPU over the fewest. A ticket
 * lock or the mutex under contention serves every waiting CPU once per round, so
 * the counts differ by the rounds a CPU spent outside the queue (its vCPU stopped by
 * the host between its unlock and its next lock call, a few instructions): measured
 * 1.00-1.33 under QEMU at SMP=1 to 64 on 2 host cores, the 1.33 being 4 against 3
 * in a run the hard limit cut short; but 4.7 with LOCKDEP=1 and 9.4 without it on
 * a host busy with other QEMU runs, whose vCPUs miss rounds outside the queue.
 * Linux's locktorture flags max > 2 * min; 16 leaves room for a busy host and
 * still fails a waiter the lock leaves behind. The rwlock and seqlock have no bound
 * (docs/testing.md, "Lock torture", says why).
 */
#define LT_FIFO_FAIRNESS_BOUND 16

/*
 * A FIFO lock's run ends on time only once every CPU has made LT_MIN_TOTAL / CPUs
 * counted acquisitions, at least LT_MIN_ROUNDS: enough rounds for a ratio of
 * LT_FIFO_FAIRNESS_BOUND to mean something (a FIFO lock serves every CPU once a
 * round: 8 rounds give 8 or 9 each, 1.12), few enough for a loaded host. A spinning
 * waiter's vCPU waits its turn on the host like any busy thread, so each ticket-lock
 * hand-off waits for the host to run the next one: measured 4-16 ms at SMP=4 and 7-14
 * ms at SMP=8 under QEMU on 2 host cores at a load of 8 to 60. (Mutex waiters sleep,
 * and their vCPUs halt: hand-offs there are a hundred times faster.)
 */
#define LT_MIN_TOTAL 32
#define LT_MIN_ROUNDS 4

struct lt_params {
	u64 run_ns;  /* at least this long, and until every CPU had the lock (FIFO: its minimum) */
	u64 hard_ns; /* but never longer than this */
	unsigned cpus; /* on this CPU and cpus - 1 others (smp_pick_cpus()); 0: every online CPU */
};

struct lt_result {
	enum lt_lock_type type;
	const char *name;
	unsigned cpus;
	u64 elapsed_ns;
	u64 min_per_cpu;   /* counted acquisitions each CPU needed (FIFO locks; else 0) */
	bool hard_stop;	   /* ended by hard_ns, some CPU short of the lock or min_per_cpu */
	u64 writes, reads; /* acquisitions, all CPUs (reads: rwlock and seqlock) */
	u64 counted_writes, counted_reads; /* of which counted: once every CPU had the lock */
	u64 counted_ns;			   /* how long the counted part lasted */
	u64 counter;		/* the non-atomic counter at the end: must equal writes */
	u64 fair_min, fair_max; /* counted (fairness) acquisitions: fewest, most by one CPU */
	u64 min, max;		/* all acquisitions: fewest, most by one CPU */
	u64 violations;		/* writer found another writer or a reader inside */
	u64 read_violations;	/* reader found a writer inside */
	u64 torn;		/* reads that saw a half-written payload */
	u64 read_retries;	/* seqlock reads that had to be retried (not an error) */
	u64 long_holds;
};

const char *lt_lock_name(enum lt_lock_type type);

/* Run one type on p->cpus CPUs (from the test or bench thread; uses smp_run_on()). */
void lt_run(enum lt_lock_type type, const struct lt_params *p, struct lt_result *r);

/* This CPU's counted acquisitions (writes) in the last run. */
u64 lt_cpu_counted_writes(unsigned cpu);

/*
 * Why the run failed (exclusion violated, counter off, a torn read, a CPU starved,
 * FIFO fairness past its bound) in buf, or NULL when it passed.
 */
const char *lt_verdict(const struct lt_result *r, char *buf, size_t size);
/* Is unfairness all that is wrong with r (or nothing)? Exclusion and lost updates are not. */
bool lt_only_unfair(const struct lt_result *r);

/* "1.05": max over min with two decimals, "inf" when min is 0. */
void lt_format_ratio(u64 max, u64 min, char *buf, size_t size);

/* One compact line: "# locktorture <name>: ... writes min/max ... fairness ...". */
void lt_print_summary(const struct lt_result *r);

#endif

/*
 * The lock torture engine (see locktorture.h): one lt_run() is one lock type on
 * every online CPU at once (or the number asked for), through smp_run_on(). Each
 * type is a small table of operations, as in Linux's lock_torture_ops: how to take
 * and release the lock for writing, and for the types that have them, one read.
 * The checks live here, once, not per type: the write section (owner field,
 * counter, payload) and the two kinds of read section.
 *
 * Shared state: owner, counter and payload are written only by a writer holding the
 * lock (that is the point: with a broken lock two writers race on them); readers
 * counts the rwlock readers inside; the per-CPU slots are written only by their
 * own CPU and read by lt_run() after smp_run_on() returned.
 *
 * Time is kept by one timer, lt_stopper, on the CPU that called lt_run(): the
 * workers only read lt.stop. Under TCG on x86 every clock read (rdtsc) takes one
 * spinlock for the whole machine (QEMU's cpu_get_ticks()); with 64 vCPUs reading the
 * clock in a loop, as delay_ns() does, other vCPUs were kept from running for up to
 * 20 s (measured: a CPU took that long to leave smp_sync_wait() after the last one
 * arrived; with the clock read rarely, under half a second).
 *
 * Counted: what a CPU does once every CPU has had the lock once (lt.joined). Before
 * that the first vCPUs the host runs have the lock to themselves, thousands of
 * times at SMP=8 on a loaded host; fairness and the bench's rates use the counted
 * part only, the exclusion checks everything.
 */
#include <grace/cpumask.h>
#include <grace/mutex.h>
#include <grace/printk.h>
#include <grace/rwlock.h>
#include <grace/sched.h>
#include <grace/seqlock.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/timer.h>

#include "locktorture.h"

/* rwlock and seqlock: each CPU reads this many times between two writes. */
#define LT_READS_PER_WRITE 3
/*
 * A short hold: a random 0 .. LT_SHORT_HOLD_LOOPS - 1 empty loops, at most a
 * microsecond or so, about the critical section of a hash-table update; short next
 * to a hand-off under QEMU (tens of us or more), so the lock stays contended.
 * Linux's locktorture mostly holds for nothing or 2 us. Loops, not the clock (see
 * the top of the file).
 */
#define LT_SHORT_HOLD_LOOPS 256
/*
 * One hold in LT_LONG_HOLD_ODDS lasts LT_LONG_HOLD_NS instead, long enough for every
 * other CPU to queue behind it (Linux: longdelay_ms, rarely): this is when the lock
 * is most contended and a broken hand-off shows. A mutex holder sleeps through it.
 * Contended under QEMU, an acquisition takes tens of us or more, so these are a few
 * per run at SMP=4; uncontended (SMP=1) they take half the time, which costs nothing.
 */
#define LT_LONG_HOLD_ODDS 1024
#define LT_LONG_HOLD_NS (1 * NSEC_PER_MSEC)
/* A long hold reads the clock every this many empty loops: microseconds under TCG. */
#define LT_LOOPS_PER_CLOCK 4096
/* lt_stopper looks at the clock and the counts this often once the run is due to end. */
#define LT_STOP_POLL_NS (10 * NSEC_PER_MSEC)
/* Words a writer fills one by one, with its hold in the middle; readers check they agree. */
#define LT_PAYLOAD_WORDS 4

struct lt_cpu {
	u64 rng;
	u64 writes, reads;		   /* acquisitions for writing, reads */
	u64 counted_writes, counted_reads; /* of which counted */
	u64 read_retries;
	u64 violations, read_violations, torn, long_holds;
	bool counted; /* every CPU had the lock once: count from now on */
} __cacheline_aligned;

struct lt_ops {
	const char *name;
	/*
	 * The fairness bound applies: FIFO acquisition, and nothing but the lock in the
	 * loop. The seqlock's writers queue on a ticket lock too, but its CPUs also read
	 * in between, for as long as the host lets them: their write counts measure the
	 * host as much as the lock.
	 */
	bool fair;
	bool may_sleep; /* a long hold sleeps instead of spinning */
	void (*init)(void);
	void (*write_lock)(void);
	void (*write_unlock)(void);
	void (*read)(struct lt_cpu *c); /* one read section; NULL: writers only */
};

static struct {
	/* Written by the writer holding the lock: one line, moving with the lock. */
	u32 owner __cacheline_aligned; /* writer inside + 1, 0 when none */
	u64 counter;
	u64 payload[LT_PAYLOAD_WORDS];
	atomic_t readers __cacheline_aligned; /* rwlock readers inside */
	/* Set up before the run, read by every CPU. */
	const struct lt_ops *ops __cacheline_aligned;
	unsigned cpus; /* taking part: the CPUs in mask */
	struct cpumask mask;
	u64 min_per_cpu; /* counted acquisitions each CPU needs before the run may end */
	u64 deadline, hard_deadline;
	struct smp_sync start;
	atomic_t joined;  /* CPUs that have had the lock once */
	atomic_t reached; /* CPUs with min_per_cpu counted acquisitions */
	u64 joined_ns;	  /* when the last CPU joined: the counted part begins */
	u64 stop_ns;	  /* when lt_stopper ended the run */
	u32 stop;	  /* set by lt_stopper: every worker leaves after its operation */
	u32 hard_stop;
	struct lt_cpu cpu[MAX_CPUS];
} lt;

static struct {
	spinlock_t spin;
	rwlock_t rw;
	struct mutex mutex;
	seqlock_t seq;
} lt_locks;

static struct timer lt_stopper;

/* xorshift64*: a few instructions, per CPU, good enough to vary hold times. */
static u32 lt_random(struct lt_cpu *c)
{
	u64 x = c->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return (u32)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* Busy for ns, reading the clock only every LT_LOOPS_PER_CLOCK loops. */
static void lt_spin_for(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	do
		for (unsigned n = 0; n < LT_LOOPS_PER_CLOCK; n++)
			barrier();
	while (arch_clock_ns() < end);
}

static void lt_hold(struct lt_cpu *c)
{
	if (lt_random(c) % LT_LONG_HOLD_ODDS == 0) {
		c->long_holds++;
		if (lt.ops->may_sleep)
			msleep(LT_LONG_HOLD_NS / NSEC_PER_MSEC);
		else
			lt_spin_for(LT_LONG_HOLD_NS);
		return;
	}
	for (u32 n = lt_random(c) % LT_SHORT_HOLD_LOOPS; n; n--)
		barrier();
}

/* Under the write lock: alone inside, from entry to exit. */
static void lt_write_section(struct lt_cpu *c, u32 me)
{
	if (READ_ONCE(lt.owner) != 0 || atomic_read(&lt.readers) != 0)
		c->violations++;
	WRITE_ONCE(lt.owner, me);
	u64 v = READ_ONCE(lt.counter) + 1;
	for (unsigned i = 0; i < LT_PAYLOAD_WORDS; i++) {
		if (i == LT_PAYLOAD_WORDS / 2)
			lt_hold(c);
		WRITE_ONCE(lt.payload[i], v);
	}
	WRITE_ONCE(lt.counter, v);
	if (READ_ONCE(lt.owner) != me || atomic_read(&lt.readers) != 0)
		c->violations++;
	WRITE_ONCE(lt.owner, 0);
}

/* A payload read in one go must be one writer's: every word alike. */
static bool lt_payload_torn(const u64 *words)
{
	for (unsigned i = 1; i < LT_PAYLOAD_WORDS; i++)
		if (words[i] != words[0])
			return true;
	return false;
}

static void lt_read_payload(u64 *words, struct lt_cpu *c)
{
	for (unsigned i = 0; i < LT_PAYLOAD_WORDS; i++) {
		if (i == LT_PAYLOAD_WORDS / 2)
			lt_hold(c);
		words[i] = READ_ONCE(lt.payload[i]);
	}
}

/* ---- the lock types ---- */

static void lt_spin_init(void)
{
	spin_lock_init(&lt_locks.spin);
}

static void lt_spin_plain_init(void)
{
	spin_lock_init(&lt_locks.spin);
	spin_lock_set_plain(&lt_locks.spin, true);
}

static void lt_spin_lock(void)
{
	spin_lock(&lt_locks.spin);
}

static void lt_spin_unlock(void)
{
	spin_unlock(&lt_locks.spin);
}

static void lt_rw_init(void)
{
	lt_locks.rw = (rwlock_t)RWLOCK_INIT;
}

static void lt_rw_write_lock(void)
{
	write_lock(&lt_locks.rw);
}

static void lt_rw_write_unlock(void)
{
	write_unlock(&lt_locks.rw);
}

/*
 * A reader shares the lock with other readers only. The readers count and owner
 * field need no ordering of their own: with a working lock, read_lock()'s acquire
 * and write_unlock()'s release order them (and read_unlock()'s release the
 * writer's view of readers); with a broken one they show the overlap.
 */
static void lt_rw_read(struct lt_cpu *c)
{
	u64 words[LT_PAYLOAD_WORDS];

	read_lock(&lt_locks.rw);
	atomic_inc(&lt.readers);
	bool writer = READ_ONCE(lt.owner) != 0;
	lt_read_payload(words, c);
	writer |= READ_ONCE(lt.owner) != 0;
	atomic_dec(&lt.readers);
	read_unlock(&lt_locks.rw);
	c->reads++;
	c->read_violations += writer;
	c->torn += lt_payload_torn(words);
}

static void lt_mutex_init(void)
{
	mutex_init(&lt_locks.mutex);
}

static void lt_mutex_lock(void)
{
	mutex_lock(&lt_locks.mutex);
}

static void lt_mutex_unlock(void)
{
	mutex_unlock(&lt_locks.mutex);
}

static void lt_seq_init(void)
{
	lt_locks.seq = (seqlock_t)SEQLOCK_INIT;
}

static void lt_seq_write_lock(void)
{
	write_seqlock(&lt_locks.seq);
}

static void lt_seq_write_unlock(void)
{
	write_sequnlock(&lt_locks.seq);
}

/*
 * One attempt, not a retry loop: with writers on every other CPU a reader may have
 * to retry for long, and the run must be able to end. A read that would have to be
 * retried counts in read_retries, not reads, and its words are not checked.
 */
static void lt_seq_read(struct lt_cpu *c)
{
	u64 words[LT_PAYLOAD_WORDS];
	u32 seq = read_seqbegin(&lt_locks.seq);
	lt_read_payload(words, c);
	if (read_seqretry(&lt_locks.seq, seq)) {
		c->read_retries++;
		return;
	}
	c->reads++;
	c->torn += lt_payload_torn(words);
}

static void lt_nop(void) {}

static const struct lt_ops lt_types[] = {
    [LT_SPIN_BACKOFF] = {.name = "spin_backoff",
			 .fair = true,
			 .init = lt_spin_init,
			 .write_lock = lt_spin_lock,
			 .write_unlock = lt_spin_unlock},
    [LT_SPIN_PLAIN] = {.name = "spin_plain",
		       .fair = true,
		       .init = lt_spin_plain_init,
		       .write_lock = lt_spin_lock,
		       .write_unlock = lt_spin_unlock},
    [LT_RWLOCK] = {.name = "rwlock",
		   .init = lt_rw_init,
		   .write_lock = lt_rw_write_lock,
		   .write_unlock = lt_rw_write_unlock,
		   .read = lt_rw_read},
    [LT_MUTEX] = {.name = "mutex",
		  .fair = true,
		  .may_sleep = true,
		  .init = lt_mutex_init,
		  .write_lock = lt_mutex_lock,
		  .write_unlock = lt_mutex_unlock},
    [LT_SEQLOCK] = {.name = "seqlock",
		    .init = lt_seq_init,
		    .write_lock = lt_seq_write_lock,
		    .write_unlock = lt_seq_write_unlock,
		    .read = lt_seq_read},
    [LT_NONE] = {.name = "none", .init = lt_nop, .write_lock = lt_nop, .write_unlock = lt_nop},
};

const char *lt_lock_name(enum lt_lock_type type)
{
	return lt_types[type].name;
}

/* ---- the run ---- */

static void lt_count_write(struct lt_cpu *c)
{
	if (c->writes++ == 0 && (unsigned)atomic_inc_return(&lt.joined) == lt.cpus)
		WRITE_ONCE(lt.joined_ns, arch_clock_ns());
	if (!c->counted)
		c->counted = (unsigned)atomic_read(&lt.joined) == lt.cpus;
	if (c->counted && ++c->counted_writes == lt.min_per_cpu)
		atomic_inc(&lt.reached);
}

/*
 * Timer, on the CPU that runs lt_run(): ends the run once it is due, every CPU has
 * had the lock (at SMP=64 the last vCPUs may take longer than the run to start) and,
 * for a FIFO lock, every CPU has its minimum; or at the hard limit whatever the counts.
 */
static void lt_stopper_fn(struct timer *t)
{
	u64 now = arch_clock_ns();
	bool due = now >= lt.deadline && (unsigned)atomic_read(&lt.joined) == lt.cpus &&
		   (!lt.min_per_cpu || (unsigned)atomic_read(&lt.reached) == lt.cpus);
	if (!due && now < lt.hard_deadline) {
		timer_add(t, now + LT_STOP_POLL_NS);
		return;
	}
	lt.stop_ns = now;
	WRITE_ONCE(lt.hard_stop, !due);
	WRITE_ONCE(lt.stop, 1);
}

static void lt_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	struct lt_cpu *c = &lt.cpu[cpu];
	const struct lt_ops *ops = lt.ops;

	c->rng = (cpu + 1) * 0x9E3779B97F4A7C15ULL ^ arch_clock_ns();
	smp_sync_wait(&lt.start, lt.cpus);
	for (u64 i = 0; !READ_ONCE(lt.stop); i++) {
		if (ops->read && i % (LT_READS_PER_WRITE + 1) != 0) {
			u64 reads = c->reads;
			ops->read(c);
			c->counted_reads += c->counted ? c->reads - reads : 0;
			continue;
		}
		ops->write_lock();
		lt_write_section(c, cpu + 1);
		ops->write_unlock();
		lt_count_write(c);
	}
}

void lt_run(enum lt_lock_type type, const struct lt_params *p, struct lt_result *r)
{
	const struct lt_ops *ops = &lt_types[type];
	bool saved_backoff = spinlock_backoff;
	unsigned cpu;

	memset(&lt, 0, sizeof(lt));
	lt.ops = ops;
	preempt_disable();
	lt.cpus = smp_pick_cpus(p->cpus ? p->cpus : num_online_cpus(), &lt.mask);
	preempt_enable();
	ops->init();
	/*
	 * Backoff is the global mode, which spinlock=plain turns off; plain is set on the
	 * lock itself. The other types' spinlocks (the seqlock's, the mutex's wait_lock)
	 * keep the mode the boot chose.
	 */
	if (type == LT_SPIN_BACKOFF)
		spinlock_backoff = true;
	/*
	 * The FIFO locks run until every CPU has had its share of a total, so that the
	 * fairness ratio has counts behind it; a few rounds at SMP=64, each hand-off
	 * of which may wait for the host to run the next ticket's vCPU.
	 */
	if (ops->fair)
		lt.min_per_cpu = MAX(LT_MIN_TOTAL / lt.cpus, (unsigned)LT_MIN_ROUNDS);
	u64 start = arch_clock_ns();
	lt.deadline = start + p->run_ns;
	lt.hard_deadline = start + MAX(p->hard_ns, p->run_ns);
	timer_init(&lt_stopper, lt_stopper_fn);
	timer_add(&lt_stopper, lt.deadline);
	smp_run_on(lt.cpus, lt_worker, NULL);
	timer_cancel_sync(&lt_stopper);
	spinlock_backoff = saved_backoff;

	*r = (struct lt_result){.type = type,
				.name = ops->name,
				.cpus = lt.cpus,
				.elapsed_ns = arch_clock_ns() - start,
				.hard_stop = lt.hard_stop,
				.counter = lt.counter,
				.min_per_cpu = lt.min_per_cpu,
				/* Stored by the last CPU to join, before smp_run_on() returned. */
				.counted_ns =
				    lt.joined_ns ? lt.stop_ns - MIN(lt.joined_ns, lt.stop_ns) : 0,
				.fair_min = ~0ULL,
				.min = ~0ULL};
	for_each_cpu(cpu, &lt.mask) {
		struct lt_cpu *c = &lt.cpu[cpu];
		r->writes += c->writes;
		r->reads += c->reads;
		r->counted_writes += c->counted_writes;
		r->counted_reads += c->counted_reads;
		r->fair_min = MIN(r->fair_min, c->counted_writes);
		r->fair_max = MAX(r->fair_max, c->counted_writes);
		r->min = MIN(r->min, c->writes);
		r->max = MAX(r->max, c->writes);
		r->violations += c->violations;
		r->read_violations += c->read_violations;
		r->torn += c->torn;
		r->read_retries += c->read_retries;
		r->long_holds += c->long_holds;
	}
}

u64 lt_cpu_counted_writes(unsigned cpu)
{
	return lt.cpu[cpu].counted_writes;
}

bool lt_only_unfair(const struct lt_result *r)
{
	return !r->violations && !r->read_violations && r->counter == r->writes && !r->torn;
}

const char *lt_verdict(const struct lt_result *r, char *buf, size_t size)
{
	const struct lt_ops *ops = &lt_types[r->type];
	if (r->violations || r->read_violations)
		snprintf(buf, size, "%s: %llu writer and %llu reader exclusion violations", r->name,
			 r->violations, r->read_violations);
	else if (r->counter != r->writes)
		snprintf(buf, size, "%s: counter %llu after %llu acquisitions (updates lost)",
			 r->name, r->counter, r->writes);
	else if (r->torn)
		snprintf(buf, size, "%s: %llu reads saw a half-written payload", r->name, r->torn);
	else if (ops->fair && r->fair_max > LT_FIFO_FAIRNESS_BOUND * MAX(r->fair_min, 1ULL))
		snprintf(buf, size,
			 "%s: unfair: %llu acquisitions by one CPU, %llu by another (bound "
			 "%u to 1)",
			 r->name, r->fair_max, r->fair_min, LT_FIFO_FAIRNESS_BOUND);
	else
		return NULL;
	return buf;
}

void lt_format_ratio(u64 max, u64 min, char *buf, size_t size)
{
	if (min == 0)
		snprintf(buf, size, "inf");
	else
		/* Two decimals without floating point (the kernel has no FPU state). */
		snprintf(buf, size, "%llu.%02llu", max / min, (max % min) * 100 / min);
}

void lt_print_summary(const struct lt_result *r)
{
	char fair[24], bound[16] = "none";
	lt_format_ratio(r->fair_max, r->fair_min, fair, sizeof(fair));
	if (lt_types[r->type].fair)
		snprintf(bound, sizeof(bound), "%u", LT_FIFO_FAIRNESS_BOUND);
	printk("# locktorture %s: %u CPUs, %llu ms%s: %llu writes (per CPU %llu..%llu), counted "
	       "%llu in %llu ms (per CPU %llu..%llu, fairness %s, bound %s), %llu reads (%llu "
	       "retried), %llu long holds, %llu+%llu violations, %llu torn\n",
	       r->name, r->cpus, r->elapsed_ns / NSEC_PER_MSEC, r->hard_stop ? " (hard limit)" : "",
	       r->writes, r->min, r->max, r->counted_writes, r->counted_ns / NSEC_PER_MSEC,
	       r->fair_min, r->fair_max, fair, bound, r->reads, r->read_retries, r->long_holds,
	       r->violations, r->read_violations, r->torn);
}

/*
 * Ticket spinlock selftests: mutual exclusion on all CPUs at once (with a negative
 * control that must lose updates without the lock), FIFO hand-off, trylock, and
 * the backoff tuning's bounds and adaptation, and the default mode following the
 * spinlock= boot argument.
 *
 * Work is a fixed total split over the CPUs where hand-offs are dear: with 64 vCPUs
 * on 2 host cores and no paravirtual waits every hand-off can wait for the host to
 * schedule the next ticket's vCPU for milliseconds, so the total, not the per-CPU
 * count, bounds the run time. With them, each CPU does its SMP=4 share (lock_sizing.h).
 */
#include <grace/cmdline.h>
#include <grace/page_alloc.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <kernel/locking/spinlock_internal.h>
#include "lock_sizing.h"

/*
 * Acquisitions over all CPUs. Measured on 2 host cores without paravirtual waits: a
 * hand-off costs about 2 ms at SMP=4 and tens of ms at SMP=64, when the next ticket's
 * vCPU waits for a host time slice; 800 keeps each test within seconds to tens of
 * seconds. With them (lock_sizing.h) every CPU does its SMP=4 share, 200.
 */
#define LOCK_TEST_TOTAL 800
#define LOCK_TEST_MIN_PER_CPU 8
#define RACE_WINDOW_LOOPS 50 /* read-delay-write: wide enough to lose updates without a lock */
/*
 * Races need two vCPUs running at the same moment, which a loaded 2-core host
 * grants only now and then: repeat a round until one shows, for up to this long.
 */
#define RACE_RETRY_NS (20 * NSEC_PER_SEC)

static unsigned iters_per_cpu(void)
{
	return lock_sized_share(LOCK_TEST_TOTAL, num_online_cpus(), LOCK_TEST_MIN_PER_CPU);
}

struct counter_test {
	spinlock_t lock;
	bool use_lock;
	unsigned iters;
	struct smp_sync start;
	u64 counter;	   /* under lock, when use_lock */
	u32 holder;	   /* CPU inside the critical section + 1, 0 when none */
	atomic_t overlaps; /* critical sections that found another CPU inside */
};

/* A non-atomic read-modify-write with a window in the middle. */
static void counter_bump(struct counter_test *t)
{
	u64 v = READ_ONCE(t->counter);
	for (int i = 0; i < RACE_WINDOW_LOOPS; i++)
		cpu_relax();
	WRITE_ONCE(t->counter, v + 1);
}

static void counter_worker(void *arg)
{
	struct counter_test *t = arg;
	u32 me = smp_processor_id() + 1;

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		if (!t->use_lock) {
			counter_bump(t);
			continue;
		}
		spin_lock(&t->lock);
		if (READ_ONCE(t->holder) != 0)
			atomic_inc(&t->overlaps);
		WRITE_ONCE(t->holder, me);
		counter_bump(t);
		/* Still ours: nobody entered while we held the lock. */
		if (READ_ONCE(t->holder) != me)
			atomic_inc(&t->overlaps);
		WRITE_ONCE(t->holder, 0);
		spin_unlock(&t->lock);
	}
}

static void counter_run(struct counter_test *t, bool use_lock)
{
	*t = (struct counter_test){
	    .lock = SPINLOCK_INIT, .use_lock = use_lock, .iters = iters_per_cpu()};
	smp_run_all(counter_worker, t);
}

static struct counter_test counter_test;

static void mutual_exclusion(bool backoff)
{
	bool saved = spinlock_backoff;
	spinlock_backoff = backoff;
	counter_run(&counter_test, true);
	spinlock_backoff = saved;

	EXPECT_EQ(counter_test.counter, (u64)counter_test.iters * num_online_cpus());
	EXPECT_EQ(atomic_read(&counter_test.overlaps), 0);
	EXPECT_FALSE(spin_is_locked(&counter_test.lock));
}

TEST(spinlock, mutual_exclusion_backoff)
{
	mutual_exclusion(true);
}

TEST(spinlock, mutual_exclusion_plain)
{
	mutual_exclusion(false);
}

/* The same loop without the lock must lose updates, or the test above proves nothing. */
TEST(spinlock, negative_control_loses_updates)
{
	if (num_online_cpus() < 2) {
		test_skip("needs two CPUs to race");
		return;
	}
	u64 lost = 0, deadline = arch_clock_ns() + RACE_RETRY_NS;
	do {
		counter_run(&counter_test, false);
		lost = (u64)counter_test.iters * num_online_cpus() - counter_test.counter;
	} while (!lost && arch_clock_ns() < deadline);
	/*
	 * No update lost in all that time means no two vCPUs ran the loop at once (a
	 * host busy with other work): nothing was shown either way. The runner fails a
	 * test skipped in every configuration, so some boot of the matrix must race.
	 */
	if (!lost) {
		test_skip("no two CPUs ran the unlocked loop at once: the host gave no overlap");
		return;
	}
	EXPECT_GT(lost, 0);
}

/* FIFO: the order in which CPUs enter equals the order of the tickets they drew. */
struct fifo_test {
	spinlock_t lock;
	unsigned iters;
	struct smp_sync start;
	u32 *entered; /* ticket of the i-th entrant; under lock */
	u32 n;	      /* under lock */
};

static void fifo_worker(void *arg)
{
	struct fifo_test *t = arg;
	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		spin_lock(&t->lock);
		/* Held: owner is the ticket this CPU was served with. */
		t->entered[t->n++] = spin_owner_ticket(t->lock.owner) / SPIN_TICKET_INC;
		spin_unlock(&t->lock);
	}
}

TEST(spinlock, ticket_fifo_order)
{
	static struct fifo_test t;
	unsigned total = iters_per_cpu() * num_online_cpus();
	unsigned order = pages_order(total * sizeof(u32));

	t = (struct fifo_test){.lock = SPINLOCK_INIT, .iters = iters_per_cpu()};
	t.entered = alloc_pages(order);
	ASSERT_TRUE(t.entered != NULL);
	smp_run_all(fifo_worker, &t);

	ASSERT_EQ(t.n, total);
	for (u32 i = 0; i < t.n; i++)
		if (!EXPECT_EQ(t.entered[i], i))
			break;
	free_pages(t.entered, order);
}

TEST(spinlock, trylock)
{
	static spinlock_t lock = SPINLOCK_INIT;
	EXPECT_FALSE(spin_is_locked(&lock));
	ASSERT_TRUE(spin_trylock(&lock));
	EXPECT_TRUE(spin_is_locked(&lock));
	EXPECT_FALSE(spin_trylock(&lock));
	spin_unlock(&lock);
	EXPECT_FALSE(spin_is_locked(&lock));
	spin_lock(&lock);
	EXPECT_FALSE(spin_trylock(&lock));
	spin_unlock(&lock);
	ASSERT_TRUE(spin_trylock(&lock));
	spin_unlock(&lock);
}

TEST(spinlock, irqsave_restores_state)
{
	static spinlock_t lock = SPINLOCK_INIT;
	unsigned long outer = arch_irq_save();
	unsigned long flags = spin_lock_irqsave(&lock);
	EXPECT_TRUE(arch_irqs_disabled());
	spin_unlock_irqrestore(&lock, flags);
	EXPECT_TRUE(arch_irqs_disabled());
	arch_irq_restore(outer);
	EXPECT_FALSE(arch_irqs_disabled());
}

/* The tuning step alone: bounded on both sides, and rising when the lock stays busy. */
TEST(spinlock, backoff_delay_bounds)
{
	unsigned d = SPIN_DELAY_MIN;
	for (u32 owner = 0; owner < 8 * SPIN_DELAY_MAX; owner++) {
		d = spin_delay_next(d, false, owner);
		if (!EXPECT_LE(d, SPIN_DELAY_MAX))
			return;
	}
	EXPECT_EQ(d, SPIN_DELAY_MAX);
	/* About 3 increments per 8 busy polls: 80 busy polls from the minimum give 30. */
	d = SPIN_DELAY_MIN;
	for (u32 owner = 0; owner < 80; owner++)
		d = spin_delay_next(d, false, owner);
	EXPECT_EQ(d, SPIN_DELAY_MIN + 30);
	for (int i = 0; i < 2 * SPIN_DELAY_MAX; i++) {
		d = spin_delay_next(d, true, 0);
		if (!EXPECT_GE(d, SPIN_DELAY_MIN))
			return;
	}
	EXPECT_EQ(d, SPIN_DELAY_MIN);
}

/*
 * Contend one lock held for long: some CPU's delay for that lock's slot must rise
 * above the minimum while it waits (the peak; the value left at the end may have
 * decayed again, since a vCPU the host descheduled often finds the lock free at
 * its first poll), none past the maximum, and a lock in another slot must keep
 * the minimum (delays are per hashed lock address, not per CPU).
 */
#define LONG_HOLD_LOOPS 20000 /* tens of microseconds under TCG: waiters poll many times */
#define LONG_HOLD_TOTAL 128   /* acquisitions over all CPUs: each hand-off may wait for the host */

static unsigned long_hold_iters(unsigned cpus)
{
	return lock_sized_share(LONG_HOLD_TOTAL, cpus, 2);
}

struct adapt_test {
	spinlock_t locks[SPIN_DELAY_SLOTS + 1];
	spinlock_t *hot;
	unsigned cpus; /* taking part: this one and the first cpus - 1 others */
	unsigned iters;
	struct smp_sync start;
};

static void adapt_worker(void *arg)
{
	struct adapt_test *t = arg;
	smp_sync_wait(&t->start, t->cpus);
	for (unsigned i = 0; i < t->iters; i++) {
		spin_lock(t->hot);
		for (int j = 0; j < LONG_HOLD_LOOPS; j++)
			cpu_relax();
		spin_unlock(t->hot);
	}
}

/* Contend t->hot from every CPU once, from freshly reset delay tables. */
static void adapt_round(struct adapt_test *t)
{
	t->start = (struct smp_sync){0};
	spin_delay_reset();
	smp_run_on(t->cpus, adapt_worker, t);
}

static unsigned adapt_max_peak(struct adapt_test *t)
{
	unsigned cpu, max = 0;
	for_each_online_cpu(cpu)
		max = MAX(max, spin_delay_peak_of_cpu(cpu, t->hot));
	return max;
}

/* A fresh test on locks[0], on at most cpus CPUs; false (and the test skipped) on one CPU. */
static bool adapt_init(struct adapt_test *t, unsigned cpus)
{
	if (num_online_cpus() < 2) {
		test_skip("needs two CPUs to contend");
		return false;
	}
	cpus = MIN(cpus, num_online_cpus());
	*t = (struct adapt_test){.cpus = cpus, .iters = long_hold_iters(cpus)};
	for (unsigned i = 0; i < ARRAY_SIZE(t->locks); i++)
		spin_lock_init(&t->locks[i]);
	t->hot = &t->locks[0];
	return true;
}

static void watched_waits_sum(u32 *tuned, u32 *plain)
{
	unsigned cpu;
	*tuned = *plain = 0;
	for_each_online_cpu(cpu) {
		u32 t, p;
		spin_delay_watched_waits(cpu, &t, &p);
		*tuned += t;
		*plain += p;
	}
}

TEST(spinlock, backoff_adapts_per_lock)
{
	static struct adapt_test t;
	unsigned cpu;

	if (!adapt_init(&t, MAX_CPUS))
		return;
	bool saved = spinlock_backoff, saved_single = spinlock_delay_single;
	spinlock_backoff = true;
	spin_delay_set_single(false); /* what this test is about, whatever the boot chose */
	spin_delay_watch(t.hot);
	/*
	 * Waiting only happens while holder and waiter run at once: retry until it did.
	 * The hot lock's own waits say so; a raised peak alone may be another lock's
	 * of the same slot (the kernel's locks share the table).
	 */
	u64 deadline = arch_clock_ns() + RACE_RETRY_NS;
	u32 tuned, plain;
	do {
		adapt_round(&t);
		watched_waits_sum(&tuned, &plain);
	} while ((adapt_max_peak(&t) == SPIN_DELAY_MIN || tuned == 0) &&
		 arch_clock_ns() < deadline);
	spinlock_backoff = saved;
	spin_delay_watch(NULL);
	/*
	 * No wait at all in that time means holder and waiter never ran at once (a host
	 * busy with other work): nothing was shown either way. The runner fails a test
	 * skipped in every configuration, so some boot of the matrix must contend.
	 */
	if (tuned == 0 && plain == 0) {
		spin_delay_set_single(saved_single);
		spin_delay_reset();
		test_skip("no CPU waited for the hot lock: the host gave no overlap");
		return;
	}
	EXPECT_GT(tuned, 0); /* the hot lock's waits went through the tuning path */
	EXPECT_EQ(plain, 0);

	for_each_online_cpu(cpu) {
		unsigned d = spin_delay_of_cpu(cpu, t.hot),
			 peak = spin_delay_peak_of_cpu(cpu, t.hot);
		EXPECT_GE(d, SPIN_DELAY_MIN);
		EXPECT_LE(peak, SPIN_DELAY_MAX);
		EXPECT_LE(d, peak);
		/*
		 * Per lock, not per CPU: the hot lock left other slots alone. Not a
		 * given slot: the kernel's own locks (run queues, wait queues) share the
		 * table and may be contended meanwhile; but with tuning per CPU only,
		 * every slot would have risen with the hot one.
		 */
		unsigned untouched = 0;
		for (unsigned i = 1; i <= SPIN_DELAY_SLOTS; i++)
			if (spin_delay_slot(&t.locks[i]) != spin_delay_slot(t.hot) &&
			    spin_delay_peak_of_cpu(cpu, &t.locks[i]) == SPIN_DELAY_MIN)
				untouched++;
		EXPECT_GT(untouched, 0);
	}
	EXPECT_GT(adapt_max_peak(&t), SPIN_DELAY_MIN);
	/* Only now: the reads above name the hashed slots. */
	spin_delay_set_single(saved_single);
	spin_delay_reset();
}

/*
 * spinlock_delay=single, the 2012 thread's first patch: one delay per CPU for every
 * lock, so the hot lock's tuning shows in the delay of a lock that was never
 * contended and hashes to another slot. (Per lock address, as in
 * backoff_adapts_per_lock, it would not.) Retried until the hot lock's delay rose.
 */
TEST(spinlock, single_delay_is_shared_by_every_lock)
{
	static struct adapt_test t;
	unsigned cpu;

	if (!adapt_init(&t, MAX_CPUS))
		return;
	spinlock_t *other = NULL;
	for (unsigned i = 1; i < ARRAY_SIZE(t.locks) && !other; i++)
		if (spin_delay_slot(&t.locks[i]) != spin_delay_slot(t.hot))
			other = &t.locks[i];
	ASSERT_TRUE(other != NULL);
	bool saved = spinlock_backoff, saved_single = spinlock_delay_single;
	spinlock_backoff = true;
	spin_delay_set_single(true);
	u64 deadline = arch_clock_ns() + RACE_RETRY_NS;
	do
		adapt_round(&t);
	while (adapt_max_peak(&t) == SPIN_DELAY_MIN && arch_clock_ns() < deadline);
	unsigned max_other = 0;
	for_each_online_cpu(cpu)
		max_other = MAX(max_other, spin_delay_peak_of_cpu(cpu, other));
	EXPECT_GT(adapt_max_peak(&t), SPIN_DELAY_MIN);
	EXPECT_GT(max_other, SPIN_DELAY_MIN);
	spinlock_backoff = saved;
	spin_delay_set_single(saved_single);
	spin_delay_reset();
}

TEST(spinlock, delay_mode_follows_cmdline)
{
	const char *v = cmdline_get("spinlock_delay");
	EXPECT_EQ(READ_ONCE(spinlock_delay_single), v && !strcmp(v, "single"));
}

/*
 * A plain lock must not touch the tuning table: its contended acquisitions all
 * take the plain path. (The table itself cannot tell: the kernel's own locks
 * share its slots.) Retried until the lock was contended at all.
 */
TEST(spinlock, plain_mode_does_not_tune)
{
	static struct adapt_test t;
	u32 tuned, plain;

	if (!adapt_init(&t, MAX_CPUS))
		return;
	spin_lock_set_plain(t.hot, true);
	spin_delay_watch(t.hot);
	u64 deadline = arch_clock_ns() + RACE_RETRY_NS;
	do {
		adapt_round(&t);
		watched_waits_sum(&tuned, &plain);
	} while (!plain && arch_clock_ns() < deadline);
	spin_delay_watch(NULL);
	EXPECT_GT(plain, 0);
	EXPECT_EQ(tuned, 0);
}

/*
 * spinlock=plain on the command line makes plain spinning every lock's default
 * (boot_apply_cmdline()); without it, or with spinlock=backoff, locks back off.
 * The switch alone is not the proof: a lock left at the default must then wait on
 * that path. Other tests flip spinlock_backoff and put it back, so here it is still
 * what the boot made of the argument. Retried until the lock was contended at all.
 *
 * On SPIN_MODE_CPUS at most: one contended acquisition is all it needs, and at
 * SMP=64 each further CPU adds hand-offs that wait for a host time slice (riscv64
 * at SMP=64 on 2 host cores: 5.8 s with all 64 CPUs, 0.3 s with 4).
 */
#define SPIN_MODE_CPUS 4
TEST(spinlock, default_follows_cmdline)
{
	static struct adapt_test t;
	const char *v = cmdline_get("spinlock");
	bool want_backoff = !(v && !strcmp(v, "plain"));
	u32 tuned, plain;

	EXPECT_EQ(READ_ONCE(spinlock_backoff), want_backoff);
	if (!adapt_init(&t, SPIN_MODE_CPUS))
		return;
	spin_delay_watch(t.hot);
	u64 deadline = arch_clock_ns() + RACE_RETRY_NS;
	do {
		adapt_round(&t);
		watched_waits_sum(&tuned, &plain);
	} while (!tuned && !plain && arch_clock_ns() < deadline);
	spin_delay_watch(NULL);
	spin_delay_reset();
	EXPECT_GT(tuned + plain, 0); /* contended at all: the checks below mean something */
	if (want_backoff) {
		EXPECT_GT(tuned, 0);
		EXPECT_EQ(plain, 0);
	} else {
		EXPECT_GT(plain, 0);
		EXPECT_EQ(tuned, 0);
	}
}

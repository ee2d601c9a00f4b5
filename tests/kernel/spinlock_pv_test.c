/*
 * Paravirtual spinlock waits (kernel/locking/spinlock_pv.c): the mode follows the
 * boot argument or the machine; waiters on every CPU at once halt and are each
 * kicked into the lock in ticket order, with mutual exclusion kept; a mix of
 * spinning and halted waiters loses no update; turning pv waits off wakes every
 * halted waiter; and with pv waits off nothing halts; an unlock reads the wait
 * table only when a waiter may have halted. The counts come from the per-CPU
 * statistics (halts, wakes, kicks, looks). The tests that need pv waits skip,
 * saying why, when the boot turned them off (spinlock_pv=off, or hardware).
 *
 * A halted waiter wakes for nothing but a kick (on x86_64 it has interrupts off
 * and only an NMI ends hlt), so a broken kick hangs the test rather than failing
 * it: the runner reports the hang and names the test (tests/mutants/pv_no_kick.patch).
 */
#include <grace/arch.h>
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <kernel/locking/spinlock_internal.h>
#include "lock_sizing.h"

/*
 * Rounds of the all-CPU test: in each, one CPU holds the lock until every other CPU
 * has halted waiting for it. A round at SMP=64 on 2 host cores takes about a second
 * (63 waiters spin their SPIN_PV_THRESHOLD loops, halt, and are kicked one by one).
 */
#define PV_ROUNDS 4
/*
 * How long a holder waits for the others to halt before it calls the round failed
 * (and the later rounds wait no more). Measured: 4 to 32 ms at SMP=64.
 */
#define PV_HALT_WAIT_NS (10 * NSEC_PER_SEC)
/* Work inside the critical section of the mixed test: long enough that waiters halt. */
#define PV_HOLD_LOOPS 3000
#define PV_MIX_TOTAL 800 /* acquisitions over all CPUs, as LOCK_TEST_TOTAL in spinlock_test.c */
#define PV_RETRY_NS (20 * NSEC_PER_SEC) /* RACE_RETRY_NS of spinlock_test.c */
/*
 * CPUs in the tests whose waiters spin without pv waits: each hand-off may then wait
 * for host time (the turning-off test took 6 s at SMP=64 on 2 host cores, the
 * pv-off one 68 s); a few CPUs prove what they check.
 */
#define PV_OFF_CPUS 8
#define PV_OFF_TOTAL 200 /* acquisitions over them in the pv-off test */

static char skip_reason[160];

/* false (and the test skipped, saying why) unless pv waits are on and there is someone to wait. */
static bool pv_usable(void)
{
	if (num_online_cpus() < 2) {
		test_skip("needs two CPUs: one to hold the lock, one to halt waiting");
		return false;
	}
	if (!READ_ONCE(spinlock_pv)) {
		snprintf(skip_reason, sizeof(skip_reason), "paravirtual waits are off (%s)",
			 spin_pv_boot_reason());
		test_skip(skip_reason);
		return false;
	}
	return true;
}

TEST(spinlock, pv_default_follows_cmdline)
{
	const char *v = cmdline_get("spinlock_pv");
	bool want = arch_is_virtual(NULL);
	if (v && !strcmp(v, "on"))
		want = true;
	else if (v && !strcmp(v, "off"))
		want = false;
	/* Other tests turn pv waits off and on again; here they are what the boot made them. */
	EXPECT_EQ(READ_ONCE(spinlock_pv), want);
	EXPECT_EQ(READ_ONCE(spinlock_pv_kick), want);
	EXPECT_TRUE(*spin_pv_boot_reason() != '\0');
}

struct pv_test {
	spinlock_t lock;
	unsigned cpus;		/* taking part */
	struct cpumask members; /* the CPUs taking part, each sets its own bit */
	atomic_t joined;	/* index of each CPU in cpu_of[] */
	u32 cpu_of[MAX_CPUS];	/* the CPUs taking part, in the order they joined */
	struct smp_sync sync[PV_ROUNDS][3];
	u32 held[PV_ROUNDS];		/* the round's holder has the lock; release */
	u64 halts_before[MAX_CPUS];	/* each CPU's own halt count at a round's start */
	u32 inside;			/* CPU in the critical section + 1, 0 when none */
	u64 counter;			/* under lock */
	atomic_t overlaps;		/* critical sections that found another CPU inside */
	atomic_t halted_entries;	/* waiters that had halted before they got the lock */
	atomic_t timeouts;		/* rounds whose holder gave up waiting for the halts */
	bool turn_off;			/* the holder turns pv waits off while they are halted */
	atomic_t table_not_empty;	/* after spin_pv_set(false), a CPU still in the table */
	u32 order[PV_ROUNDS][MAX_CPUS]; /* CPU of each entrant, by round; under lock */
	u32 entered[PV_ROUNDS];		/* under lock */
};

static u64 halts_of(unsigned cpu)
{
	struct spin_pv_stats st;
	spin_pv_stats_of_cpu(cpu, &st);
	return st.halts;
}

static void pv_critical_section(struct pv_test *t, unsigned round)
{
	u32 me = smp_processor_id() + 1;
	if (READ_ONCE(t->inside) != 0)
		atomic_inc(&t->overlaps);
	WRITE_ONCE(t->inside, me);
	t->order[round][t->entered[round]++] = me - 1;
	WRITE_ONCE(t->counter, t->counter + 1);
	for (int i = 0; i < 100; i++)
		cpu_relax();
	if (READ_ONCE(t->inside) != me)
		atomic_inc(&t->overlaps);
	WRITE_ONCE(t->inside, 0);
}

/* Every other CPU of the round is in the wait table for t->lock and has halted since. */
static bool others_halted(struct pv_test *t, unsigned holder)
{
	unsigned cpu;
	for_each_cpu(cpu, &t->members) {
		if (cpu == holder)
			continue;
		if (spin_pv_waiting_on(cpu) != &t->lock ||
		    halts_of(cpu) == READ_ONCE(t->halts_before[cpu]))
			return false;
	}
	return true;
}

static bool table_empty(void)
{
	unsigned cpu;
	for_each_online_cpu(cpu)
		if (spin_pv_waiting_on(cpu))
			return false;
	return true;
}

/*
 * smp_sync_wait(), but sleeping: CPUs done with a round go idle (and halt) instead
 * of spinning, or the vCPUs still to be kicked would wait for host time behind them.
 */
static void pv_sync_sleeping(struct smp_sync *s, unsigned n)
{
	atomic_inc_return(&s->arrived);
	/* Pairs with the others' atomic_inc_return(), as in smp_sync_wait(). */
	while ((unsigned)atomic_read_acquire(&s->arrived) < n)
		msleep(1);
}

static void pv_round(struct pv_test *t, unsigned round)
{
	unsigned cpu = smp_processor_id();

	t->halts_before[cpu] = halts_of(cpu);
	smp_sync_wait(&t->sync[round][0], t->cpus);
	unsigned holder = t->cpu_of[round % t->cpus];
	if (cpu == holder) {
		spin_lock(&t->lock);
		smp_store_release(&t->held[round], 1); /* pairs with the waiters' acquire */
		u64 deadline = arch_clock_ns() + PV_HALT_WAIT_NS;
		while (!others_halted(t, holder)) {
			if (arch_clock_ns() > deadline || atomic_read(&t->timeouts)) {
				atomic_inc(&t->timeouts);
				break;
			}
			cpu_relax();
		}
		if (t->turn_off) {
			spin_pv_set(false);
			if (!table_empty())
				atomic_inc(&t->table_not_empty);
		}
		pv_critical_section(t, round);
		spin_unlock(&t->lock);
	} else {
		/* Pairs with the holder's release: queue only behind a held lock. */
		while (!smp_load_acquire(&t->held[round]))
			cpu_relax();
		u64 halts = halts_of(cpu);
		spin_lock(&t->lock);
		if (halts_of(cpu) != halts)
			atomic_inc(&t->halted_entries);
		pv_critical_section(t, round);
		spin_unlock(&t->lock);
	}
	pv_sync_sleeping(&t->sync[round][1], t->cpus);
}

static void pv_rounds_worker(void *arg)
{
	struct pv_test *t = arg;
	unsigned cpu = smp_processor_id();
	cpumask_set_cpu(&t->members, cpu);
	t->cpu_of[atomic_fetch_add(&t->joined, 1)] = cpu; /* before the first round's sync */
	unsigned rounds = t->turn_off ? 1 : PV_ROUNDS;
	for (unsigned r = 0; r < rounds; r++)
		pv_round(t, r);
}

static struct pv_test pv_test;

/*
 * All CPUs at once: in each round one CPU holds the lock until every other CPU has
 * halted in the wait table for it, then lets go. Each waiter must then have got the
 * lock after halting (so it was kicked: nothing else wakes it), one at a time, in
 * the order the tickets were drawn, every acquisition counted; and the unlocks
 * must have sent about one kick per waiter.
 */
TEST(spinlock, pv_halted_waiters_on_every_cpu_are_kicked_in_turn)
{
	struct pv_test *t = &pv_test;
	struct spin_pv_stats before, after;

	if (!pv_usable())
		return;
	*t = (struct pv_test){.lock = SPINLOCK_INIT, .cpus = num_online_cpus()};
	spin_pv_stats_sum(&before);
	smp_run_all(pv_rounds_worker, t);
	spin_pv_stats_sum(&after);

	unsigned waiters = PV_ROUNDS * (t->cpus - 1);
	EXPECT_EQ(atomic_read(&t->timeouts), 0);
	EXPECT_EQ(atomic_read(&t->overlaps), 0);
	EXPECT_EQ(t->counter, (u64)PV_ROUNDS * t->cpus);
	EXPECT_EQ(atomic_read(&t->halted_entries), (int)waiters);
	for (unsigned r = 0; r < PV_ROUNDS; r++) {
		EXPECT_EQ(t->entered[r], t->cpus);
		EXPECT_EQ(t->order[r][0], t->cpu_of[r % t->cpus]); /* the holder first */
	}
	/*
	 * One kick per hand-off to a halted waiter; a waiter woken spuriously before its
	 * turn may have found the lock itself, so not exactly, but at least most.
	 */
	u64 kicks = after.kicks - before.kicks, wakes = after.wakes - before.wakes;
	EXPECT_GE(kicks, (u64)waiters / 2);
	EXPECT_GE(wakes, (u64)waiters / 2);
	EXPECT_GE(after.halts - before.halts, (u64)waiters);
	printk_raw("# pv: %u waiters, %llu halts, %llu wakes with the lock, %llu kicks", waiters,
		   after.halts - before.halts, wakes, kicks);
	EXPECT_FALSE(spin_is_locked(&t->lock));
	/* The last waiter took the lock with no ticket behind its own: it cleared the bit. */
	EXPECT_FALSE(READ_ONCE(t->lock.owner) & SPIN_OWNER_HALTED);
}

static u64 looks_of(unsigned cpu)
{
	struct spin_pv_stats st;
	spin_pv_stats_of_cpu(cpu, &st);
	return st.looks;
}

/*
 * Lock and unlock `lock` n times on this CPU, setting the halted bit while it is
 * held if halted_bit (as a waiter does before it halts); how many of the unlocks
 * read the wait table.
 */
static u64 pv_unlocks_looking(spinlock_t *lock, unsigned n, bool halted_bit)
{
	/* Interrupts off: no unlock by an interrupt handler counts here. */
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id();
	u64 before = looks_of(cpu);
	for (unsigned i = 0; i < n; i++) {
		spin_lock(lock);
		if (halted_bit)
			fetch_or(&lock->owner, SPIN_OWNER_HALTED);
		spin_unlock(lock);
	}
	u64 looks = looks_of(cpu) - before;
	arch_irq_restore(flags);
	return looks;
}

/*
 * Under pv waits an unlock reads the wait table only when a waiter may have halted
 * (SPIN_OWNER_HALTED in owner), so that the table's lines stay with the CPUs that
 * wait. The bit outlives the unlock that saw it; the next acquisition with no
 * ticket behind its own clears it, a trylock's too.
 */
TEST(spinlock, pv_unlock_reads_the_wait_table_only_after_a_halt)
{
	static spinlock_t lock;

	if (!pv_usable())
		return;
	lock = (spinlock_t)SPINLOCK_INIT;
	EXPECT_EQ(pv_unlocks_looking(&lock, 1000, false), 0);
	EXPECT_EQ(pv_unlocks_looking(&lock, 10, true), 10);
	EXPECT_TRUE(READ_ONCE(lock.owner) & SPIN_OWNER_HALTED);
	EXPECT_EQ(pv_unlocks_looking(&lock, 10, false), 0);
	EXPECT_FALSE(READ_ONCE(lock.owner) & SPIN_OWNER_HALTED);
	EXPECT_EQ(pv_unlocks_looking(&lock, 1, true), 1);
	ASSERT_TRUE(spin_trylock(&lock));
	EXPECT_FALSE(READ_ONCE(lock.owner) & SPIN_OWNER_HALTED);
	spin_unlock(&lock);
	EXPECT_FALSE(spin_is_locked(&lock));
}

/*
 * Turning pv waits off while every other CPU is halted on a held lock kicks them
 * all out of the table before it returns (spin_pv_set(false)); they then spin, and
 * get the lock one by one when it is let go. Turned on again afterwards.
 */
TEST(spinlock, pv_turning_off_wakes_every_halted_waiter)
{
	struct pv_test *t = &pv_test;

	if (!pv_usable())
		return;
	unsigned cpus = MIN(num_online_cpus(), PV_OFF_CPUS);
	*t = (struct pv_test){.lock = SPINLOCK_INIT, .cpus = cpus, .turn_off = true};
	smp_run_on(cpus, pv_rounds_worker, t);
	bool kick_after_off = READ_ONCE(spinlock_pv_kick);
	spin_pv_set(true);

	EXPECT_EQ(atomic_read(&t->timeouts), 0);
	EXPECT_EQ(atomic_read(&t->table_not_empty), 0);
	EXPECT_FALSE(kick_after_off);
	EXPECT_EQ(atomic_read(&t->overlaps), 0);
	EXPECT_EQ(t->counter, (u64)t->cpus);
	EXPECT_EQ(t->entered[0], t->cpus);
	EXPECT_TRUE(READ_ONCE(spinlock_pv));
	EXPECT_TRUE(READ_ONCE(spinlock_pv_kick));
}

struct pv_mix_test {
	spinlock_t lock;
	unsigned cpus; /* taking part */
	unsigned iters;
	struct smp_sync start;
	u32 inside;
	u64 counter; /* under lock */
	atomic_t overlaps;
};

static void pv_mix_worker(void *arg)
{
	struct pv_mix_test *t = arg;
	u32 me = smp_processor_id() + 1;

	smp_sync_wait(&t->start, t->cpus);
	for (unsigned i = 0; i < t->iters; i++) {
		spin_lock(&t->lock);
		if (READ_ONCE(t->inside) != 0)
			atomic_inc(&t->overlaps);
		WRITE_ONCE(t->inside, me);
		u64 v = READ_ONCE(t->counter);
		for (int j = 0; j < PV_HOLD_LOOPS; j++)
			cpu_relax();
		WRITE_ONCE(t->counter, v + 1);
		if (READ_ONCE(t->inside) != me)
			atomic_inc(&t->overlaps);
		WRITE_ONCE(t->inside, 0);
		spin_unlock(&t->lock);
	}
}

/*
 * Waiters that spin and waiters that halt, mixed as the hand-offs happen to fall,
 * with backoff and with plain spinning: a read-delay-write counter under the lock
 * loses nothing and no two CPUs are inside at once. Retried until some waiter
 * halted (two vCPUs must run at once for a wait to be long).
 */
static void pv_mix(bool backoff)
{
	static struct pv_mix_test t;
	struct spin_pv_stats before, after;
	unsigned cpus = num_online_cpus();
	u64 deadline = arch_clock_ns() + PV_RETRY_NS;
	bool saved = spinlock_backoff;

	if (!pv_usable())
		return;
	spinlock_backoff = backoff;
	spin_pv_stats_sum(&before);
	after = before;
	do {
		t = (struct pv_mix_test){.lock = SPINLOCK_INIT,
					 .iters = lock_sized_share(PV_MIX_TOTAL, cpus, 4)};
		smp_run_all(pv_mix_worker, &t);
		if (!EXPECT_EQ(t.counter, (u64)t.iters * cpus) ||
		    !EXPECT_EQ(atomic_read(&t.overlaps), 0))
			break;
		spin_pv_stats_sum(&after);
	} while (after.halts == before.halts && arch_clock_ns() < deadline);
	spinlock_backoff = saved;
	EXPECT_GT(after.halts, before.halts);
	EXPECT_GT(after.kicks, before.kicks);
	EXPECT_FALSE(spin_is_locked(&t.lock));
}

TEST(spinlock, pv_mutual_exclusion_backoff)
{
	pv_mix(true);
}

TEST(spinlock, pv_mutual_exclusion_plain)
{
	pv_mix(false);
}

/*
 * With pv waits off (spinlock_pv=off, or hardware) nothing enters the wait table:
 * the design that runs without them is the old one, unchanged. Contended on up to
 * PV_OFF_CPUS CPUs for long holds, so that pv waits, were they on, would halt.
 */
TEST(spinlock, pv_off_never_halts)
{
	static struct pv_mix_test t;
	struct spin_pv_stats before, after;
	unsigned cpus = num_online_cpus();

	if (cpus < 2) {
		test_skip("needs two CPUs to contend");
		return;
	}
	if (READ_ONCE(spinlock_pv)) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "paravirtual waits are on (%s); spinlock_pv=off runs this",
			 spin_pv_boot_reason());
		test_skip(skip_reason);
		return;
	}
	cpus = MIN(cpus, PV_OFF_CPUS);
	spin_pv_stats_sum(&before);
	t = (struct pv_mix_test){
	    .lock = SPINLOCK_INIT, .cpus = cpus, .iters = MAX(PV_OFF_TOTAL / cpus, 4u)};
	smp_run_on(cpus, pv_mix_worker, &t);
	spin_pv_stats_sum(&after);
	EXPECT_EQ(t.counter, (u64)t.iters * cpus);
	EXPECT_EQ(atomic_read(&t.overlaps), 0);
	EXPECT_EQ(after.waits, before.waits);
	EXPECT_EQ(after.halts, before.halts);
	EXPECT_EQ(after.kicks, before.kicks);
	EXPECT_FALSE(READ_ONCE(spinlock_pv_kick));
}

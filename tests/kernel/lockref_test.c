/*
 * lockref selftests: gets and puts by compare-and-swap on every CPU at once while
 * some CPUs also take the lock and change the count under it, ending at exactly
 * the count the updates add up to (a CAS that ignored the lock would lose the
 * holder's update, or the holder a CAS's); lockref_put_or_lock() taking the lock
 * only at the last reference; dead references refusing new ones; and a get that
 * waits while another CPU holds the lock, the count standing still until it is
 * released.
 */
#include <grace/arch.h>
#include <grace/lockref.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

/*
 * Get/put rounds over all CPUs. A round is a few CASes, and every LOCKED_EVERY-th
 * round on even CPUs a lock hold, a bit-lock hand-off whose waiters spin (no
 * paravirtual halt): split a fixed total, as bit_spinlock_test.c does.
 */
#define LOCKREF_TEST_TOTAL 4000
#define LOCKREF_TEST_MIN_PER_CPU 16
#define LOCKREF_LOCKED_EVERY 8
#define LOCKREF_WINDOW_LOOPS 50 /* the lock holder's read-delay-write window */
/* How long the holder keeps the lock while a getter on another CPU waits for it. */
#define LOCKREF_HOLD_NS (20 * NSEC_PER_MSEC)
#define LOCKREF_WAIT_NS (5 * NSEC_PER_SEC) /* for the other CPU to get going */

/* Every lockref of these tests, in one range: their words' class to the validator. */
static struct {
	struct lockref stress, single, waited;
} lr_words;
static struct lock_class_key lr_words_key;

static void lockref_test_classes(void)
{
	bit_spin_lock_set_class(&lr_words, sizeof(lr_words), &lr_words_key, "lockref_test.word");
}

struct stress {
	struct lockref *lr;
	unsigned iters;
	struct smp_sync start;
	atomic_t locked_adds; /* counts the holders added under the lock */
	atomic_t bad;	      /* a put that had to lock, or a get that failed */
};

static void stress_worker(void *arg)
{
	struct stress *t = arg;
	struct lockref *lr = t->lr;
	/* Every other online CPU, by index: some lock whatever the CPU ids are. */
	bool locker = smp_online_index(smp_processor_id()) % 2 == 0;

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		/* The base reference keeps the count at 2 or more while we hold ours. */
		lockref_get(lr);
		if (!lockref_put_or_lock(lr)) {
			atomic_inc(&t->bad);
			lockref_unlock(lr);
		}
		if (!lockref_get_not_zero(lr))
			atomic_inc(&t->bad);
		if (!lockref_get_not_dead(lr))
			atomic_inc(&t->bad);
		if (!lockref_put_not_zero(lr))
			atomic_inc(&t->bad);
		if (!lockref_put_not_zero(lr))
			atomic_inc(&t->bad);
		if (locker && i % LOCKREF_LOCKED_EVERY == 0) {
			/* Read, wait, write: a CAS landing in between would be lost. */
			lockref_lock(lr);
			int n = lockref_count(lr);
			for (int k = 0; k < LOCKREF_WINDOW_LOOPS; k++)
				cpu_relax();
			lockref_set_count(lr, n + 1);
			lockref_unlock(lr);
			atomic_inc(&t->locked_adds);
		}
	}
}

TEST(lockref, cas_updates_on_all_cpus_and_locked_updates_sum_exactly)
{
	static struct stress t;
	unsigned n = num_online_cpus();
	lockref_test_classes();
	lockref_init(&lr_words.stress, 1);
	t = (struct stress){.lr = &lr_words.stress,
			    .iters =
				MAX(LOCKREF_TEST_TOTAL / n, (unsigned)LOCKREF_TEST_MIN_PER_CPU)};
	smp_run_all(stress_worker, &t);
	EXPECT_EQ(atomic_read(&t.bad), 0);
	EXPECT_GT(atomic_read(&t.locked_adds), 0);
	EXPECT_EQ(lockref_count(&lr_words.stress), 1 + atomic_read(&t.locked_adds));
	EXPECT_FALSE(lockref_is_locked(&lr_words.stress));
	/* Nothing but the count: the lock bit clear and the spare bits untouched. */
#ifndef GRACE_LOCK_CLASSES
	EXPECT_EQ(lr_words.stress.word & LOCKREF_LOW_MASK, 0); /* no stray bits */
#endif
}

TEST(lockref, put_or_lock_locks_only_at_the_last_reference)
{
	struct lockref *lr = &lr_words.single;
	lockref_test_classes();
	lockref_init(lr, 3);
	EXPECT_TRUE(lockref_put_or_lock(lr));
	EXPECT_FALSE(lockref_is_locked(lr));
	EXPECT_TRUE(lockref_put_or_lock(lr));
	EXPECT_FALSE(lockref_is_locked(lr));
	EXPECT_EQ(lockref_count(lr), 1);
	/* The last one: false, the lock held, the count unchanged for the caller. */
	EXPECT_FALSE(lockref_put_or_lock(lr));
	EXPECT_TRUE(lockref_is_locked(lr));
	EXPECT_EQ(lockref_count(lr), 1);
	lockref_set_count(lr, 0);
	lockref_unlock(lr);
	EXPECT_FALSE(lockref_is_locked(lr));
	EXPECT_EQ(lockref_count(lr), 0);

	/* At 0 too: there is no reference to drop without the lock. */
	EXPECT_FALSE(lockref_put_or_lock(lr));
	EXPECT_TRUE(lockref_is_locked(lr));
	lockref_unlock(lr);
	EXPECT_EQ(lockref_count(lr), 0);

	/* put_not_zero never takes the last one, and leaves no lock held. */
	lockref_init(lr, 2);
	EXPECT_TRUE(lockref_put_not_zero(lr));
	EXPECT_FALSE(lockref_put_not_zero(lr));
	EXPECT_FALSE(lockref_is_locked(lr));
	EXPECT_EQ(lockref_count(lr), 1);

	/* trylock fails while the lock is held. */
	EXPECT_TRUE(lockref_trylock(lr));
	EXPECT_FALSE(lockref_trylock(lr));
	lockref_unlock(lr);
}

TEST(lockref, a_dead_reference_refuses_new_ones)
{
	struct lockref *lr = &lr_words.single;
	lockref_test_classes();
	lockref_init(lr, 0);
	/* Zero is not dead: get_not_dead takes it, get_not_zero does not. */
	EXPECT_FALSE(lockref_get_not_zero(lr));
	EXPECT_EQ(lockref_count(lr), 0);
	EXPECT_TRUE(lockref_get_not_dead(lr));
	EXPECT_EQ(lockref_count(lr), 1);
	EXPECT_FALSE(lockref_is_dead(lr));

	lockref_lock(lr);
	lockref_mark_dead(lr);
	lockref_unlock(lr);
	EXPECT_TRUE(lockref_is_dead(lr));
	EXPECT_EQ(lockref_count(lr), LOCKREF_DEAD);
	EXPECT_FALSE(lockref_get_not_dead(lr));
	EXPECT_FALSE(lockref_get_not_zero(lr));
	EXPECT_FALSE(lockref_put_not_zero(lr));
	EXPECT_EQ(lockref_count(lr), LOCKREF_DEAD);
	/* The same through the locked path: held, a get by CAS cannot be tried. */
	EXPECT_FALSE(lockref_put_or_lock(lr));
	EXPECT_TRUE(lockref_is_locked(lr));
	lockref_unlock(lr);
	EXPECT_EQ(lockref_count(lr), LOCKREF_DEAD);
	EXPECT_FALSE(lockref_is_locked(lr));
}

struct waited {
	struct lockref *lr;
	unsigned holder;
	u32 locked;	   /* the holder holds the lock */
	u32 getting;	   /* the getter is about to call lockref_get() */
	u32 got;	   /* its lockref_get() returned */
	u32 unlocked;	   /* the holder let go */
	u32 got_early;	   /* it returned while the lock was held */
	int count_in_hold; /* the count at the end of the hold */
	bool timed_out;
};

static bool wait_flag(u32 *flag, u64 deadline)
{
	/* Pairs with the smp_store_release() of the flag. */
	while (!smp_load_acquire(flag))
		if (arch_clock_ns() > deadline)
			return false;
		else
			cpu_relax();
	return true;
}

static void waited_worker(void *arg)
{
	struct waited *w = arg;
	u64 deadline = arch_clock_ns() + LOCKREF_WAIT_NS;

	if (smp_processor_id() == w->holder) {
		lockref_lock(w->lr);
		smp_store_release(&w->locked, 1);
		if (!wait_flag(&w->getting, deadline))
			w->timed_out = true;
		/* Hold on while the getter spins; its get must not get through. */
		u64 end = arch_clock_ns() + LOCKREF_HOLD_NS;
		while (arch_clock_ns() < end)
			cpu_relax();
		w->count_in_hold = lockref_count(w->lr);
		if (smp_load_acquire(&w->got))
			w->got_early = 1;
		lockref_unlock(w->lr);
		smp_store_release(&w->unlocked, 1);
		if (!wait_flag(&w->got, arch_clock_ns() + LOCKREF_WAIT_NS))
			w->timed_out = true;
	} else {
		if (!wait_flag(&w->locked, deadline)) {
			w->timed_out = true;
			return;
		}
		smp_store_release(&w->getting, 1);
		lockref_get(w->lr);
		smp_store_release(&w->got, 1);
	}
}

TEST(lockref, a_get_waits_while_another_cpu_holds_the_lock)
{
	if (num_online_cpus() < 2) {
		test_skip("needs a second CPU to hold the lock");
		return;
	}
	static struct waited w;
	lockref_test_classes();
	lockref_init(&lr_words.waited, 5);
	w = (struct waited){.lr = &lr_words.waited, .holder = smp_processor_id()};
	smp_run_on(2, waited_worker, &w);
	EXPECT_FALSE(w.timed_out);
	EXPECT_EQ(w.count_in_hold, 5); /* the count stood still under the lock */
	EXPECT_EQ(w.got_early, 0);
	EXPECT_EQ(lockref_count(&lr_words.waited), 6); /* and moved once it was released */
	EXPECT_FALSE(lockref_is_locked(&lr_words.waited));
}

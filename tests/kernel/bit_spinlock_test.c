/* Bit spinlock selftest: exclusion on all CPUs, and the word's other bits left alone. */
#include <grace/bit_spinlock.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>

#define BITLOCK_TEST_TOTAL 3000
#define BITLOCK_BIT 0
#define BITLOCK_OTHER_BITS 0xa5a5a5a5a5a5a5a4UL /* bit 0 clear: the lock's bit */

struct bitlock_test {
	unsigned long word;
	struct smp_sync start;
	unsigned iters;
	u64 counter; /* under the bit lock */
};

static void bitlock_worker(void *arg)
{
	struct bitlock_test *t = arg;
	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		bit_spin_lock(BITLOCK_BIT, &t->word);
		u64 v = READ_ONCE(t->counter);
		for (int j = 0; j < 20; j++)
			cpu_relax();
		WRITE_ONCE(t->counter, v + 1);
		bit_spin_unlock(BITLOCK_BIT, &t->word);
	}
}

/* The validator's classes of the words (LOCKDEP, LOCKSTAT; nothing in a normal build). */
static struct lock_class_key bitlock_test_key, bitlock_trylock_key;

TEST(bit_spinlock, mutual_exclusion)
{
	static struct bitlock_test t;
	unsigned n = num_online_cpus();
	bit_spin_lock_set_class(&t.word, sizeof(t.word), &bitlock_test_key, "bitlock_test.word");
	t = (struct bitlock_test){.word = BITLOCK_OTHER_BITS,
				  .iters = MAX(BITLOCK_TEST_TOTAL / n, 16u)};
	smp_run_all(bitlock_worker, &t);
	EXPECT_EQ(t.counter, (u64)t.iters * n);
	EXPECT_EQ(t.word, BITLOCK_OTHER_BITS);
	EXPECT_FALSE(bit_spin_is_locked(BITLOCK_BIT, &t.word));
}

TEST(bit_spinlock, trylock)
{
	static unsigned long word;
	word = 0;
	bit_spin_lock_set_class(&word, sizeof(word), &bitlock_trylock_key, "bitlock_trylock.word");
	ASSERT_TRUE(bit_spin_trylock(3, &word));
	EXPECT_EQ(word, 1UL << 3);
	EXPECT_FALSE(bit_spin_trylock(3, &word));
	bit_spin_unlock(3, &word);
	EXPECT_EQ(word, 0);
}

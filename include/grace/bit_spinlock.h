/*
 * A spinlock in one bit of a word, for hash buckets where a full spinlock per
 * bucket would double the table: the dcache and route cache keep the lock in
 * bit 0 of the bucket's head pointer. Test-and-test-and-set, no fairness.
 * To the lock validator (LOCKDEP=1) a bit lock is of its word's class: give a
 * table's words one with bit_spin_lock_set_class() (grace/lockdep.h).
 */
#ifndef GRACE_BIT_SPINLOCK_H
#define GRACE_BIT_SPINLOCK_H

#include <grace/atomic.h>
#include <grace/lockdep.h>
#include <grace/preempt.h>
#include <asm/cpu.h>

static inline bool bit_spin_trylock(unsigned bit, unsigned long *word)
{
	preempt_disable();
	/* Acquire: pairs with the release in bit_spin_unlock(). */
	if (!test_and_set_bit_lock(bit, word)) {
		bit_lock_acquire(word, bit, LOCK_TRY | LOCK_NOW, 0);
		return true;
	}
	preempt_enable();
	return false;
}

static inline void bit_spin_lock(unsigned bit, unsigned long *word)
{
	preempt_disable();
	/* Acquire: pairs with the release in bit_spin_unlock(). */
	if (unlikely(test_and_set_bit_lock(bit, word))) {
		/* The validator sees the attempt before the wait (grace/lockdep.h). */
		bit_lock_acquire(word, bit, LOCK_WAITS, 0);
		do {
			/*
			 * Spin preemptible, on a plain read, so waiters share the line until
			 * it is released.
			 */
			preempt_enable();
			while (test_bit(bit, word))
				cpu_relax();
			preempt_disable();
		} while (test_and_set_bit_lock(bit, word));
		bit_lock_acquired(word, bit);
	} else {
		bit_lock_acquire(word, bit, LOCK_NOW, 0);
	}
}

static inline void bit_spin_unlock(unsigned bit, unsigned long *word)
{
	/* Release: pairs with the acquire in bit_spin_trylock() and bit_spin_lock(). */
	clear_bit_unlock(bit, word);
	bit_lock_release(word, bit, 0);
	preempt_enable();
}

static inline bool bit_spin_is_locked(unsigned bit, const unsigned long *word)
{
	return test_bit(bit, word);
}

#endif

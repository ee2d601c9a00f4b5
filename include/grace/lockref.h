/*
 * A reference count and a spinlock in one 64-bit word, so that taking and dropping
 * a reference is one compare-and-swap while nobody holds the lock, and code that
 * must see the count stand still (the last put, marking an object dead) takes the
 * lock. The idea is Linux's lockref (2013), for the dentry: a path walk takes and
 * drops a reference on every component, and a separate spinlock plus count cost
 * two atomic operations on one line where one CAS does.
 *
 * The word: bit 0 is the lock (a bit spinlock, grace/bit_spinlock.h), bits 1..31
 * are zero, bits 32..63 the count as a signed 32-bit int. A CAS succeeds only on a
 * word whose lock bit is clear, so while the lock is held the count changes only
 * by its holder: a CAS that read the word before the lock was taken expected it
 * unlocked and fails. The holder reads and writes the count with relaxed loads
 * and stores; the only other writes the word sees meanwhile are lock waiters'
 * atomic ORs of a bit already set, which change nothing, so no update is lost.
 *
 * Ordering: a get by CAS is an acquire and a put a release. The release of a put
 * pairs with the acquire of whoever takes the lock next (to handle the last
 * reference, or to mark the object dead), so everything the putter did with its
 * reference comes before that; the acquire of a get pairs with the release of the
 * lock (bit_spin_unlock()), so a reference taken after an unlock sees what was
 * done under the lock.
 *
 * With the lock validator or lock statistics (LOCKDEP=1, LOCKSTAT=1) the lockref
 * is a spinlock_t beside the count instead, and every update takes the lock: a
 * bit lock's class is that of the memory holding it, and objects from a slab
 * cache (dentries) are no one range of memory, while a spinlock_t carries its
 * class, keyed by where lockref_init() is written. The compare-and-swap path is
 * then off, as it is in Linux with spinlock debugging.
 */
#ifndef GRACE_LOCKREF_H
#define GRACE_LOCKREF_H

#include <grace/atomic.h>
#include <grace/bit_spinlock.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <grace/types.h>

/* The count of a dead object: no new reference may be taken (lockref_get_not_dead). */
#define LOCKREF_DEAD (-128)

/* A lower bound every count meets: lockref_get() takes a reference whatever the count. */
#define LOCKREF_ANY_COUNT (-0x7fffffff - 1)

#ifdef GRACE_LOCK_CLASSES
struct lockref {
	spinlock_t lock;
	int count;
};

/* Before the lockref is visible to anyone else. Its lock's class is keyed by this call's site. */
#define lockref_init(lr, n)                                                                        \
	do {                                                                                       \
		struct lockref *__lr = (lr);                                                       \
		spin_lock_init_named(&__lr->lock, #lr);                                            \
		__lr->count = (n);                                                                 \
	} while (0)

static inline void lockref_lock(struct lockref *lr)
{
	spin_lock(&lr->lock);
}

static inline void lockref_lock_nested(struct lockref *lr, unsigned subclass)
{
	spin_lock_nested(&lr->lock, subclass);
}

static inline bool lockref_trylock(struct lockref *lr)
{
	return spin_trylock(&lr->lock);
}

static inline void lockref_unlock(struct lockref *lr)
{
	spin_unlock(&lr->lock);
}

static inline bool lockref_is_locked(const struct lockref *lr)
{
	return spin_is_locked((spinlock_t *)&lr->lock);
}

static inline int lockref_count(const struct lockref *lr)
{
	return READ_ONCE(lr->count);
}

static inline void lockref_set_count(struct lockref *lr, int n)
{
	lockdep_assert_held(&lr->lock);
	WRITE_ONCE(lr->count, n);
}

static inline void lockref_add_locked(struct lockref *lr, int delta)
{
	lockref_set_count(lr, lockref_count(lr) + delta);
}

/* No compare-and-swap path: the validator must see every acquisition. */
static inline int lockref_cas_add(struct lockref *lr, int delta, int min, bool release)
{
	return -1;
}

#else /* !GRACE_LOCK_CLASSES */
struct lockref {
	unsigned long word; /* bit 0: the lock; bits 32..63: the count */
};

#define LOCKREF_LOCK_BIT 0
#define LOCKREF_COUNT_SHIFT 32
#define LOCKREF_ONE (1UL << LOCKREF_COUNT_SHIFT) /* a count of 1, in the word */
#define LOCKREF_LOW_MASK (LOCKREF_ONE - 1)	 /* the lock bit and the spare bits */

/*
 * Compare-and-swap attempts before falling back to the lock. A CAS fails each time
 * another CPU changed the word since we read it; under heavy contention nothing
 * bounds how often one CPU keeps losing, each loss pulling the line over
 * exclusive. Taking the lock instead serialises the updaters, and its waiters
 * spin on a shared read. 100 is Linux's bound (lib/lockref.c, CMPXCHG_LOOP): high
 * enough that the lock is all but never taken for contention alone.
 */
#define LOCKREF_CAS_RETRIES 100

static inline int lockref_word_count(unsigned long word)
{
	return (int)(u32)(word >> LOCKREF_COUNT_SHIFT);
}

static inline bool lockref_word_locked(unsigned long word)
{
	return word & (1UL << LOCKREF_LOCK_BIT);
}

/* Before the lockref is visible to anyone else. */
static inline void lockref_init(struct lockref *lr, int count)
{
	lr->word = (unsigned long)(u32)count << LOCKREF_COUNT_SHIFT;
}

static inline void lockref_lock(struct lockref *lr)
{
	bit_spin_lock(LOCKREF_LOCK_BIT, &lr->word);
}

/* The lockref of a child while its parent's is held (the word's class: no subclasses). */
static inline void lockref_lock_nested(struct lockref *lr, unsigned subclass)
{
	lockref_lock(lr);
}

static inline bool lockref_trylock(struct lockref *lr)
{
	return bit_spin_trylock(LOCKREF_LOCK_BIT, &lr->word);
}

static inline void lockref_unlock(struct lockref *lr)
{
	/* Release: pairs with the acquire of the next lock and of gets by CAS. */
	bit_spin_unlock(LOCKREF_LOCK_BIT, &lr->word);
}

static inline bool lockref_is_locked(const struct lockref *lr)
{
	return bit_spin_is_locked(LOCKREF_LOCK_BIT, &lr->word);
}

/* A snapshot; stable only under the lock. */
static inline int lockref_count(const struct lockref *lr)
{
	return lockref_word_count(READ_ONCE(lr->word));
}

/*
 * Caller holds the lock. A relaxed store of the whole word: while the lock is
 * held the count is the holder's (see the top of this file).
 */
static inline void lockref_set_count(struct lockref *lr, int n)
{
	unsigned long word = READ_ONCE(lr->word);
	BUG_ON(!lockref_word_locked(word));
	WRITE_ONCE(lr->word,
		   (word & LOCKREF_LOW_MASK) | ((unsigned long)(u32)n << LOCKREF_COUNT_SHIFT));
}

/* Caller holds the lock: count += delta. */
static inline void lockref_add_locked(struct lockref *lr, int delta)
{
	lockref_set_count(lr, lockref_count(lr) + delta);
}

/*
 * Add delta to the count by CAS, while the lock is free and the count is at least
 * min. Returns 1 when it was added, 0 when the count was below min (nothing done),
 * -1 when the lock was held or the CAS kept losing: the caller takes the lock.
 */
static inline int lockref_cas_add(struct lockref *lr, int delta, int min, bool release)
{
	/* delta in the count's bits; a negative one wraps, as the count does */
	unsigned long step = (unsigned long)(long)delta << LOCKREF_COUNT_SHIFT;
	unsigned long old = READ_ONCE(lr->word);
	for (unsigned retry = LOCKREF_CAS_RETRIES; retry && !lockref_word_locked(old); retry--) {
		if (lockref_word_count(old) < min)
			return 0;
		unsigned long new = old + step;
		/*
		 * Acquire for a get, release for a put: see the top of this file. A
		 * failed CAS puts the word it found in old and orders nothing.
		 */
		if (release ? try_cmpxchg_release(&lr->word, &old, new)
			    : try_cmpxchg_acquire(&lr->word, &old, new))
			return 1;
	}
	return -1;
}

#endif /* GRACE_LOCK_CLASSES */

/* The slow path of a conditional update: under the lock, apply delta if count >= min. */
static inline bool lockref_add_under_lock(struct lockref *lr, int delta, int min)
{
	lockref_lock(lr);
	bool ok = lockref_count(lr) >= min;
	if (ok)
		lockref_add_locked(lr, delta);
	lockref_unlock(lr);
	return ok;
}

/* Take a reference, whatever the count (the caller knows the object lives). */
static inline void lockref_get(struct lockref *lr)
{
	if (lockref_cas_add(lr, 1, LOCKREF_ANY_COUNT, false) > 0)
		return;
	lockref_add_under_lock(lr, 1, LOCKREF_ANY_COUNT);
}

/* Take a reference if the count is positive; false (nothing taken) if it is <= 0. */
static inline bool lockref_get_not_zero(struct lockref *lr)
{
	int r = lockref_cas_add(lr, 1, 1, false);
	if (r >= 0)
		return r;
	return lockref_add_under_lock(lr, 1, 1);
}

/* Take a reference unless the object is dead (count < 0); a count of 0 is fine. */
static inline bool lockref_get_not_dead(struct lockref *lr)
{
	int r = lockref_cas_add(lr, 1, 0, false);
	if (r >= 0)
		return r;
	return lockref_add_under_lock(lr, 1, 0);
}

/*
 * Drop a reference if it is not the last (count > 1): true. Otherwise take the
 * lock and return false with the count unchanged: the caller handles the last
 * reference under the lock and unlocks.
 */
static inline bool lockref_put_or_lock(struct lockref *lr)
{
	if (lockref_cas_add(lr, -1, 2, true) > 0)
		return true;
	lockref_lock(lr);
	/* Others may have taken references since we looked. */
	if (lockref_count(lr) <= 1)
		return false;
	lockref_add_locked(lr, -1);
	lockref_unlock(lr);
	return true;
}

/*
 * Drop a reference if it is not the last (count > 1): true. False, with nothing
 * done and no lock held, when the count is 1 or less. The lock is taken only when
 * the CAS cannot be used (the lock is held, or the CAS kept losing), never kept.
 */
static inline bool lockref_put_not_zero(struct lockref *lr)
{
	int r = lockref_cas_add(lr, -1, 2, true);
	if (r >= 0)
		return r;
	return lockref_add_under_lock(lr, -1, 2);
}

/* Caller holds the lock: the object is dead; gets that check (_not_dead, _not_zero) fail. */
static inline void lockref_mark_dead(struct lockref *lr)
{
	lockref_set_count(lr, LOCKREF_DEAD);
}

static inline bool lockref_is_dead(const struct lockref *lr)
{
	return lockref_count(lr) < 0;
}

#endif

/*
 * Memory ordering and atomics, over the GCC __atomic builtins, under the names a
 * kernel engineer expects (Linux's). Generic code uses only these: no __atomic
 * builtin outside this file, no inline asm outside arch/.
 *
 * Ordering follows Linux (Documentation/atomic_t.txt). An operation that returns
 * nothing (atomic_add, set_bit) orders nothing. One that returns a value is fully
 * ordered, as if smp_mb() came before and after it, unless its name ends in
 * _relaxed (no ordering), _acquire (later accesses stay after it) or _release
 * (earlier accesses stay before it). A cmpxchg orders as its name says when it
 * succeeds; when it fails it is only a load of the value it found: an acquire load
 * for the fully ordered cmpxchg/try_cmpxchg (a caller may use what it found, as
 * pt_pmd_table() walks into a table another CPU installed), relaxed for the others.
 * Pair every acquire with a release and every smp_mb() with the other side's
 * barrier, and name the other side in a comment at both ends.
 *
 * Counters are atomic_t (int) or atomic64_t (s64). The plain-word operations are
 * for words that are not counters (flags, pointers, states) and for the fields of
 * the lock types, whose layout is their own.
 */
#ifndef GRACE_ATOMIC_H
#define GRACE_ATOMIC_H

#include <grace/types.h>

/* Fences. barrier() stops only the compiler; the smp_ ones order this CPU's accesses. */
#define barrier() __asm__ __volatile__("" ::: "memory")
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * Loads and stores of one word. READ_ONCE/WRITE_ONCE keep the compiler from tearing,
 * fusing or re-reading the access and order nothing between CPUs. smp_load_acquire
 * orders the load before every later access, smp_store_release every earlier access
 * before the store. smp_store_mb(x, v) is a store that is a release and then a full
 * barrier: for a sleeper's state, which the condition check after it must not pass.
 */
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_store_mb(x, v)                                                                         \
	do {                                                                                       \
		__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST);                                     \
		smp_mb();                                                                          \
	} while (0)

/*
 * Exchange and compare-and-exchange of a plain word: any integer or pointer, through
 * p. xchg returns the old value. cmpxchg(p, old, new) stores new if *p was old and
 * returns what *p was; try_cmpxchg(p, &old, new) returns whether it stored and, when
 * it did not, puts the value it found in old (the form for loops). Never spurious.
 */
#define xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define xchg_relaxed(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define xchg_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define try_cmpxchg(p, oldp, new)                                                                  \
	__atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)
#define try_cmpxchg_relaxed(p, oldp, new)                                                          \
	__atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define try_cmpxchg_acquire(p, oldp, new)                                                          \
	__atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define try_cmpxchg_release(p, oldp, new)                                                          \
	__atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define cmpxchg(p, old, new)                                                                       \
	({                                                                                         \
		__typeof__(*(p)) __cmpxchg_old = (old);                                            \
		try_cmpxchg((p), &__cmpxchg_old, (new));                                           \
		__cmpxchg_old;                                                                     \
	})

/*
 * Arithmetic on a plain word where an atomic_t does not fit: the fields of the lock
 * types (spinlock_t's ticket, rwlock_t's state) and the softirq pending mask, an
 * unsigned long of bits. Each returns the old value; the suffix is the ordering,
 * none a full barrier, as smp_mb() on each side.
 */
#define fetch_add(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define fetch_or(p, v) __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define fetch_and(p, v) __atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST)
#define fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define fetch_sub_release(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELEASE)
#define fetch_or_relaxed(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define fetch_or_release(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
#define fetch_and_release(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELEASE)

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	s64 counter;
} atomic64_t;

/* clang-format off */
#define ATOMIC_INIT(v) { (v) }
#define ATOMIC64_INIT(v) { (v) }
/* clang-format on */

/* atomic_t: read and set, relaxed or acquire/release. */
static inline int atomic_read(const atomic_t *a)
{
	return READ_ONCE(a->counter);
}
static inline int atomic_read_acquire(const atomic_t *a)
{
	return smp_load_acquire(&a->counter);
}
static inline void atomic_set(atomic_t *a, int v)
{
	WRITE_ONCE(a->counter, v);
}
static inline void atomic_set_release(atomic_t *a, int v)
{
	smp_store_release(&a->counter, v);
}

/* atomic_t: add and subtract, returning nothing and ordering nothing. */
static inline void atomic_add(atomic_t *a, int v)
{
	__atomic_fetch_add(&a->counter, v, __ATOMIC_RELAXED);
}
static inline void atomic_sub(atomic_t *a, int v)
{
	__atomic_fetch_sub(&a->counter, v, __ATOMIC_RELAXED);
}
static inline void atomic_inc(atomic_t *a)
{
	atomic_add(a, 1);
}
static inline void atomic_dec(atomic_t *a)
{
	atomic_sub(a, 1);
}

/* atomic_t: fully ordered; *_return gives the new value, fetch_* and xchg the old one. */
static inline int atomic_add_return(atomic_t *a, int v)
{
	return __atomic_add_fetch(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline int atomic_sub_return(atomic_t *a, int v)
{
	return __atomic_sub_fetch(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline int atomic_inc_return(atomic_t *a)
{
	return atomic_add_return(a, 1);
}
static inline int atomic_dec_return(atomic_t *a)
{
	return atomic_sub_return(a, 1);
}
static inline int atomic_fetch_add(atomic_t *a, int v)
{
	return __atomic_fetch_add(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline int atomic_xchg(atomic_t *a, int v)
{
	return xchg(&a->counter, v);
}
static inline int atomic_cmpxchg(atomic_t *a, int old, int new)
{
	return cmpxchg(&a->counter, old, new);
}

/* atomic_t: the same with the ordering in the name; each returns the old value. */
static inline int atomic_fetch_add_relaxed(atomic_t *a, int v)
{
	return __atomic_fetch_add(&a->counter, v, __ATOMIC_RELAXED);
}
static inline int atomic_fetch_add_release(atomic_t *a, int v)
{
	return __atomic_fetch_add(&a->counter, v, __ATOMIC_RELEASE);
}
static inline int atomic_fetch_sub_release(atomic_t *a, int v)
{
	return __atomic_fetch_sub(&a->counter, v, __ATOMIC_RELEASE);
}
static inline int atomic_xchg_relaxed(atomic_t *a, int v)
{
	return xchg_relaxed(&a->counter, v);
}

/* atomic64_t: read and set, relaxed or acquire. */
static inline s64 atomic64_read(const atomic64_t *a)
{
	return READ_ONCE(a->counter);
}
static inline s64 atomic64_read_acquire(const atomic64_t *a)
{
	return smp_load_acquire(&a->counter);
}
static inline void atomic64_set(atomic64_t *a, s64 v)
{
	WRITE_ONCE(a->counter, v);
}

/* atomic64_t: add and subtract, returning nothing and ordering nothing. */
static inline void atomic64_add(atomic64_t *a, s64 v)
{
	__atomic_fetch_add(&a->counter, v, __ATOMIC_RELAXED);
}
static inline void atomic64_sub(atomic64_t *a, s64 v)
{
	__atomic_fetch_sub(&a->counter, v, __ATOMIC_RELAXED);
}
static inline void atomic64_inc(atomic64_t *a)
{
	atomic64_add(a, 1);
}
static inline void atomic64_dec(atomic64_t *a)
{
	atomic64_sub(a, 1);
}

/* atomic64_t: fully ordered; *_return gives the new value, fetch_* and xchg the old one. */
static inline s64 atomic64_add_return(atomic64_t *a, s64 v)
{
	return __atomic_add_fetch(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline s64 atomic64_sub_return(atomic64_t *a, s64 v)
{
	return __atomic_sub_fetch(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline s64 atomic64_inc_return(atomic64_t *a)
{
	return atomic64_add_return(a, 1);
}
static inline s64 atomic64_dec_return(atomic64_t *a)
{
	return atomic64_sub_return(a, 1);
}
static inline s64 atomic64_fetch_add(atomic64_t *a, s64 v)
{
	return __atomic_fetch_add(&a->counter, v, __ATOMIC_SEQ_CST);
}
static inline s64 atomic64_xchg(atomic64_t *a, s64 v)
{
	return xchg(&a->counter, v);
}
static inline s64 atomic64_cmpxchg(atomic64_t *a, s64 old, s64 new)
{
	return cmpxchg(&a->counter, old, new);
}

/* atomic64_t: the same with the ordering in the name; returns the old value. */
static inline s64 atomic64_fetch_add_release(atomic64_t *a, s64 v)
{
	return __atomic_fetch_add(&a->counter, v, __ATOMIC_RELEASE);
}

/*
 * Bit operations on an unsigned long word. set_bit/clear_bit/test_bit order nothing;
 * test_and_set_bit/test_and_clear_bit are fully ordered; test_and_set_bit_lock is an
 * acquire and clear_bit_unlock a release, for a lock in a bit (grace/bit_spinlock.h).
 */
static inline void set_bit(unsigned nr, unsigned long *w)
{
	__atomic_fetch_or(w, 1UL << nr, __ATOMIC_RELAXED);
}
static inline void clear_bit(unsigned nr, unsigned long *w)
{
	__atomic_fetch_and(w, ~(1UL << nr), __ATOMIC_RELAXED);
}
static inline bool test_bit(unsigned nr, const unsigned long *w)
{
	return (READ_ONCE(*w) >> nr) & 1;
}
static inline bool test_and_set_bit(unsigned nr, unsigned long *w)
{
	return (__atomic_fetch_or(w, 1UL << nr, __ATOMIC_SEQ_CST) >> nr) & 1;
}
static inline bool test_and_clear_bit(unsigned nr, unsigned long *w)
{
	return (__atomic_fetch_and(w, ~(1UL << nr), __ATOMIC_SEQ_CST) >> nr) & 1;
}
static inline bool test_and_set_bit_lock(unsigned nr, unsigned long *w)
{
	return (__atomic_fetch_or(w, 1UL << nr, __ATOMIC_ACQUIRE) >> nr) & 1;
}
static inline void clear_bit_unlock(unsigned nr, unsigned long *w)
{
	__atomic_fetch_and(w, ~(1UL << nr), __ATOMIC_RELEASE);
}

#endif

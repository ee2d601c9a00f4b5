/*
 * Memory ordering and atomics, over the GCC __atomic builtins, under the names a
 * kernel engineer expects. Generic code uses only these; no inline asm outside arch/.
 *
 * smp_mb/rmb/wmb are full/read/write fences between CPUs. smp_load_acquire and
 * smp_store_release order one access against everything after/before it; pair them
 * and say so at both ends. READ_ONCE/WRITE_ONCE stop the compiler from tearing,
 * fusing or re-reading an access, and order nothing between CPUs.
 */
#ifndef GRACE_ATOMIC_H
#define GRACE_ATOMIC_H

#include <grace/types.h>

#define barrier() __asm__ __volatile__("" ::: "memory")

#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	long counter;
} atomic_long_t;

#define ATOMIC_INIT(v) { (v) }

static inline int atomic_read(const atomic_t *a) { return __atomic_load_n(&a->counter, __ATOMIC_RELAXED); }
static inline void atomic_set(atomic_t *a, int v) { __atomic_store_n(&a->counter, v, __ATOMIC_RELAXED); }
static inline void atomic_add(atomic_t *a, int v) { __atomic_fetch_add(&a->counter, v, __ATOMIC_RELAXED); }
static inline void atomic_inc(atomic_t *a) { atomic_add(a, 1); }
static inline void atomic_dec(atomic_t *a) { atomic_add(a, -1); }
/* The value-returning operations are fully ordered, as in Linux. */
static inline int atomic_add_return(atomic_t *a, int v) { return __atomic_add_fetch(&a->counter, v, __ATOMIC_SEQ_CST); }
static inline int atomic_inc_return(atomic_t *a) { return atomic_add_return(a, 1); }
static inline int atomic_dec_return(atomic_t *a) { return atomic_add_return(a, -1); }
static inline int atomic_xchg(atomic_t *a, int v) { return __atomic_exchange_n(&a->counter, v, __ATOMIC_SEQ_CST); }
static inline bool atomic_cmpxchg(atomic_t *a, int *old, int new)
{
	return __atomic_compare_exchange_n(&a->counter, old, new, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static inline long atomic_long_read(const atomic_long_t *a) { return __atomic_load_n(&a->counter, __ATOMIC_RELAXED); }
static inline void atomic_long_set(atomic_long_t *a, long v) { __atomic_store_n(&a->counter, v, __ATOMIC_RELAXED); }
static inline void atomic_long_add(atomic_long_t *a, long v) { __atomic_fetch_add(&a->counter, v, __ATOMIC_RELAXED); }
static inline long atomic_long_add_return(atomic_long_t *a, long v) { return __atomic_add_fetch(&a->counter, v, __ATOMIC_SEQ_CST); }

/* Bit operations on an unsigned long word; the returning ones are fully ordered. */
static inline void set_bit(unsigned nr, unsigned long *w) { __atomic_fetch_or(w, 1UL << nr, __ATOMIC_RELAXED); }
static inline void clear_bit(unsigned nr, unsigned long *w) { __atomic_fetch_and(w, ~(1UL << nr), __ATOMIC_RELAXED); }
static inline bool test_bit(unsigned nr, const unsigned long *w) { return (__atomic_load_n(w, __ATOMIC_RELAXED) >> nr) & 1; }
static inline bool test_and_set_bit(unsigned nr, unsigned long *w)
{
	return (__atomic_fetch_or(w, 1UL << nr, __ATOMIC_SEQ_CST) >> nr) & 1;
}
static inline bool test_and_clear_bit(unsigned nr, unsigned long *w)
{
	return (__atomic_fetch_and(w, ~(1UL << nr), __ATOMIC_SEQ_CST) >> nr) & 1;
}

#endif

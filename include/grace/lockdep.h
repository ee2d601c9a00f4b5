/*
 * The lock validator (LOCKDEP=1) and the lock statistics (LOCKSTAT=1); how they
 * work and how to read a report: docs/locking.md, "Lock validator and statistics".
 *
 * Every lock belongs to a class: the place it was initialised. An initializer
 * (SPINLOCK_INIT, DEFINE_MUTEX, WAIT_QUEUE_HEAD_INIT...) or an init macro
 * (spin_lock_init, mutex_init, wait_queue_init...) stamps the lock's lockdep_map
 * with a key naming its file and line, so every lock initialised at one place is
 * of one class, whatever its address; lock_set_class() gives a lock another class
 * (an array of locks that must share one is initialised in a loop, at one place,
 * and needs nothing). Each thread keeps a stack of the locks it holds; a lock
 * taken while another is held adds the dependency "held -> taken" between their
 * classes, and a new dependency that closes a cycle is a possible deadlock,
 * reported once, even if the two orders were taken on two CPUs minutes apart.
 *
 * Neither option adds a field, a branch or a call to a normal build: the hooks
 * below are empty macros there, whose arguments are never compiled.
 *
 * The lock primitives call the hooks; other code uses only lockdep_assert_held(),
 * might_sleep(), spin_lock_nested() (grace/spinlock.h), mutex_lock_nested()
 * (grace/mutex.h), lock_set_class() and bit_spin_lock_set_class().
 */
#ifndef GRACE_LOCKDEP_H
#define GRACE_LOCKDEP_H

#include <grace/compiler.h>
#include <grace/types.h>

#if defined(GRACE_LOCKDEP) || defined(GRACE_LOCKSTAT)
#define GRACE_LOCK_CLASSES 1
#endif

#define __lockdep_stringify_1(x) #x
#define __lockdep_stringify(x) __lockdep_stringify_1(x)

/*
 * A class key for lock_set_class(): a static object whose address is the key.
 * Keys need distinct addresses only, so one byte does.
 */
struct lock_class_key {
	char unused;
};

/*
 * Subclasses, for spin_lock_nested(): a second lock of one class taken while the
 * first is held, in an order the code guarantees (double_rq_lock(): the lower
 * CPU's first). Each subclass is a class of its own for the validator.
 */
#define SINGLE_DEPTH_NESTING 1
#define LOCKDEP_MAX_SUBCLASSES 8

/* lock_acquire() flags */
#define LOCK_TRY 1u	 /* a trylock that succeeded: it never waited */
#define LOCK_READ 2u	 /* a reader of an rwlock */
#define LOCK_SLEEPING 4u /* a mutex: its holder may sleep */
#define LOCK_NOW 8u	 /* the lock is ours already: no lock_acquired() follows */
#define LOCK_WAITS 0x80u /* it is about to wait: lock_contended() in the same call */

#ifdef GRACE_LOCK_CLASSES

struct lock_class;

/* In every lock (spinlock_t, rwlock_t, struct mutex) of a LOCKDEP or LOCKSTAT build. */
struct lockdep_map {
	const void *key;	  /* the init site's "name@file:line" string, or a lock_class_key */
	const char *name;	  /* how reports name the class; "": by the key string */
	struct lock_class *class; /* subclass 0's class, cached by the first acquisition */
};

#define LOCKDEP_SITE(name) name "@" __FILE__ ":" __lockdep_stringify(__LINE__)
/*
 * The map of a lock initialised here, name a string literal ("" for none): keyed by
 * this file and line (of the outermost macro), and the name.
 */
#define LOCKDEP_MAP_INIT(name)                                                                     \
	{                                                                                          \
		LOCKDEP_SITE(name), name, NULL                                                     \
	}
/* ", .dep_map = ..." for a lock type's initializer; nothing in a normal build. */
#define LOCKDEP_MAP_FIELD(name) , .dep_map = LOCKDEP_MAP_INIT(name)

/* One held lock, on its thread's stack (struct task_lockdep). */
struct held_lock {
	uintptr_t instance;	  /* the lock's lockdep_map, or a bit lock's word */
	struct lock_class *class; /* NULL: a lock without a class, not tracked */
	uintptr_t ip;		  /* where it was acquired */
	u64 time_ns;		  /* LOCKSTAT: when the wait began, then when it was acquired */
	u8 bit;			  /* a bit lock's bit */
	u8 flags;		  /* LOCK_* and HELD_* (kernel/locking/lockdep_internal.h) */
};

/*
 * Deep enough for the kernel's deepest nesting (a mutex, a wait queue, two run
 * queues, printk: five) several times over; Linux's MAX_LOCK_DEPTH is 48.
 */
#define LOCKDEP_MAX_DEPTH 32

/* In struct task. Written by its own thread only, with interrupts off. */
struct task_lockdep {
	u16 depth;     /* locks held */
	u16 rcu_depth; /* rcu_read_lock() nesting (LOCKDEP) */
	u8 in_softirq; /* running a softirq handler (softirqd) */
	u8 reported;   /* a held-lock stack overflow was reported */
	struct held_lock held[LOCKDEP_MAX_DEPTH];
};

/*
 * The hooks. ip: where the lock operation was called, or 0 for the return address
 * of the hook itself, which is the caller's site when the lock function is inline.
 * A lock that may wait calls lock_acquire() before it waits, so that a deadlock is
 * reported rather than hung in, and lock_acquired() once it holds the lock; one
 * taken at the first try calls lock_acquire() with LOCK_NOW after, and nothing else.
 */
void lock_acquire(struct lockdep_map *map, unsigned subclass, unsigned flags, uintptr_t ip);
void lock_contended(struct lockdep_map *map);
void lock_acquired(struct lockdep_map *map);
void lock_release(struct lockdep_map *map, uintptr_t ip);
void bit_lock_acquire(const void *word, unsigned bit, unsigned flags, uintptr_t ip);
void bit_lock_acquired(const void *word, unsigned bit);
void bit_lock_release(const void *word, unsigned bit, uintptr_t ip);
/* The run-queue lock passes from the thread switched away from to the one switched to. */
void lock_switch_out(struct lockdep_map *map);
void lock_switch_in(struct lockdep_map *map);
void lockdep_set_class_map(struct lockdep_map *map, const struct lock_class_key *key,
			   const char *name);
void lockdep_set_bit_class(const void *words, size_t size, const struct lock_class_key *key,
			   const char *name);
void lock_assert_held(const struct lockdep_map *map, uintptr_t ip);
void lockdep_hardirqs_restored(void);

#else /* !GRACE_LOCK_CLASSES */

#define LOCKDEP_MAP_FIELD(name)
#define lock_acquire(map, subclass, flags, ip) ((void)0)
#define lock_contended(map) ((void)0)
#define lock_acquired(map) ((void)0)
#define lock_release(map, ip) ((void)0)
#define bit_lock_acquire(word, bit, flags, ip) ((void)0)
#define bit_lock_acquired(word, bit) ((void)0)
#define bit_lock_release(word, bit, ip) ((void)0)
#define lock_switch_out(map) ((void)0)
#define lock_switch_in(map) ((void)0)
#define lockdep_set_class_map(map, key, name) ((void)(key))
#define lockdep_set_bit_class(words, size, key, name) ((void)(key))
#define lock_assert_held(map, ip) ((void)0)
#define lockdep_hardirqs_restored() ((void)0)

#endif /* GRACE_LOCK_CLASSES */

#ifdef GRACE_LOCKDEP
/* The events of the validator that are not lock operations. */
void lockdep_might_sleep(uintptr_t ip);
void lockdep_rcu_read_lock(void);
void lockdep_rcu_read_unlock(void);
void lockdep_softirq_enter(void);
void lockdep_softirq_exit(void);
void lockdep_hardirq_enter(void);
void lockdep_hardirq_exit(void);
void lockdep_sched_check(void); /* schedule(): no spinning lock held, no RCU reader */
void lockdep_exit_check(void);	/* kthread_exit(): no lock held */
#else
#define lockdep_might_sleep(ip) ((void)(ip))
#define lockdep_rcu_read_lock() ((void)0)
#define lockdep_rcu_read_unlock() ((void)0)
#define lockdep_softirq_enter() ((void)0)
#define lockdep_softirq_exit() ((void)0)
#define lockdep_hardirq_enter() ((void)0)
#define lockdep_hardirq_exit() ((void)0)
#define lockdep_sched_check() ((void)0)
#define lockdep_exit_check() ((void)0)
#endif

/*
 * The calling code may sleep here: under LOCKDEP, a report if it holds a spinning
 * lock (spinlock, rwlock, bit lock, seqlock writer), is inside rcu_read_lock(), in
 * an interrupt handler or has interrupts off, whether or not it sleeps this time.
 */
#define might_sleep() lockdep_might_sleep(0)

/*
 * The calling thread holds lock (any lock type with a dep_map: spinlock_t, rwlock_t
 * for reading or writing, struct mutex). Live under LOCKDEP and LOCKSTAT; in a
 * normal build lock is not even evaluated.
 */
#ifdef GRACE_LOCK_CLASSES
#define lockdep_assert_held(lock) lock_assert_held(&(lock)->dep_map, 0)
#else
#define lockdep_assert_held(lock) ((void)sizeof(lock))
#endif

/* Give lock (spinlock_t, rwlock_t, struct mutex) the class of key, named name. */
#define lock_set_class(lock, key, name) lockdep_set_class_map(&(lock)->dep_map, key, name)

/*
 * Bit spinlocks have no room for a map: their class is their word's. The words
 * in [words, words + size) (a hash table's buckets) are of the class of key;
 * a bit lock on a word in no such range is not tracked, and said so once.
 */
#define bit_spin_lock_set_class(words, size, key, name)                                            \
	lockdep_set_bit_class(words, size, key, name)

/*
 * Lock statistics (LOCKSTAT): zero every CPU's figures; print the classes with the
 * most contended acquisitions, at most rows of them, under a title line. The
 * benchmarks do both around each phase (kernel/bench.c); the shell's `locks` too.
 */
#ifdef GRACE_LOCKSTAT
void lockstat_reset(void);
void lockstat_print(const char *title, unsigned rows);
#else
#define lockstat_reset() ((void)0)
#define lockstat_print(title, rows) ((void)0)
#endif

/* Stop validating and counting (panic(): the machine is stopping, and printk must get out). */
#ifdef GRACE_LOCK_CLASSES
void lockdep_off(void);
#else
#define lockdep_off() ((void)0)
#endif
/* Is this a LOCKDEP=1 (validator) or LOCKSTAT=1 (statistics) build? For tests and `locks`. */
bool lockdep_enabled(void);
bool lockstat_enabled(void);

#endif

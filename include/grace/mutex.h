/*
 * Sleeping mutex: one owner, waiters sleep in FIFO order, and unlock hands the
 * mutex straight to the first waiter, so a thread that keeps re-locking cannot
 * starve the ones queued behind it. The uncontended paths are a single
 * compare-and-swap on the owner word. Threads only; not in interrupts or with
 * a spinlock held.
 */
#ifndef GRACE_MUTEX_H
#define GRACE_MUTEX_H

#include <grace/list.h>
#include <grace/spinlock.h>
#include <grace/types.h>

struct task;

struct mutex {
	uintptr_t owner;	  /* the owning task | MUTEX_WAITERS; 0 when free */
	spinlock_t wait_lock;	  /* protects waiters */
	struct list_head waiters; /* struct mutex_waiter, oldest first */
#ifdef GRACE_LOCK_CLASSES
	struct lockdep_map dep_map; /* its class (LOCKDEP, LOCKSTAT): the init site */
#endif
};

/*
 * var: the mutex (its waiters list points to itself); name: its class's name
 * (LOCKDEP, LOCKSTAT builds), keyed by where the initializer is written.
 */
/* clang-format off */
#define MUTEX_INIT_NAMED(var, name) \
	{ 0, SPINLOCK_INIT_NAMED(name ".wait_lock"), LIST_HEAD_INIT((var).waiters) \
	  LOCKDEP_MAP_FIELD(name) }
/* clang-format on */
#define MUTEX_INIT(name) MUTEX_INIT_NAMED(name, #name)
#define DEFINE_MUTEX(name) struct mutex name = MUTEX_INIT(name)
/* Its class is named by m and keyed by the call site (LOCKDEP, LOCKSTAT builds). */
#ifdef GRACE_LOCK_CLASSES
#define mutex_init(m)                                                                              \
	do {                                                                                       \
		struct mutex *__m = (m);                                                           \
		*__m = (struct mutex)MUTEX_INIT_NAMED(*__m, #m);                                   \
	} while (0)
#else
void mutex_init(struct mutex *m);
#endif

void mutex_lock(struct mutex *m);
/*
 * mutex_lock() of a second mutex of a class already held, subclass saying which
 * (SINGLE_DEPTH_NESTING; grace/lockdep.h): for the validator, the code takes the
 * two in an order it guarantees by other means (a parent directory's before its
 * child's). Outside LOCKDEP and LOCKSTAT builds it is mutex_lock().
 */
void mutex_lock_nested(struct mutex *m, unsigned subclass);
bool mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);
/* The task holding m, or NULL. */
struct task *mutex_owner(const struct mutex *m);
/* Does the calling thread hold m? */
bool mutex_is_mine(const struct mutex *m);

#endif

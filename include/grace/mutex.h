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
};

/* clang-format off */
#define MUTEX_INIT(name) { 0, SPINLOCK_INIT, LIST_HEAD_INIT((name).waiters) }
/* clang-format on */
#define DEFINE_MUTEX(name) struct mutex name = MUTEX_INIT(name)

void mutex_init(struct mutex *m);
void mutex_lock(struct mutex *m);
bool mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);
/* The task holding m, or NULL. */
struct task *mutex_owner(const struct mutex *m);
/* Does the calling thread hold m? */
bool mutex_is_mine(const struct mutex *m);

#endif

/*
 * Sleeping mutex (grace/mutex.h).
 *
 * The owner word holds the owning task's address with bit 0 (MUTEX_WAITERS) set
 * while threads wait. Fast paths: lock is CAS 0 -> current, unlock is CAS
 * current -> 0, which fails when MUTEX_WAITERS is set and sends unlock to the
 * slow path. There, under wait_lock, the first waiter becomes the owner before
 * it is woken (a hand-off): the mutex is never free while anyone waits, so
 * nobody can overtake the queue.
 */
#include <grace/mutex.h>
#include <grace/printk.h>
#include <grace/sched.h>

#define MUTEX_WAITERS 1UL

struct mutex_waiter {
	struct list_head node;
	struct task *task;
	u32 granted; /* set (release) by the unlocker once we own the mutex */
};

#ifndef GRACE_LOCK_CLASSES
/* Out of line where no class is named (in LOCKDEP and LOCKSTAT builds, a macro: mutex.h). */
void mutex_init(struct mutex *m)
{
	m->owner = 0;
	spin_lock_init(&m->wait_lock);
	list_init(&m->waiters);
}
#endif

struct task *mutex_owner(const struct mutex *m)
{
	return (struct task *)(READ_ONCE(m->owner) & ~MUTEX_WAITERS);
}

bool mutex_is_mine(const struct mutex *m)
{
	return mutex_owner(m) == current;
}

static bool mutex_try_owner(struct mutex *m)
{
	uintptr_t free = 0;
	/* Acquire: pairs with the release of owner in mutex_unlock(). */
	return try_cmpxchg_acquire(&m->owner, &free, (uintptr_t)current);
}

bool mutex_trylock(struct mutex *m)
{
	if (!mutex_try_owner(m))
		return false;
	lock_acquire(&m->dep_map, 0, LOCK_TRY | LOCK_SLEEPING | LOCK_NOW,
		     (uintptr_t)__builtin_return_address(0));
	return true;
}

static void mutex_lock_slow(struct mutex *m)
{
	struct mutex_waiter w = {.task = current, .granted = 0};
	unsigned long flags = spin_lock_irqsave(&m->wait_lock);

	uintptr_t old = READ_ONCE(m->owner);
	for (;;) {
		/* Free: an unlock ran since our fast path failed, and nobody waits (hand-off). */
		if (!old) {
			/* As in mutex_trylock(). */
			if (try_cmpxchg_acquire(&m->owner, &old, (uintptr_t)current)) {
				spin_unlock_irqrestore(&m->wait_lock, flags);
				return;
			}
			continue;
		}
		/* Mark the waiters bit so that the owner's unlock comes to wait_lock. */
		if ((old & MUTEX_WAITERS) ||
		    try_cmpxchg_relaxed(&m->owner, &old, old | MUTEX_WAITERS))
			break;
	}
	list_add_tail(&w.node, &m->waiters);
	spin_unlock_irqrestore(&m->wait_lock, flags);

	for (;;) {
		set_current_state(TASK_SLEEPING);
		/* Pairs with the release of granted in mutex_unlock(): we own it. */
		if (smp_load_acquire(&w.granted))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	/*
	 * The unlocker grants, then wakes us, both under wait_lock. Wait for it to be
	 * done before we run on (and perhaps exit): it still holds our task pointer.
	 */
	flags = spin_lock_irqsave(&m->wait_lock);
	spin_unlock_irqrestore(&m->wait_lock, flags);
}

/* ip: the caller of mutex_lock() or mutex_lock_nested(), for the validator's reports. */
static __always_inline void mutex_lock_common(struct mutex *m, unsigned subclass, uintptr_t ip)
{
	lockdep_might_sleep(ip);
	if (mutex_is_mine(m))
		panic("mutex %p: recursive lock by '%s'", (void *)m, current->name);
	if (!mutex_try_owner(m)) {
		/* The validator sees the attempt before the wait (grace/lockdep.h). */
		lock_acquire(&m->dep_map, subclass, LOCK_SLEEPING | LOCK_WAITS, ip);
		mutex_lock_slow(m);
		lock_acquired(&m->dep_map);
	} else {
		lock_acquire(&m->dep_map, subclass, LOCK_SLEEPING | LOCK_NOW, ip);
	}
}

void mutex_lock(struct mutex *m)
{
	mutex_lock_common(m, 0, (uintptr_t)__builtin_return_address(0));
}

void mutex_lock_nested(struct mutex *m, unsigned subclass)
{
	mutex_lock_common(m, subclass, (uintptr_t)__builtin_return_address(0));
}

void mutex_unlock(struct mutex *m)
{
	uintptr_t self = (uintptr_t)current;
	if (mutex_owner(m) != current)
		panic("mutex %p: unlocked by '%s', which does not own it", (void *)m,
		      current->name);
	lock_release(&m->dep_map, (uintptr_t)__builtin_return_address(0));
	uintptr_t expected = self;
	/* Release: pairs with the acquire in mutex_trylock() and mutex_lock_slow(). */
	if (try_cmpxchg_release(&m->owner, &expected, 0))
		return;

	/* Waiters: hand the mutex to the oldest. */
	unsigned long flags = spin_lock_irqsave(&m->wait_lock);
	struct mutex_waiter *w = list_first_entry(&m->waiters, struct mutex_waiter, node);
	list_del_init(&w->node);
	struct task *t = w->task;
	uintptr_t next = (uintptr_t)t | (list_empty(&m->waiters) ? 0 : MUTEX_WAITERS);
	/*
	 * Release: the new owner sees everything done under the mutex. Pairs with the
	 * smp_load_acquire() of granted in mutex_lock_slow() (and owner's readers).
	 */
	smp_store_release(&m->owner, next);
	smp_store_release(&w->granted, 1); /* its owner returns only after our unlock */
	wake_up_process(t);
	spin_unlock_irqrestore(&m->wait_lock, flags);
}

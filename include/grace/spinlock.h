/*
 * Ticket spinlocks with auto-tuned proportional backoff.
 *
 * An acquirer takes a ticket (next++) and owns the lock when owner reaches it. A
 * waiter d tickets from the head does not poll the shared line continuously: it
 * waits about delay * d iterations, then looks again, so the line that moves on
 * every release is read by few CPUs at a time. The delay is tuned per CPU, in a
 * table of SPIN_DELAY_SLOTS entries indexed by a hash of the lock's address, so a
 * lock held for long and one held briefly do not share one delay ("x86,smp: auto
 * tune spinlock backoff delay factor", Rik van Riel, 2012: in Eric Dumazet's test
 * one delay per CPU lost 13% on a contended qdisc, a delay per hashed lock
 * address gained 45%).
 *
 * One delay per CPU for every lock (the thread's first patch) is spinlock_delay=single.
 *
 * Plain ticket spinning (no backoff) is a runtime choice: per lock (spin_lock_set_plain)
 * or for every lock (spinlock_backoff = false; boot argument spinlock=plain).
 *
 * Paravirtual waits, in addition to either (kernel/locking/spinlock_pv.c; on by
 * default under a hypervisor or an emulator, boot argument spinlock_pv=on|off): a
 * waiter that has spun for a bounded time halts its CPU, and the unlocker kicks the
 * CPU whose ticket is next, as Linux 3.12's paravirtual ticket locks do, so that a
 * vCPU waiting behind a descheduled one gives its host CPU away. Tickets count in
 * steps of two: bit 0 of owner, SPIN_OWNER_HALTED, says a waiter may have halted,
 * and only then does an unlock look for one to kick (Linux 4.0 keeps its
 * TICKET_SLOWPATH_FLAG in the head alike). The unlock releases and reads the bit
 * in one atomic step, after which the lock is not its to read: the next holder may
 * free it.
 */
#ifndef GRACE_SPINLOCK_H
#define GRACE_SPINLOCK_H

#include <grace/atomic.h>
#include <grace/lockdep.h>
#include <grace/preempt.h>
#include <asm/irq.h>

typedef struct {
	u32 owner;  /* ticket now being served, and SPIN_OWNER_HALTED; see spin_release_owner() */
	u32 next;   /* next ticket to hand out */
	bool plain; /* this lock never backs off */
#ifdef GRACE_LOCK_CLASSES
	struct lockdep_map dep_map; /* its class (LOCKDEP, LOCKSTAT): the init site */
#endif
} spinlock_t;

/*
 * The initializers name the lock's class (LOCKDEP, LOCKSTAT builds): DEFINE_SPINLOCK
 * by the variable, SPINLOCK_INIT by the file and line it is written on, and
 * spin_lock_init() by its argument and call site. A normal build drops the names.
 */
/* clang-format off */
#define SPINLOCK_INIT_NAMED(name) { 0, 0, false LOCKDEP_MAP_FIELD(name) }
/* clang-format on */
#define SPINLOCK_INIT SPINLOCK_INIT_NAMED("")
#define DEFINE_SPINLOCK(name) spinlock_t name = SPINLOCK_INIT_NAMED(#name)
#define spin_lock_init_named(lock, name) (*(lock) = (spinlock_t)SPINLOCK_INIT_NAMED(name))
#define spin_lock_init(lock) spin_lock_init_named(lock, #lock)

/* Global switch read on every contended acquisition; benchmarks flip it between phases. */
extern bool spinlock_backoff;
/*
 * spinlock_delay=single (boot argument; spin_delay_set_single() at run time): every
 * lock tunes slot 0 of the CPU's delay table, one delay per CPU as in the 2012
 * thread's first patch, instead of the slot its address hashes to (hashed, the
 * default). In Eric Dumazet's HTB test that single delay lost 13% to plain spinning.
 */
extern bool spinlock_delay_single;
void spin_delay_set_single(bool single);

void spin_lock_wait(spinlock_t *lock, u32 ticket);

#define SPIN_TICKET_INC 2u
#define SPIN_OWNER_HALTED 1u /* in owner: a waiter may be halted (paravirtual waits) */

/* The ticket being served, from a value of owner. */
static inline u32 spin_owner_ticket(u32 owner)
{
	return owner & ~SPIN_OWNER_HALTED;
}

/*
 * Tickets drawn and not yet served: the holder's and each waiter's (0: free).
 * Read without the lock, negative only if owner moved between the two loads.
 */
static inline s32 spin_tickets_out(spinlock_t *lock)
{
	u32 next = READ_ONCE(lock->next);
	return (s32)(next - spin_owner_ticket(READ_ONCE(lock->owner))) / (s32)SPIN_TICKET_INC;
}

/* Taken with SPIN_OWNER_HALTED set: clear it unless a ticket is out behind ours. */
void spin_owner_clear_halted(spinlock_t *lock);

/*
 * spinlock_pv: contended waiters halt after SPIN_PV_THRESHOLD loops of spinning.
 * spinlock_pv_kick: unlockers look for a halted next waiter; set before spinlock_pv
 * and cleared after it (spin_pv_set()), so no waiter halts unseen. Both stay false
 * on hardware without a hypervisor: unlock is then the release store and two loads
 * of a flag that never changes (before the store and after), the "static key" of
 * this kernel.
 */
extern bool spinlock_pv;
extern bool spinlock_pv_kick;
void spin_unlock_kick(const spinlock_t *lock, u32 ticket);
/*
 * At boot, before other CPUs run: spinlock_pv=on|off (arg; NULL when absent), else
 * arch_is_virtual(). Prints the boot line saying which and why.
 */
void spin_pv_init(const char *arg);

/* The acquisition, once ticket is drawn: at once, or after spin_lock_wait(). */
static inline void spin_lock_ticket(spinlock_t *lock, u32 ticket, unsigned subclass)
{
	/* Pairs with the release in spin_unlock(). */
	u32 owner = smp_load_acquire(&lock->owner);
	if (likely(owner == ticket)) {
		lock_acquire(&lock->dep_map, subclass, LOCK_NOW, 0);
	} else if (owner == (ticket | SPIN_OWNER_HALTED)) {
		/* Ours at once, with the bit a halted waiter before us left. */
		lock_acquire(&lock->dep_map, subclass, LOCK_NOW, 0);
		spin_owner_clear_halted(lock);
	} else {
		/* The validator sees the attempt before the wait (grace/lockdep.h). */
		lock_acquire(&lock->dep_map, subclass, LOCK_WAITS, 0);
		spin_lock_wait(lock, ticket);
		lock_acquired(&lock->dep_map);
	}
}

static inline void spin_lock(spinlock_t *lock)
{
	preempt_disable();
	spin_lock_ticket(lock, fetch_add_relaxed(&lock->next, SPIN_TICKET_INC), 0);
}

/*
 * spin_lock() for a second lock of a class already held, subclass saying which
 * (SINGLE_DEPTH_NESTING): for the validator, the code takes the two in an order
 * it guarantees by other means (double_rq_lock(): the lower CPU's first). Only the
 * validator's builds tell it apart, so that a normal build's callers, and what
 * the compiler inlines into them, stay exactly spin_lock()'s.
 */
#ifdef GRACE_LOCK_CLASSES
static inline void spin_lock_nested(spinlock_t *lock, unsigned subclass)
{
	preempt_disable();
	spin_lock_ticket(lock, fetch_add_relaxed(&lock->next, SPIN_TICKET_INC), subclass);
}
#else
#define spin_lock_nested(lock, subclass) spin_lock(lock)
#endif

static inline bool spin_trylock(spinlock_t *lock)
{
	preempt_disable();
	/*
	 * Acquire here, not only on the CAS: the last write to next was the previous
	 * holder's relaxed fetch_add, made before its critical section; the release that
	 * publishes that section is its store to owner. Pairs with spin_unlock().
	 */
	u32 owner = smp_load_acquire(&lock->owner);
	u32 expected = spin_owner_ticket(owner);
	/* Free means next == owner; take ticket `owner` only if nobody else holds one. */
	if (try_cmpxchg_acquire(&lock->next, &expected, expected + SPIN_TICKET_INC)) {
		lock_acquire(&lock->dep_map, 0, LOCK_TRY | LOCK_NOW, 0);
		if (unlikely(owner & SPIN_OWNER_HALTED))
			spin_owner_clear_halted(lock);
		return true;
	}
	preempt_enable();
	return false;
}

/* The release half of every unlock: hand the lock to the next ticket. */
static inline void spin_release_owner(spinlock_t *lock)
{
	/*
	 * Pairs with the smp_load_acquire() of owner in spin_lock(), spin_trylock(),
	 * spin_lock_wait(). From here the lock may be someone else's, even freed: the
	 * kick uses only its address.
	 */
	if (unlikely(READ_ONCE(spinlock_pv_kick))) {
		/*
		 * A waiter sets SPIN_OWNER_HALTED by an atomic step on owner too, before
		 * it looks at owner a last time and halts: of the two, the later sees the
		 * earlier, so the waiter sees its ticket served or we see the bit.
		 */
		u32 old = fetch_add(&lock->owner, SPIN_TICKET_INC);
		if (unlikely(old & SPIN_OWNER_HALTED))
			spin_unlock_kick(lock, spin_owner_ticket(old) + SPIN_TICKET_INC);
	} else {
		/*
		 * No waiter halts while kicks are off, so only the holder moves owner and
		 * a plain read is stable. But kicks may have come on since we looked,
		 * and a waiter may halt before our store is seen: look again after it,
		 * and then read the table whatever the bit, as every unlock once did.
		 * spin_pv_set(true) makes every CPU pass a barrier between turning kicks
		 * on and letting waiters halt, so a second look that still finds them off
		 * had its store seen before any waiter could halt.
		 */
		u32 ticket = spin_owner_ticket(lock->owner) + SPIN_TICKET_INC;
		smp_store_release(&lock->owner, ticket);
		if (unlikely(READ_ONCE(spinlock_pv_kick))) {
			smp_mb(); /* our store, then the table: pairs with the waiter's fetch_or */
			spin_unlock_kick(lock, ticket);
		}
	}
	/*
	 * After the release: a report from here (printk) never waits for this lock. The
	 * validator uses the map's address only, never what it points to.
	 */
	lock_release(&lock->dep_map, 0);
}

static inline void spin_unlock(spinlock_t *lock)
{
	spin_release_owner(lock);
	preempt_enable();
}

static inline bool spin_is_locked(spinlock_t *lock)
{
	return spin_owner_ticket(READ_ONCE(lock->owner)) != READ_ONCE(lock->next);
}

static inline unsigned long spin_lock_irqsave(spinlock_t *lock)
{
	unsigned long flags = arch_irq_save();
	spin_lock(lock);
	return flags;
}

static inline void spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	spin_release_owner(lock);
	/* Interrupts back on first, so a reschedule that came due can happen right here. */
	arch_irq_restore(flags);
	lockdep_hardirqs_restored(); /* the locks still held are now held with interrupts on */
	preempt_enable();
}

static inline void spin_lock_set_plain(spinlock_t *lock, bool plain)
{
	WRITE_ONCE(lock->plain, plain);
}

#endif

/*
 * Hash-bucket lists whose lock is bit 0 of the head pointer (Linux's hlist_bl): a
 * table of these costs one word per bucket and still has a lock per bucket, which
 * is what the dcache's hash needs, millions of buckets each rarely contended.
 * Nodes are at least pointer-aligned, so bit 0 of a real node address is always
 * clear and free to be the lock.
 *
 * Updaters take the bucket's bit spinlock (hlist_bl_lock()) and add and delete
 * with the _rcu operations, which keep the lock bit set in the head while they
 * rewrite it; readers walk without any lock, inside rcu_read_lock(), with
 * hlist_bl_for_each_entry_rcu(), and may see a node being added or deleted, never
 * a torn one: a node is initialised before the release that publishes it, and a
 * deleted node keeps its next pointer until a grace period has passed (it must not
 * be freed or added again before that; call_rcu/synchronize_rcu). Nothing but the
 * head's first pointer ever carries the lock bit: iterators mask it there, and a
 * node's next is always a plain pointer.
 *
 * To the lock validator (LOCKDEP=1) a bucket's lock is a bit lock of its head's
 * word: give a table its class with
 *	bit_spin_lock_set_class(heads, count * sizeof(struct hlist_bl_head), &key, "name");
 * where the size is in bytes, the span [heads, heads + size) of the words
 * (grace/lockdep.h). Every bucket of the table is then one class: take two at once
 * only in an order the code guarantees.
 */
#ifndef GRACE_LIST_BL_H
#define GRACE_LIST_BL_H

#include <grace/bit_spinlock.h>
#include <grace/printk.h>
#include <grace/rculist.h>

struct hlist_bl_node {
	struct hlist_bl_node *next, **pprev;
};

struct hlist_bl_head {
	struct hlist_bl_node *first; /* bit HLIST_BL_LOCK_BIT: the bucket's lock */
};

#define HLIST_BL_LOCK_BIT 0
#define HLIST_BL_LOCK_MASK (1UL << HLIST_BL_LOCK_BIT)

static inline void hlist_bl_init_head(struct hlist_bl_head *h)
{
	h->first = NULL;
}

static inline void hlist_bl_init_node(struct hlist_bl_node *n)
{
	n->next = NULL;
	n->pprev = NULL;
}

static inline void hlist_bl_lock(struct hlist_bl_head *h)
{
	bit_spin_lock(HLIST_BL_LOCK_BIT, (unsigned long *)&h->first);
}

static inline void hlist_bl_unlock(struct hlist_bl_head *h)
{
	bit_spin_unlock(HLIST_BL_LOCK_BIT, (unsigned long *)&h->first);
}

static inline bool hlist_bl_trylock(struct hlist_bl_head *h)
{
	return bit_spin_trylock(HLIST_BL_LOCK_BIT, (unsigned long *)&h->first);
}

static inline bool hlist_bl_is_locked(const struct hlist_bl_head *h)
{
	return bit_spin_is_locked(HLIST_BL_LOCK_BIT, (const unsigned long *)&h->first);
}

static inline struct hlist_bl_node *hlist_bl_unmask(struct hlist_bl_node *p)
{
	return (struct hlist_bl_node *)((uintptr_t)p & ~HLIST_BL_LOCK_MASK);
}

/*
 * The first node, for updaters under the bucket lock. A relaxed load: lock
 * waiters' atomic ORs touch the word meanwhile (and change nothing).
 */
static inline struct hlist_bl_node *hlist_bl_first(struct hlist_bl_head *h)
{
	return hlist_bl_unmask(READ_ONCE(h->first));
}

/* The first node, for readers under rcu_read_lock(). Pairs with hlist_bl_add_head_rcu(). */
static inline struct hlist_bl_node *hlist_bl_first_rcu(struct hlist_bl_head *h)
{
	return hlist_bl_unmask(rcu_dereference(h->first));
}

/* On no list: never added, or taken off with hlist_bl_del_init_rcu(). */
static inline bool hlist_bl_unhashed(const struct hlist_bl_node *n)
{
	return !READ_ONCE(n->pprev);
}

/* Caller holds h's lock. n is initialised here, then published at the head. */
static inline void hlist_bl_add_head_rcu(struct hlist_bl_node *n, struct hlist_bl_head *h)
{
	struct hlist_bl_node *locked = READ_ONCE(h->first);
	BUG_ON(!((uintptr_t)locked & HLIST_BL_LOCK_MASK)); /* the bucket is not locked */
	struct hlist_bl_node *first = hlist_bl_unmask(locked);
	WRITE_ONCE(n->next, first); /* n may be visible already: a rename re-adds it */
	WRITE_ONCE(n->pprev, &h->first);
	if (first)
		first->pprev = &n->next;
	/*
	 * n's fields before n: pairs with rcu_dereference() in the readers. The
	 * lock bit stays set: we still hold the lock.
	 */
	rcu_assign_pointer(h->first, (struct hlist_bl_node *)((uintptr_t)n | HLIST_BL_LOCK_MASK));
}

/*
 * Caller holds the lock of n's bucket. Unlink n; readers already on n still step
 * forward from it, so n->next is kept; n->pprev is poisoned (readers never follow
 * it).
 */
static inline void hlist_bl_del_rcu(struct hlist_bl_node *n)
{
	struct hlist_bl_node *next = n->next;
	struct hlist_bl_node **pprev = n->pprev;
	/* pprev is the head's first pointer when n is first: its lock bit stays. */
	uintptr_t lock = (uintptr_t)READ_ONCE(*pprev) & HLIST_BL_LOCK_MASK;
	WRITE_ONCE(*pprev, (struct hlist_bl_node *)((uintptr_t)next | lock));
	if (next)
		next->pprev = pprev;
	WRITE_ONCE(n->pprev, (struct hlist_bl_node **)RCU_LIST_POISON);
}

/*
 * hlist_bl_del_rcu(), and n reads as unhashed (pprev NULL). Readers may still be
 * on n: add it again, anywhere, only after a grace period, or a reader on it
 * could follow it into another bucket.
 */
static inline void hlist_bl_del_init_rcu(struct hlist_bl_node *n)
{
	if (!hlist_bl_unhashed(n)) {
		hlist_bl_del_rcu(n);
		WRITE_ONCE(n->pprev, NULL);
	}
}

/* Readers, inside rcu_read_lock(); no lock. pos: the entry type, member: its node. */
#define hlist_bl_for_each_entry_rcu(pos, h, member)                                                \
	for (pos = hlist_entry_safe(hlist_bl_first_rcu(h), __typeof__(*(pos)), member); pos;       \
	     pos = hlist_entry_safe(rcu_dereference((pos)->member.next), __typeof__(*(pos)),       \
				    member))

/* Updaters, under the bucket lock; the body must not delete pos. */
#define hlist_bl_for_each_entry(pos, h, member)                                                    \
	for (pos = hlist_entry_safe(hlist_bl_first(h), __typeof__(*(pos)), member); pos;           \
	     pos = hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

#endif

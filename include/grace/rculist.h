/*
 * RCU-safe list operations. Updaters add, delete and replace under their own lock
 * (these helpers do not lock); readers walk with the _rcu iterators inside
 * rcu_read_lock() and may see an element being added or removed, never a torn
 * one: a new element is initialised before the release that publishes it, and a
 * deleted element keeps its forward pointer until a grace period has passed (the
 * updater must not reuse it before that; call_rcu/synchronize_rcu).
 *
 * hlist: a hash-bucket list with a one-pointer head, defined here because only
 * RCU users need it so far.
 */
#ifndef GRACE_RCULIST_H
#define GRACE_RCULIST_H

#include <grace/list.h>
#include <grace/rcupdate.h>

/* Poison for a deleted entry's back pointer: readers never follow prev. */
#define RCU_LIST_POISON ((void *)0xdead000000000122ULL)

static inline void list_add_rcu(struct list_head *n, struct list_head *h)
{
	struct list_head *next = h->next;
	n->next = next;
	n->prev = h;
	rcu_assign_pointer(h->next, n); /* n's fields first: pairs with rcu_dereference */
	next->prev = n;
}

static inline void list_add_tail_rcu(struct list_head *n, struct list_head *h)
{
	struct list_head *prev = h->prev;
	n->next = h;
	n->prev = prev;
	rcu_assign_pointer(prev->next, n);
	h->prev = n;
}

/* Unlink n; readers already on n can still step forward from it. */
static inline void list_del_rcu(struct list_head *n)
{
	n->next->prev = n->prev;
	WRITE_ONCE(n->prev->next, n->next);
	n->prev = RCU_LIST_POISON;
}

/* Put n in old's place: a reader sees one or the other. */
static inline void list_replace_rcu(struct list_head *old, struct list_head *n)
{
	n->next = old->next;
	n->prev = old->prev;
	rcu_assign_pointer(n->prev->next, n);
	n->next->prev = n;
	old->prev = RCU_LIST_POISON;
}

#define list_entry_rcu(ptr, type, member) container_of(rcu_dereference(ptr), type, member)

#define list_for_each_entry_rcu(pos, h, member)                                                    \
	for (pos = list_entry_rcu((h)->next, __typeof__(*pos), member); &pos->member != (h);       \
	     pos = list_entry_rcu(pos->member.next, __typeof__(*pos), member))

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

#define HLIST_HEAD_INIT                                                                            \
	{                                                                                          \
		NULL                                                                               \
	}

static inline void hlist_init_node(struct hlist_node *n)
{
	n->next = NULL;
	n->pprev = NULL;
}

static inline bool hlist_unhashed(const struct hlist_node *n)
{
	return !n->pprev;
}

static inline void hlist_add_head_rcu(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;
	n->next = first;
	n->pprev = &h->first;
	rcu_assign_pointer(h->first, n);
	if (first)
		first->pprev = &n->next;
}

static inline void hlist_del_rcu(struct hlist_node *n)
{
	struct hlist_node *next = n->next;
	WRITE_ONCE(*n->pprev, next);
	if (next)
		next->pprev = n->pprev;
	n->pprev = RCU_LIST_POISON;
}

/* hlist_del_rcu, and n reads as unhashed (only once no reader can be on it). */
static inline void hlist_del_init_rcu(struct hlist_node *n)
{
	if (!hlist_unhashed(n)) {
		hlist_del_rcu(n);
		n->pprev = NULL;
	}
}

static inline void hlist_replace_rcu(struct hlist_node *old, struct hlist_node *n)
{
	struct hlist_node *next = old->next;
	n->next = next;
	n->pprev = old->pprev;
	rcu_assign_pointer(*n->pprev, n);
	if (next)
		next->pprev = &n->next;
	old->pprev = RCU_LIST_POISON;
}

#define hlist_entry_safe(ptr, type, member)                                                        \
	({                                                                                         \
		__typeof__(ptr) ____p = (ptr);                                                     \
		____p ? container_of(____p, type, member) : NULL;                                  \
	})

#define hlist_for_each_entry_rcu(pos, h, member)                                                   \
	for (pos = hlist_entry_safe(rcu_dereference((h)->first), __typeof__(*(pos)), member); pos; \
	     pos = hlist_entry_safe(rcu_dereference((pos)->member.next), __typeof__(*(pos)),       \
				    member))

#endif

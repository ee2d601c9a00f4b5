/*
 * Circular doubly linked lists with a head node, the kernel's usual shape: a
 * struct list_head embedded in each element, container_of() to get back to it.
 * Plain operations; the caller provides the locking.
 */
#ifndef GRACE_LIST_H
#define GRACE_LIST_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/types.h>

struct list_head {
	struct list_head *next, *prev;
};

/* clang-format off */
#define LIST_HEAD_INIT(name) { &(name), &(name) }
/* clang-format on */
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void list_init(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_insert(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	n->next = next;
	n->prev = prev;
	next->prev = n;
	prev->next = n;
}

/* Add n right after the head (a stack) or right before it (a queue). */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	list_insert(n, h, h->next);
}
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	list_insert(n, h->prev, h);
}

/* Unlink n and leave it pointing at itself, so list_empty(n) says it is on no list. */
static inline void list_del_init(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

/*
 * For an entry whose owner checks list_empty_careful() without the lock and may
 * then free it: the final store, with release, is the last touch of n.
 */
static inline void list_del_init_careful(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n;
	/* Pairs with the smp_load_acquire() in list_empty_careful(). */
	smp_store_release(&n->next, n);
}

static inline bool list_empty_careful(const struct list_head *h)
{
	/* Pairs with the release in list_del_init_careful(): its unlink is done. */
	return smp_load_acquire(&h->next) == h;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)

#define list_for_each_entry(pos, h, member)                                                        \
	for (pos = list_entry((h)->next, __typeof__(*pos), member); &pos->member != (h);           \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

/* Safe against removal of pos. */
#define list_for_each_entry_safe(pos, n, h, member)                                                \
	for (pos = list_entry((h)->next, __typeof__(*pos), member),                                \
	    n = list_entry(pos->member.next, __typeof__(*pos), member);                            \
	     &pos->member != (h); pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif

/*
 * The buddy allocator of one NUMA node (a zone): free blocks of 2^order pages,
 * order 0..MAX_ORDER, each aligned to its size in physical memory, on one list per
 * order. Allocating splits a larger block, handing the unused halves back to the
 * lower lists; freeing merges a block with its buddy (the block whose frame number
 * differs only in bit `order`) for as long as the buddy is free, whole, and on the
 * same node. Alignment to physical addresses, not to the zone's start, is what lets
 * an order-9 block be mapped by one 2 MiB leaf.
 *
 * A free block's head page has PG_BUDDY and its order; its other pages carry
 * nothing, so merging reads only the buddy's head. Holes and memory that is not
 * ours have PG_RESERVED and never PG_BUDDY, so nothing merges into them.
 *
 * One lock per zone (zone->lock, interrupts off) protects the lists and nr_free.
 */
#include <grace/printk.h>
#include "page_alloc_internal.h"

struct zone zones[MAX_NODES];

/* Take the head off the list of order o. Caller checked it is non-empty. */
static struct page *area_pop(struct zone *z, unsigned o)
{
	struct page *page = z->free[o].head;
	page_list_del(&z->free[o].head, page);
	z->free[o].nr--;
	page->flags &= ~PG_BUDDY;
	return page;
}

static void area_push(struct zone *z, struct page *page, unsigned o)
{
	page->flags |= PG_BUDDY;
	page->order = (u8)o;
	page_list_add(&z->free[o].head, page);
	z->free[o].nr++;
}

struct page *buddy_alloc_locked(struct zone *z, unsigned order)
{
	lockdep_assert_held(&z->lock);
	unsigned o = order;
	while (o <= MAX_ORDER && !z->free[o].head)
		o++;
	if (o > MAX_ORDER)
		return NULL;
	struct page *page = area_pop(z, o);
	/* Split: keep the lower half, give the upper half back, until the size is right. */
	while (o > order) {
		o--;
		area_push(z, page + (1UL << o), o);
	}
	z->nr_free -= 1UL << order;
	return page;
}

void buddy_free_locked(struct zone *z, struct page *page, unsigned order)
{
	lockdep_assert_held(&z->lock);
	u64 pfn = page_to_pfn(page);
	z->nr_free += 1UL << order;
	while (order < MAX_ORDER) {
		struct page *buddy = pfn_to_page(pfn ^ (1UL << order));
		if (!buddy || !(buddy->flags & PG_BUDDY) || buddy->order != order ||
		    buddy->node != z->node)
			break;
		page_list_del(&z->free[order].head, buddy);
		z->free[order].nr--;
		buddy->flags &= ~PG_BUDDY;
		pfn &= ~(1UL << order);
		order++;
	}
	area_push(z, pfn_to_page(pfn), order);
}

struct page *buddy_alloc(struct zone *z, unsigned order)
{
	unsigned long flags = spin_lock_irqsave(&z->lock);
	struct page *page = buddy_alloc_locked(z, order);
	spin_unlock_irqrestore(&z->lock, flags);
	return page;
}

void buddy_free(struct zone *z, struct page *page, unsigned order)
{
	unsigned long flags = spin_lock_irqsave(&z->lock);
	buddy_free_locked(z, page, order);
	spin_unlock_irqrestore(&z->lock, flags);
}

unsigned buddy_alloc_bulk(struct zone *z, unsigned order, unsigned n, struct page **list)
{
	unsigned got = 0;
	unsigned long flags = spin_lock_irqsave(&z->lock);
	for (; got < n; got++) {
		struct page *page = buddy_alloc_locked(z, order);
		if (!page)
			break;
		page->next = *list;
		*list = page;
	}
	spin_unlock_irqrestore(&z->lock, flags);
	return got;
}

void buddy_free_bulk(struct zone *z, struct page *list, unsigned order)
{
	if (!list)
		return;
	unsigned long flags = spin_lock_irqsave(&z->lock);
	while (list) {
		struct page *next = list->next;
		buddy_free_locked(z, list, order);
		list = next;
	}
	spin_unlock_irqrestore(&z->lock, flags);
}

/*
 * Boot: give [start, end) of node's memory to its zone, as the largest aligned
 * blocks that fit. The pages were PG_RESERVED until now.
 */
void buddy_add_range(phys_addr_t start, phys_addr_t end, int node)
{
	struct zone *z = &zones[node];
	u64 pfn = start >> PAGE_SHIFT, last = end >> PAGE_SHIFT;

	for (u64 p = pfn; p < last; p++)
		pfn_to_page(p)->flags &= ~PG_RESERVED;
	while (pfn < last) {
		unsigned order = 0;
		while (order < MAX_ORDER && !(pfn & (1UL << order)) && pfn + (2UL << order) <= last)
			order++;
		buddy_free(z, pfn_to_page(pfn), order);
		pfn += 1UL << order;
	}
	z->managed += last - (start >> PAGE_SHIFT);
}

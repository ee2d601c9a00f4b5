/*
 * What the page allocator's files share and nobody else needs but their white-box
 * tests (tests/kernel/buddy_test.c, pcp_test.c): the zone (one per NUMA node), the
 * buddy operations under its lock, the per-CPU lists, and the boot-time feeder.
 *
 * Both locks, the per-CPU lists' (pcp->lock) and the zone's, are taken with
 * interrupts off, so an allocation from an interrupt handler cannot find its own
 * CPU's lock held. Lock order: docs/locking.md.
 */
#ifndef MM_PAGE_ALLOC_INTERNAL_H
#define MM_PAGE_ALLOC_INTERNAL_H

#include <grace/compiler.h>
#include <grace/page_alloc.h>
#include <grace/page.h>
#include <grace/spinlock.h>

/* alloc_page_block() flag beside grace/page_alloc.h's: bypass the per-CPU lists (buddy tests). */
#define ALLOC_NOPCP (1u << 2)

struct free_area {
	struct page *head; /* blocks of this order, linked through page->next/prev */
	u64 nr;		   /* blocks on the list */
};

struct zone {
	spinlock_t lock; /* protects free[] and nr_free */
	struct free_area free[MAX_ORDER + 1];
	u64 nr_free; /* pages on free[]: exact under lock */
	u64 managed; /* pages given to this zone at boot; constant */
	int node;
} __cacheline_aligned;

extern struct zone zones[MAX_NODES];

/* A doubly linked list of pages through next/prev, head pointer only (NULL = empty). */
static inline void page_list_add(struct page **head, struct page *page)
{
	page->prev = NULL;
	page->next = *head;
	if (*head)
		(*head)->prev = page;
	*head = page;
}

static inline void page_list_del(struct page **head, struct page *page)
{
	if (page->prev)
		page->prev->next = page->next;
	else
		*head = page->next;
	if (page->next)
		page->next->prev = page->prev;
	page->next = page->prev = NULL;
}

/* mm/buddy.c; zone->lock held by the caller for the _locked ones. */
struct page *buddy_alloc_locked(struct zone *z, unsigned order);
void buddy_free_locked(struct zone *z, struct page *page, unsigned order);
struct page *buddy_alloc(struct zone *z, unsigned order);
void buddy_free(struct zone *z, struct page *page, unsigned order);
/* Up to n blocks of order onto *list (through next); returns how many. */
unsigned buddy_alloc_bulk(struct zone *z, unsigned order, unsigned n, struct page **list);
/* Every block on the NULL-terminated list (through next) back to the buddy. */
void buddy_free_bulk(struct zone *z, struct page *list, unsigned order);
void buddy_add_range(phys_addr_t start, phys_addr_t end, int node);

/*
 * Order-0 refill/flush batch and high mark. Linux sizes its batch to about 1/4 of a
 * per-CPU cache of ~0.5 MiB; Grace's machines are small (96 MiB with 64 CPUs is in
 * the test matrix), so 64 pages (256 KiB) per CPU per node at most, 16 at a time.
 */
#define PCP_BATCH 16
#define PCP_HIGH 64
/* 2 MiB blocks kept per CPU per node: one, to serve a free-then-alloc pair locally. */
#define PCP_HUGE_HIGH 1

/* mm/pcp.c */
/* Initialise every list set's lock; before the first allocation (mm_early_init). */
void pcp_init(void);
struct page *pcp_alloc(int node, unsigned order);
bool pcp_free(struct page *page, unsigned order); /* false: not a per-CPU order */
u64 pcp_pages(int node);			  /* racy sum, for reporting */
/* Drain every CPU's lists for nodes[0..n); returns the pages given back. */
u64 pcp_drain_nodes(const int *nodes, unsigned n);

/* mm/early.c */
void early_init(void);
void early_ram_span(u64 *lo, u64 *hi);
phys_addr_t early_alloc(u64 size);
void early_release(void (*give)(phys_addr_t start, phys_addr_t end, int node));

/* mm/slab.c */
void slab_init(void);

#endif

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
	u64 managed; /* pages given to this zone: at boot, and by free_boot_range() after */
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
 * Per-CPU list sizes. Batch: blocks a refill takes from the zone in one lock hold
 * (order 0 also: pages a spill gives back); high: the most a list keeps. Both are
 * computed per node at boot from its managed memory and the CPU count
 * (pcp_size_lists, mm/pcp.c says how); these are their bounds. Linux's largest
 * default order-0 batch is 63; 8 huge blocks per refill bring the zone's share of a
 * huge fault under one cache-line transfer.
 */
#define PCP_BATCH_MAX 63
#define PCP_HIGH_MAX 4096 /* 16 MiB per CPU and node */
#define PCP_HUGE_BATCH_MAX 8
#define PCP_HUGE_HIGH_MAX (2 * PCP_HUGE_BATCH_MAX)
/* 2 MiB blocks kept per CPU per node by the single design: one, for a free-then-alloc pair. */
#define PCP_HUGE_HIGH 1

struct pcp_limits {
	unsigned batch; /* 0: never refilled (the huge list's single design) */
	unsigned high;
};

/* Per-CPU counts summed over every CPU and node (racy, for reporting and tests). */
struct pcp_stats {
	u64 huge_hits;	  /* HUGE_ORDER allocations served from a list, no refill */
	u64 huge_refills; /* zone-lock holds refilling a huge list (each serves one too) */
	u64 huge_spills;  /* zone-lock holds giving a huge list back down past its high mark */
	u64 small_refills, small_spills; /* the same for order 0 */
	u64 small_grows; /* pcp_high=auto: frees that raised a mark instead of spilling */
};

/* mm/pcp.c */
/* Initialise every list set's lock; before the first allocation (mm_early_init). */
void pcp_init(void);
/* Size every node's lists and read pcp_huge=; after the buddy has its memory. */
void pcp_size_lists(void);
/* What node's lists of order (0 or HUGE_ORDER) use now; huge follows the mode. */
struct pcp_limits pcp_limits(int node, unsigned order);
struct page *pcp_alloc(int node, unsigned order);
bool pcp_free(struct page *page, unsigned order); /* false: not a per-CPU order */
u64 pcp_pages(int node);			  /* racy sum, for reporting */
u64 pcp_huge_blocks(int node);			  /* racy sum of the huge lists' blocks */
/* Drain every CPU's lists for nodes[0..n); returns the pages given back. */
u64 pcp_drain_nodes(const int *nodes, unsigned n);
/*
 * The huge lists' mode: batched (refills and spills of a batch; the default,
 * pcp_huge=batch) or single (no refill, PCP_HUGE_HIGH kept; pcp_huge=single).
 * Turning batching off drains every CPU's huge lists, so the single design's
 * behaviour is exact from the return on. Thread context.
 */
void pcp_set_huge_batching(bool on);
bool pcp_huge_batching(void);
/*
 * The order-0 lists' high mark: tuned by each list's refills (auto, the default,
 * pcp_high=auto; mm/pcp.c says how) or the boot's (pcp_high=fixed). Either switch
 * drains every CPU's lists, so each starts from the boot's mark. Thread context.
 */
void pcp_set_high_auto(bool on);
bool pcp_high_auto(void);
unsigned pcp_small_high_max(int node);		  /* the auto mark's ceiling */
unsigned pcp_small_count(unsigned cpu, int node); /* pages on cpu's order-0 list, racy */
void pcp_stats_sum(struct pcp_stats *out);
void pcp_stats_cpu(unsigned cpu, struct pcp_stats *out); /* one CPU's, over every node */

/* mm/early.c */
void early_init(void);
void early_ram_span(u64 *lo, u64 *hi);
phys_addr_t early_alloc(u64 size);
void early_release(void (*give)(phys_addr_t start, phys_addr_t end, int node));

/* mm/slab.c */
void slab_init(void);

/*
 * mm/page_poison.c, DEBUG builds only: fill a block being freed with the poison and
 * record caller in each of its pages; check a block being handed out for writes
 * since and record caller as its allocator. Without GRACE_DEBUG they are nothing.
 */
#ifdef GRACE_DEBUG
void page_poison_free(struct page *page, unsigned order, uintptr_t caller);
void page_poison_check(struct page *page, unsigned order, uintptr_t caller);
#else
static inline void page_poison_free(struct page *page, unsigned order, uintptr_t caller) {}
static inline void page_poison_check(struct page *page, unsigned order, uintptr_t caller) {}
#endif

#endif

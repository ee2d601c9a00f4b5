/*
 * Physical page allocation.
 *
 * The buddy allocator (mm/buddy.c) keeps one zone per NUMA node with free lists
 * for orders 0..MAX_ORDER; per-CPU lists (mm/pcp.c) in front of it serve order 0
 * and HUGE_ORDER without touching a shared lock. mm_early_init() builds it all at
 * the start of kernel_main; the boot-time feeder (mm/early.c) only places the page
 * descriptors and then hands every other free byte to the buddy, so per-CPU areas,
 * stacks and everything after come from the buddy.
 *
 * Addresses are direct-map virtual addresses. Every allocation is aligned to its
 * size. Out of memory is NULL, never a panic.
 */
#ifndef GRACE_PAGE_ALLOC_H
#define GRACE_PAGE_ALLOC_H

#include <grace/numa.h>
#include <grace/types.h>
#include <asm/memory.h>

#define MAX_ORDER 10 /* largest block: 2^10 pages, 4 MiB */
#define HUGE_ORDER 9 /* 2 MiB: a PMD leaf on both arches */

/* alloc_pages_flags() flags */
#define ALLOC_NOZERO (1u << 0) /* don't zero the block (the caller overwrites it all) */
#define ALLOC_STRICT (1u << 1) /* only from the requested node, no fallback */

/*
 * 2^order contiguous pages from node (NUMA_NO_NODE: the calling CPU's node), or,
 * unless ALLOC_STRICT, from the nearest node that has them. Zeroed unless
 * ALLOC_NOZERO. NULL when out of memory or order > MAX_ORDER.
 */
void *alloc_pages_flags(int node, unsigned order, unsigned flags);

/* The smallest order whose block holds bytes (may exceed MAX_ORDER: callers check). */
static inline unsigned pages_order(size_t bytes)
{
	unsigned order = 0;
	while (((size_t)PAGE_SIZE << order) < bytes && order < 8 * sizeof(size_t) - PAGE_SHIFT - 1)
		order++;
	return order;
}

/* Zeroed; this CPU's node first, then the nearest. */
void *alloc_pages(unsigned order);
/* Zeroed; node first, then the nearest (node may be NUMA_NO_NODE). */
void *alloc_pages_node(int node, unsigned order);
/*
 * Zeroed, from node only: NULL when that node has no free block of this order even
 * though others might. For callers that would rather fall back to a smaller order on
 * their own node than take a remote block (the huge-page fault path).
 */
void *alloc_pages_strict_node(int node, unsigned order);
/* Give back a block from any of the above with the order it was allocated with. NULL is a no-op. */
void free_pages(void *addr, unsigned order);

/* Free bytes in all nodes, per-CPU lists included. Exact only when nothing allocates meanwhile. */
u64 mm_free_bytes(void);
/* Free pages of node, read under its zone lock (per-CPU lists included). */
u64 node_free_pages(int node);
/* Pages in node's buddy lists only (not on per-CPU lists), read under its zone lock. */
u64 buddy_free_pages(int node);
/* Free blocks of at least order in node's buddy lists, counted in order-sized units. */
u64 node_free_blocks(int node, unsigned order);
/* Free blocks of exactly each order in node's buddy lists, read in one hold of its zone lock. */
void node_free_area_counts(int node, u64 counts[MAX_ORDER + 1]);
/* Pages of RAM node manages (free or not). */
u64 node_managed_pages(int node);
/* Refused free_pages() calls (double free, wrong order, not a block): reported, leaked. */
u64 mm_bad_free_count(void);

/*
 * Give the pages of a boot-time reserved range that nothing else shares (the
 * initramfs, once unpacked) to the buddy, as Linux's free_initrd_mem(): they
 * count as managed and free from then on. Returns how many pages it gave.
 */
u64 free_boot_range(phys_addr_t start, phys_addr_t end);

/* Return the calling CPU's per-CPU pages to the buddy. */
void pcp_drain_local(void);
/* Return every CPU's per-CPU pages to the buddy (takes each CPU's list lock in turn). */
void pcp_drain_all(void);

/*
 * Build the page allocator from boot_info: NUMA topology, struct pages (carved by
 * the boot-time feeder in mm/early.c), the buddy zones, then the slab caches.
 * First thing after the console; the per-CPU areas and stacks come from the buddy.
 */
void mm_early_init(void);

#endif

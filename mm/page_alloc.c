/*
 * The page allocator's front: alloc_pages, alloc_pages_node, free_pages, the page descriptor array,
 * and bringing it all up at boot (mm_early_init).
 *
 * An allocation tries the nodes in the order numa_fallback_order() gives (the
 * requested node, then the nearest), on each first the CPU's per-CPU list (order 0
 * and HUGE_ORDER) and then the zone's buddy lists. When every node fails it drains
 * every CPU's per-CPU lists of those nodes (pages may sit there, or sit there as
 * halves of the block we need) and tries once more before returning NULL: out of
 * memory is NULL, never a panic, and never while a free page of those nodes is
 * parked somewhere. Before it gives up it asks the registered shrinkers
 * (grace/shrinker.h) to free cached objects, once, and tries all of that again.
 *
 * Locks: this file takes none itself but the zone's to read its counts (lock
 * order: docs/locking.md).
 */
#include <grace/boot_info.h>
#include <grace/ksyms.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <grace/shrinker.h>
#include <grace/string.h>
#include <grace/vma.h>
#include "page_alloc_internal.h"

/*
 * Objects each shrinker is asked to free when an allocation runs out: Linux's
 * SHRINK_BATCH (mm/vmscan.c), enough to empty a few slabs of small objects per
 * call without emptying a cache for one page.
 */
#define ALLOC_SHRINK_OBJECTS 128

struct page *mem_map;
u64 mem_map_base_pfn, mem_map_pages;
static atomic64_t bad_frees;

static struct page *alloc_from_node(int node, unsigned order, unsigned flags)
{
	struct page *page = NULL;
	if (!(flags & ALLOC_NOPCP) && (order == 0 || order == HUGE_ORDER))
		page = pcp_alloc(node, order);
	if (!page)
		page = buddy_alloc(&zones[node], order);
	return page;
}

/*
 * Every node in nodes[0..n) in turn; then, if all failed, drain every CPU's per-CPU
 * lists of those nodes (pages may sit there, or sit there as halves of the block
 * we need) and try once more. A refill parks up to a batch of 2 MiB blocks on one
 * CPU's list, so this is also what lets a strict huge allocation on another CPU
 * have them (ALLOC_STRICT narrows nodes to one, not this retry).
 */
static struct page *alloc_from_nodes(const int *nodes, unsigned n, unsigned order, unsigned flags)
{
	struct page *page = NULL;
	for (int attempt = 0; attempt < 2 && !page; attempt++) {
		for (unsigned i = 0; i < n && !page; i++)
			page = alloc_from_node(nodes[i], order, flags);
		/* Nothing parked on the per-CPU lists of those nodes either: out of memory. */
		if (!page && pcp_drain_nodes(nodes, n) == 0)
			break;
	}
	return page;
}

/* A block leaving the allocator: the head says it is allocated, the rest is the owner's. */
static void page_prep(struct page *page, unsigned order)
{
	page->flags = PG_HEAD;
	page->order = (u8)order;
	page->next = page->prev = NULL;
	page->inuse = 0;
	atomic_set(&page->refcount, 1);
	spin_lock_init(&page->ptl);
	page->private = 0;
	page->freelist = NULL;
}

/*
 * caller: whom the block is for, recorded and named in reports by DEBUG builds.
 * Always inlined: into alloc_page_block(), and in DEBUG builds into each
 * alloc_pages*() entry too, so that each names its own caller; without
 * GRACE_DEBUG the unused caller costs nothing and alloc_page_block() is this
 * body alone.
 */
static __always_inline struct page *alloc_block(int node, unsigned order, unsigned flags,
						uintptr_t caller)
{
	if (order > MAX_ORDER)
		return NULL;
	if (node == NUMA_NO_NODE)
		node = numa_this_node();
	if (node < 0 || (unsigned)node >= nr_nodes)
		return NULL;

	int nodes[MAX_NODES];
	unsigned n = numa_fallback_order(node, nodes);
	if (flags & ALLOC_STRICT)
		n = 1;
	struct page *page = alloc_from_nodes(nodes, n, order, flags);
	/*
	 * Out of free pages: ask the caches to give some back (grace/shrinker.h) and
	 * try once more. Not for ALLOC_STRICT: its callers have a fallback of their own
	 * (the huge-page fault path takes 4 KiB pages) and would rather fail fast than
	 * empty caches.
	 */
	if (!page && !(flags & ALLOC_STRICT) && shrink_caches(ALLOC_SHRINK_OBJECTS))
		page = alloc_from_nodes(nodes, n, order, flags);
	if (!page)
		return NULL;
	page_prep(page, order);
	/* Before the zeroing: a write to the free block must still be there to be found. */
	page_poison_check(page, order, caller);
	if (!(flags & ALLOC_NOZERO))
		memset(page_address(page), 0, PAGE_SIZE << order);
	return page;
}

struct page *alloc_page_block(int node, unsigned order, unsigned flags)
{
	return alloc_block(node, order, flags, (uintptr_t)__builtin_return_address(0));
}

static const char *bad_free_reason(const void *addr, unsigned order, const struct page *page)
{
	if (!IS_ALIGNED((uintptr_t)addr, PAGE_SIZE))
		return "not page-aligned";
	if (!page)
		return "not RAM";
	if (order > MAX_ORDER)
		return "order out of range";
	if (page->flags & (PG_BUDDY | PG_PCP))
		return "already free (double free?)";
	if (!(page->flags & PG_HEAD))
		return "not the start of an allocated block";
	return "order differs from the allocation";
}

static void report_bad_free(const void *addr, unsigned order, const struct page *page,
			    uintptr_t caller)
{
	uintptr_t off = 0;
	const char *fn = ksym_lookup(caller, &off, NULL);
	atomic64_inc(&bad_frees);
	pr_err("mm: bad free_pages(%p, order %u) from %s+0x%lx: %s (flags %x, order %u)\n", addr,
	       order, fn ? fn : "?", (unsigned long)off, bad_free_reason(addr, order, page),
	       page ? page->flags : 0, page ? page->order : 0);
}

static void free_block_checked(struct page *page, unsigned order, const void *addr,
			       uintptr_t caller)
{
	if (!page || order > MAX_ORDER || !(page->flags & PG_HEAD) || page->order != order ||
	    (page->flags & (PG_BUDDY | PG_PCP | PG_RESERVED))) {
		report_bad_free(addr, order, page, caller);
		return; /* leak it rather than corrupt the free lists */
	}
	page->flags = 0;
	page_poison_free(page, order, caller);
	if (!pcp_free(page, order))
		buddy_free(&zones[page->node], page, order);
}

void free_page_block(struct page *page, unsigned order)
{
	if (page)
		free_block_checked(page, order, page_address(page),
				   (uintptr_t)__builtin_return_address(0));
}

void split_page_block(struct page *page, unsigned order)
{
	if (!page || !(page->flags & PG_HEAD) || page->order != order ||
	    (page->flags & (PG_BUDDY | PG_PCP | PG_RESERVED)))
		panic("mm: split_page_block(%p, order %u) of no allocated block of that order",
		      page ? page_address(page) : NULL, order);
	/*
	 * The head keeps its flags and owner fields; each other page becomes a block of
	 * its own, as page_prep() leaves one, so that free_block_checked() takes it.
	 */
	page->order = 0;
	for (u64 i = 1; i < 1ULL << order; i++)
		page_prep(page + i, 0);
}

/*
 * Each entry point passes its own caller, so that a DEBUG build records (and a
 * poison report names) who asked rather than a wrapper. Without GRACE_DEBUG the
 * caller is dead once this is inlined, and the entry points stay what they were:
 * calls of alloc_page_block().
 */
static inline void *alloc_block_address(int node, unsigned order, unsigned flags, uintptr_t caller)
{
#ifdef GRACE_DEBUG
	struct page *page = alloc_block(node, order, flags, caller);
#else
	struct page *page = alloc_page_block(node, order, flags);
#endif
	return page ? page_address(page) : NULL;
}

void *alloc_pages_flags(int node, unsigned order, unsigned flags)
{
	return alloc_block_address(node, order, flags, (uintptr_t)__builtin_return_address(0));
}

void *alloc_pages(unsigned order)
{
	return alloc_block_address(NUMA_NO_NODE, order, 0, (uintptr_t)__builtin_return_address(0));
}

void *alloc_pages_node(int node, unsigned order)
{
	return alloc_block_address(node, order, 0, (uintptr_t)__builtin_return_address(0));
}

void *alloc_pages_strict_node(int node, unsigned order)
{
	return alloc_block_address(node, order, ALLOC_STRICT,
				   (uintptr_t)__builtin_return_address(0));
}

void free_pages(void *addr, unsigned order)
{
	if (!addr)
		return;
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	struct page *page = IS_ALIGNED((uintptr_t)addr, PAGE_SIZE) ? virt_to_page(addr) : NULL;
	free_block_checked(page, order, addr, caller);
}

u64 mm_bad_free_count(void)
{
	return (u64)atomic64_read(&bad_frees);
}

u64 buddy_free_pages(int node)
{
	if (node < 0 || (unsigned)node >= nr_nodes)
		return 0;
	struct zone *z = &zones[node];
	unsigned long flags = spin_lock_irqsave(&z->lock);
	u64 n = z->nr_free;
	spin_unlock_irqrestore(&z->lock, flags);
	return n;
}

u64 node_free_blocks(int node, unsigned order)
{
	if (node < 0 || (unsigned)node >= nr_nodes || order > MAX_ORDER)
		return 0;
	struct zone *z = &zones[node];
	u64 n = 0;
	unsigned long flags = spin_lock_irqsave(&z->lock);
	for (unsigned o = order; o <= MAX_ORDER; o++)
		n += z->free[o].nr << (o - order);
	spin_unlock_irqrestore(&z->lock, flags);
	return n;
}

void node_free_area_counts(int node, u64 counts[MAX_ORDER + 1])
{
	for (unsigned o = 0; o <= MAX_ORDER; o++)
		counts[o] = 0;
	if (node < 0 || (unsigned)node >= nr_nodes)
		return;
	struct zone *z = &zones[node];
	unsigned long flags = spin_lock_irqsave(&z->lock);
	for (unsigned o = 0; o <= MAX_ORDER; o++)
		counts[o] = z->free[o].nr;
	spin_unlock_irqrestore(&z->lock, flags);
}

u64 node_free_pages(int node)
{
	return buddy_free_pages(node) + ((unsigned)node < nr_nodes ? pcp_pages(node) : 0);
}

u64 node_managed_pages(int node)
{
	return (unsigned)node < nr_nodes ? zones[node].managed : 0;
}

u64 mm_free_bytes(void)
{
	u64 pages = 0;
	for (unsigned n = 0; n < nr_nodes; n++)
		pages += node_free_pages((int)n);
	return pages << PAGE_SHIFT;
}

/*
 * A page of [start, end) may be freed when it is RAM, no other reserved range
 * nor the kernel image touches it, and it is still PG_RESERVED (not the
 * buddy's already); the edges of an unaligned range share their pages with
 * whatever lies beside, so those are kept unless nothing does.
 */
static bool boot_page_freeable(u64 pfn, phys_addr_t start, phys_addr_t end)
{
	phys_addr_t pa = pfn << PAGE_SHIFT, pe = pa + PAGE_SIZE;
	if (pfn < mem_map_base_pfn || pfn - mem_map_base_pfn >= mem_map_pages ||
	    !(pfn_to_page(pfn)->flags & PG_RESERVED))
		return false;
	if (pa < boot_info.kernel_end && boot_info.kernel_start < pe)
		return false;
	for (unsigned i = 0; i < boot_info.nr_reserved; i++) {
		const struct mem_range *r = &boot_info.reserved[i];
		bool own = r->base >= start && r->base + r->size <= end;
		if (!own && r->base < pe && pa < r->base + r->size)
			return false;
	}
	return true;
}

u64 free_boot_range(phys_addr_t start, phys_addr_t end)
{
	u64 freed = 0;
	for (unsigned i = 0; i < boot_info.nr_mem; i++) {
		const struct mem_range *m = &boot_info.mem[i];
		int node = m->node >= 0 && (unsigned)m->node < nr_nodes ? m->node : 0;
		u64 lo =
		    MAX(ALIGN_DOWN(start, PAGE_SIZE), ALIGN_UP(m->base, PAGE_SIZE)) >> PAGE_SHIFT;
		u64 hi = MIN(ALIGN_UP(end, PAGE_SIZE), ALIGN_DOWN(m->base + m->size, PAGE_SIZE)) >>
			 PAGE_SHIFT;
		for (u64 pfn = lo; pfn < hi;) {
			if (!boot_page_freeable(pfn, start, end)) {
				pfn++;
				continue;
			}
			u64 run = pfn;
			while (run < hi && boot_page_freeable(run, start, end))
				run++;
			buddy_add_range(pfn << PAGE_SHIFT, run << PAGE_SHIFT, node);
			freed += run - pfn;
			pfn = run;
		}
	}
	return freed;
}

/* One descriptor per page frame of RAM's span; all reserved until the buddy gets them. */
static void mem_map_init(void)
{
	u64 lo, hi;
	early_ram_span(&lo, &hi);
	u64 bytes = (hi - lo) * sizeof(struct page);
	phys_addr_t pa = early_alloc(bytes);
	if (!pa)
		panic("mm: no room for %llu KiB of page descriptors", bytes >> 10);
	mem_map = phys_to_virt(pa);
	mem_map_base_pfn = lo;
	mem_map_pages = hi - lo;
	memset(mem_map, 0, bytes); /* an all-zero ptl is an unlocked spinlock */
	for (u64 i = 0; i < mem_map_pages; i++)
		mem_map[i].flags = PG_RESERVED;
	for (unsigned i = 0; i < boot_info.nr_mem; i++) {
		const struct mem_range *m = &boot_info.mem[i];
		int node = m->node >= 0 && (unsigned)m->node < nr_nodes ? m->node : 0;
		for (u64 pfn = m->base >> PAGE_SHIFT; pfn < (m->base + m->size) >> PAGE_SHIFT;
		     pfn++)
			mem_map[pfn - lo].node = (u8)node;
	}
}

void mm_early_init(void)
{
	numa_init();
	early_init();
	mem_map_init();
	for (unsigned n = 0; n < MAX_NODES; n++) {
		spin_lock_init(&zones[n].lock);
		zones[n].node = (int)n;
	}
	pcp_init();
	early_release(buddy_add_range);
	pcp_size_lists();

	u64 managed = 0;
	for (unsigned n = 0; n < nr_nodes; n++)
		managed += zones[n].managed;
	printk("mm: buddy allocator: %llu MiB in %u node%s, orders 0-%u; %llu KiB of page "
	       "descriptors\n",
	       (unsigned long long)(managed >> (20 - PAGE_SHIFT)), nr_nodes,
	       nr_nodes > 1 ? "s" : "", MAX_ORDER,
	       (unsigned long long)((mem_map_pages * sizeof(struct page)) >> 10));
	numa_print();
	slab_init();
	vma_init();
}

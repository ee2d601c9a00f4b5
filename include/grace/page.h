/*
 * Page descriptors: one struct page for every 4 KiB physical page of RAM, in one
 * flat array (mem_map) indexed by pfn - mem_map_base_pfn. Flat because the RAM of
 * both arches' QEMU machines is one or two dense ranges, so the holes cost little
 * and pfn_to_page() stays one subtraction and one add; holes and non-RAM pages
 * inside the span carry PG_RESERVED and are never handed out.
 *
 * Who owns which field:
 *   flags, order, node, list   - the page allocator (mm/buddy.c, mm/pcp.c) while the
 *                                page is free; node never changes after boot.
 *   ptl                        - page-table pages: the split page-table lock of the
 *                                table that lives in this page (mm/pagewalk.c).
 *                                The allocator initialises it (unlocked) on every
 *                                allocation; nobody else touches it.
 *   refcount, private          - the current owner of an allocated page (page tables
 *                                may count entries in refcount; tests tag pages in
 *                                private). The allocator sets refcount to 1 and
 *                                private to 0 on allocation.
 *   inuse, freelist, private   - slab pages (mm/slab.c): objects in use, the first
 *                                free object, and the owning struct kmem_cache *
 *                                (in every page of the slab, so kfree finds it).
 *   alloc_site, free_site      - DEBUG builds: in every page, who last allocated it and,
 *                                while it is free and poisoned, who freed it
 *                                (mm/page_poison.c). The allocator's alone.
 * Only the head page of an allocated block of order > 0 has meaningful order/flags.
 */
#ifndef GRACE_PAGE_H
#define GRACE_PAGE_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/spinlock.h>
#include <grace/types.h>
#include <asm/memory.h>

/* page->flags bits */
#define PG_RESERVED (1u << 0) /* not RAM, or RAM that is never ours (firmware, image) */
#define PG_BUDDY (1u << 1)    /* free, the head of a block on a buddy free list */
#define PG_PCP (1u << 2)      /* free, on a per-CPU list */
#define PG_SLAB (1u << 3)     /* head page of a slab; private points at its descriptor */
#define PG_HEAD (1u << 4)     /* allocated, the head page of a block of `order` */
#define PG_PGTABLE (1u << 5)  /* holds a page table (set by the page-table code) */

struct page {
	struct page *next, *prev; /* list link: free lists while free, slab lists in a slab */
	u32 flags;
	u8 order;	   /* block order: while free (PG_BUDDY/PG_PCP) or allocated (PG_HEAD) */
	u8 node;	   /* NUMA node of this memory */
	u16 inuse;	   /* slab: objects handed out (under the cache's node lock) */
	atomic_t refcount; /* for the owner's use; 1 on allocation */
	spinlock_t ptl;	   /* page-table pages (PTLOCK_SPLIT): protects this table's entries */
	uintptr_t private; /* for the owner's use; slab: its struct kmem_cache * */
	void *freelist;	   /* slab: first free object (under the cache's node lock) */
#ifdef GRACE_DEBUG
	/*
	 * Return addresses as offsets from _text, 32 bits each so that both fit the
	 * line's last 8 bytes. free_site is nonzero exactly while the page is free and
	 * holds the poison; set by the free, cleared by the allocation that checks it.
	 */
	u32 alloc_site, free_site;
#endif
} __cacheline_aligned; /* one line each: the split ptl locks of two page tables never share one */

#ifndef GRACE_LOCK_CLASSES
BUILD_BUG_ON(sizeof(struct page) != CACHE_LINE_SIZE);
#else
/* A LOCKDEP or LOCKSTAT spinlock_t carries its class: two lines each, still never shared. */
BUILD_BUG_ON(sizeof(struct page) != 2 * CACHE_LINE_SIZE);
#endif

extern struct page *mem_map; /* [0, mem_map_pages): pfn mem_map_base_pfn + i */
extern u64 mem_map_base_pfn, mem_map_pages;

static inline u64 page_to_pfn(const struct page *page)
{
	return mem_map_base_pfn + (u64)(page - mem_map);
}

/* NULL when pfn is outside the span mem_map describes. */
static inline struct page *pfn_to_page(u64 pfn)
{
	if (pfn - mem_map_base_pfn >= mem_map_pages)
		return NULL;
	return &mem_map[pfn - mem_map_base_pfn];
}

/* Direct-map or kernel-image address to its page descriptor (NULL outside RAM's span). */
static inline struct page *virt_to_page(const void *va)
{
	return pfn_to_page(virt_to_phys(va) >> PAGE_SHIFT);
}

static inline phys_addr_t page_to_phys(const struct page *page)
{
	return page_to_pfn(page) << PAGE_SHIFT;
}

static inline struct page *phys_to_page(phys_addr_t pa)
{
	return pfn_to_page(pa >> PAGE_SHIFT);
}

/* The direct-map address of the page. */
static inline void *page_address(struct page *page)
{
	return phys_to_virt(page_to_phys(page));
}

static inline int page_node(const struct page *page)
{
	return page->node;
}

/* Page-level allocation: the block's head page, or NULL (see alloc_pages_flags in page_alloc.h). */
struct page *alloc_page_block(int node, unsigned order, unsigned flags);
void free_page_block(struct page *page, unsigned order);
/*
 * Turn an allocated block of order (page its head) into 2^order allocated order-0
 * blocks, each freed on its own with free_pages(addr, 0). For a 2 MiB page that is
 * split into 4 KiB mappings (mm/pagewalk.c). Panics if page heads no such block.
 */
void split_page_block(struct page *page, unsigned order);

#endif

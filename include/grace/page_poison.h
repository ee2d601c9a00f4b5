/*
 * Page poisoning in DEBUG=1 builds (GRACE_DEBUG, mm/page_poison.c): every block
 * free_pages() or free_page_block() takes back is filled with PAGE_POISON, and
 * every block the allocator hands out is checked for it first, so a write to a
 * free page (order 0, any higher order, a 2 MiB page, a page table, a VMA table:
 * they all come back through free_pages) is reported when the page is next handed
 * out, with the page, the first word that changed and the page's last allocator
 * and freer. A read of a free page reads the poison, and a pointer loaded from it
 * is non-canonical on x86_64 and outside Sv39 on riscv64, so following it faults.
 *
 * As in slab debugging, a report is printed, counted and kept for tests, and the
 * block is handed out all the same (zeroed if the caller asked for that). Without
 * GRACE_DEBUG nothing is filled or checked.
 */
#ifndef GRACE_PAGE_POISON_H
#define GRACE_PAGE_POISON_H

#include <grace/types.h>

/*
 * Linux's PAGE_POISON byte (include/linux/poison.h), in every byte of a word: not
 * slab's 0x6b, so a report tells the two apart. Bits 63..47 (x86_64) and 63..38
 * (Sv39) alternate, so a pointer read from a free page never maps anything.
 */
#define PAGE_POISON 0xaaaaaaaaaaaaaaaaULL

struct page_poison_report {
	void *page;		/* direct-map address of the page with the changed word */
	u64 pfn;		/* its frame number */
	unsigned order;		/* of the block being handed out, which holds the page */
	size_t offset;		/* of the first changed word in the page */
	u64 value;		/* what that word holds */
	uintptr_t caller;	/* who is being handed the block */
	uintptr_t alloc_caller; /* who allocated the page before it was freed */
	uintptr_t free_caller;	/* who freed it */
};

/* True when built with DEBUG=1. */
bool page_poison_enabled(void);
/* Free pages found written since boot (0 in a non-debug build). */
u64 page_poison_count(void);
/* The latest report; false if there was none. */
bool page_poison_last(struct page_poison_report *out);

#endif

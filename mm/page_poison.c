/*
 * Page poisoning for DEBUG=1 builds (GRACE_DEBUG; grace/page_poison.h says what
 * it promises). free_block_checked() fills every block it takes back with
 * PAGE_POISON and records its caller in each page; alloc_block() in
 * page_alloc.c, behind alloc_page_block() and every alloc_pages*() entry, checks
 * every page of a block it hands out that carries such a record, before it zeroes
 * the block, and records the new owner. The check is where a block leaves the
 * allocator rather than where the buddy merges or splits, because every page
 * handed out passes there once, whichever list it came from and whatever blocks
 * it was merged into meanwhile, and a free page that is never handed out again
 * costs nothing. The records live in struct page, one per page (not per block),
 * so a page freed as part of one block and handed out as part of another still
 * names its own freer.
 *
 * A page that was never freed since boot carries no record and is not checked,
 * and nor is one a white-box test gave to the buddy lists directly: only memory
 * this file filled is expected to hold the poison.
 *
 * Cost: one pass of 64-bit stores on free and one of loads on allocation, eight
 * words an iteration like mm_clear_block(): under TCG a 2 MiB block takes about
 * as long again as the clear it gets anyway.
 *
 * Reports are counted and the last one is kept, as slab_debug.c does: the counter
 * is an atomic, the last report a plain copy under report_lock.
 */
#include <grace/ksyms.h>
#include <grace/page.h>
#include <grace/page_poison.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include "page_alloc_internal.h"

bool page_poison_enabled(void)
{
#ifdef GRACE_DEBUG
	return true;
#else
	return false;
#endif
}

#ifdef GRACE_DEBUG

extern char _text[];

static atomic64_t report_count;
static struct page_poison_report last_report; /* under report_lock */
static bool have_report;		      /* under report_lock */
static DEFINE_SPINLOCK(report_lock);	      /* protects last_report and have_report */

/* A return address as struct page keeps it; 0 is no record, so outside the text is ~0. */
static u32 site_of(uintptr_t caller)
{
	uintptr_t off = caller - (uintptr_t)_text;
	return caller > (uintptr_t)_text && off < ~0u ? (u32)off : ~0u;
}

static uintptr_t caller_of(u32 site)
{
	return site && site != ~0u ? (uintptr_t)_text + site : 0;
}

u64 page_poison_count(void)
{
	return (u64)atomic64_read(&report_count);
}

bool page_poison_last(struct page_poison_report *out)
{
	unsigned long flags = spin_lock_irqsave(&report_lock);
	bool have = have_report;
	*out = last_report;
	spin_unlock_irqrestore(&report_lock, flags);
	return have;
}

static void print_caller(const char *what, uintptr_t addr)
{
	char sym[KSYM_FORMAT_MAX];
	pr_err("mm:   %s %s\n", what, ksym_format(sym, sizeof(sym), addr));
}

static void report(const struct page_poison_report *r)
{
	atomic64_inc(&report_count);
	unsigned long flags = spin_lock_irqsave(&report_lock);
	last_report = *r;
	have_report = true;
	spin_unlock_irqrestore(&report_lock, flags);
	pr_err("mm: free page written (use after free): pfn 0x%llx (%p) in a block of order %u, "
	       "word at +0x%zx is 0x%llx, not the poison 0x%llx\n",
	       (unsigned long long)r->pfn, r->page, r->order, r->offset,
	       (unsigned long long)r->value, PAGE_POISON);
	print_caller("allocated by", r->caller);
	print_caller("last freed by", r->free_caller);
	print_caller("last allocated by", r->alloc_caller);
}

static void fill(u64 *p)
{
	for (u64 *end = p + PAGE_SIZE / sizeof(u64); p < end; p += 8) {
		p[0] = PAGE_POISON;
		p[1] = PAGE_POISON;
		p[2] = PAGE_POISON;
		p[3] = PAGE_POISON;
		p[4] = PAGE_POISON;
		p[5] = PAGE_POISON;
		p[6] = PAGE_POISON;
		p[7] = PAGE_POISON;
	}
}

/* Index of the first word of the page that is not the poison, or -1. */
static long first_bad_word(const u64 *page)
{
	const u64 *p = page, *end = page + PAGE_SIZE / sizeof(u64);
	for (; p < end; p += 8) {
		/* One test per eight words; look closer only when one of them differs. */
		if (((p[0] ^ PAGE_POISON) | (p[1] ^ PAGE_POISON) | (p[2] ^ PAGE_POISON) |
		     (p[3] ^ PAGE_POISON) | (p[4] ^ PAGE_POISON) | (p[5] ^ PAGE_POISON) |
		     (p[6] ^ PAGE_POISON) | (p[7] ^ PAGE_POISON)) == 0)
			continue;
		for (unsigned i = 0;; i++)
			if (p[i] != PAGE_POISON)
				return (long)(p + i - page);
	}
	return -1;
}

void page_poison_free(struct page *page, unsigned order, uintptr_t caller)
{
	u32 site = site_of(caller);
	for (u64 i = 0; i < 1ULL << order; i++) {
		fill(page_address(page + i));
		page[i].free_site = site;
	}
}

void page_poison_check(struct page *page, unsigned order, uintptr_t caller)
{
	u32 site = site_of(caller);
	bool reported = false;
	for (u64 i = 0; i < 1ULL << order; i++) {
		struct page *p = page + i;
		if (p->free_site && !reported) {
			u64 *words = page_address(p);
			long bad = first_bad_word(words);
			if (bad >= 0) {
				/* One report per block, for its first changed word. */
				struct page_poison_report r = {
				    .page = words,
				    .pfn = page_to_pfn(p),
				    .order = order,
				    .offset = (size_t)bad * sizeof(u64),
				    .value = words[bad],
				    .caller = caller,
				    .alloc_caller = caller_of(p->alloc_site),
				    .free_caller = caller_of(p->free_site),
				};
				report(&r);
				reported = true;
			}
		}
		p->free_site = 0;
		p->alloc_site = site;
	}
}

#else

u64 page_poison_count(void)
{
	return 0;
}

bool page_poison_last(struct page_poison_report *out)
{
	return false;
}

#endif

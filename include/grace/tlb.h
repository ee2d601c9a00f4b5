/*
 * TLB shootdown for address spaces (mm/tlb.c), in the mmu_gather style: unmap
 * clears entries into a struct tlb_gather, which remembers what to flush and what
 * to free; tlb_finish() then flushes this CPU and sends one IPI to each other CPU
 * in mm->cpus (the CPUs that may cache the mm), waits for all of them, and only
 * then frees the pages and tables, so no CPU can reach freed memory through a
 * stale translation. Freed pages wait on lists chained through page->private, so
 * gathering never allocates and one unmap of any size sends at most one IPI per CPU.
 */
#ifndef GRACE_TLB_H
#define GRACE_TLB_H

#include <grace/address_space.h>
#include <grace/page.h>

/*
 * Up to this many cleared leaves are flushed one address at a time; more, or any
 * freed table (RISC-V's sfence.vma by address need not drop cached non-leaf
 * entries), flush the whole TLB. 32 is Linux x86's tlb_single_page_flush_ceiling
 * order of magnitude (33): past it a full flush is cheaper than invlpg loops.
 */
#define TLB_FLUSH_MAX_PAGES 32

struct tlb_gather {
	struct mm *mm;
	uintptr_t vas[TLB_FLUSH_MAX_PAGES]; /* leaf addresses to flush one by one */
	unsigned nr_vas;
	bool flush_all;	    /* too many, or tables freed */
	struct page *pages; /* order-0 pages and tables to free */
	struct page *huge;  /* HUGE_ORDER blocks to free */
	u64 nr_pages, nr_huge, nr_tables;
};

void tlb_gather_init(struct tlb_gather *g, struct mm *mm);
/* A leaf mapping va at level was cleared; free its memory after the flush. */
void tlb_gather_leaf(struct tlb_gather *g, uintptr_t va, pte_t old, int level);
/*
 * The translations of [start, end) (page aligned) changed in place: flush them,
 * free nothing. A leaf that only lost or gained permissions is one address (a
 * flush by address drops a leaf of any size that maps it, on both arches); a 2 MiB
 * leaf split into a table is its whole range (as Linux flushes a split), since the
 * old 2 MiB entry and new 4 KiB ones may sit side by side in a TLB until then.
 */
void tlb_gather_range(struct tlb_gather *g, uintptr_t start, uintptr_t end);
/* A table (already unlinked from its parent) to free after the flush. */
void tlb_gather_table(struct tlb_gather *g, pte_t *table);
/* Flush every CPU that may cache g->mm (one IPI each), then free what g holds. */
void tlb_finish(struct tlb_gather *g);

/* TLB-flush IPIs this CPU has handled since boot (tests check the batching). */
u64 tlb_flush_ipis(unsigned cpu);

#endif

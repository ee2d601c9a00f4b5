/*
 * What the address-space files (mm/address_space.c, vma_table.c, fault.c, huge.c, pagewalk.c,
 * tlb.c) share and nobody else needs: the allocation wrapper that fault injection
 * hooks into, and the per-CPU fault and page-table page counters.
 */
#ifndef MM_ADDRESS_SPACE_INTERNAL_H
#define MM_ADDRESS_SPACE_INTERNAL_H

#include <grace/fault.h>
#include <grace/page.h>
#include <grace/page_alloc.h>
#include <grace/pgtable.h>
#include <grace/percpu_counter.h>
#include <grace/preempt.h>

/*
 * A write fault on a present leaf in a VMA that allows writing (mm/fork.c):
 * FAULT_COW_DONE when the leaf was a shared page, now this mm's own and writable
 * (or changed meanwhile: the access retries), FAULT_COW_NONE when it is not a
 * copy-on-write page, -ENOMEM. prot: the VMA's, PROT_USER included.
 */
enum { FAULT_COW_DONE = 0, FAULT_COW_NONE = 1 };
int fault_cow(struct mm *mm, uintptr_t addr, unsigned prot);

/* Drop a mapping's reference to a 4 KiB user page (or a page table); free it with the last. */
static inline void mm_page_put(void *page)
{
	if (atomic_dec_return(&virt_to_page(page)->refcount) == 0)
		free_pages(page, 0);
}

/* True when fault injection says this allocation must fail (see mm_inject_alloc_failures). */
bool mm_inject_fail(void);

/* alloc_pages_flags() behind the injection hook: every page the address-space code takes. */
static inline void *mm_alloc_pages(int node, unsigned order, unsigned flags)
{
	if (unlikely(mm_inject_fail()))
		return NULL;
	return alloc_pages_flags(node, order, flags);
}

/*
 * Zero a page-aligned block, eight 64-bit stores per loop iteration. The page
 * allocator zeroes with memset (lib/string.c), which stores one word per
 * iteration once aligned: on riscv64 three instructions a word, against ten per
 * eight words here, and under QEMU every guest instruction costs. So fault pages
 * are taken ALLOC_NOZERO and cleared here instead (Linux has clear_page and
 * clear_huge_page for the same reason).
 */
static inline void mm_clear_block(void *block, size_t bytes)
{
	u64 *p = block, *end = p + bytes / sizeof(u64);
	for (; p < end; p += 8) {
		p[0] = 0;
		p[1] = 0;
		p[2] = 0;
		p[3] = 0;
		p[4] = 0;
		p[5] = 0;
		p[6] = 0;
		p[7] = 0;
	}
}

/*
 * Page-table pages (roots included) allocated and given up since boot, summed over
 * CPUs: pt_table_alloc() counts one allocated, pt_table_free() and pt_table_retire()
 * one freed. While no table changes, allocated - freed is what every mm's tables hold
 * (the ptlock tests check exactly that after racing faults).
 */
struct pt_table_stats {
	u64 allocated, freed;
};
void pt_table_stats_sum(struct pt_table_stats *out);
/* A table leaves the page tables for good; the caller frees its page (tlb_finish, after the flush).
 */
void pt_table_retire(pte_t *table);

/*
 * Forget this CPU's run of spurious faults (mm/fault.c): a new address space may
 * well fault at the same address from the same instruction without any loop.
 */
void fault_forget_spurious(void);

/*
 * Each CPU counts its own; only fault_stats_sum() reads the others'. Some counts are
 * bumped outside the VMA lock, where the fault runs preemptible.
 */
DECLARE_PER_CPU(struct fault_stats, fault_stats);
#define fault_stat_inc(field) pcpu_counter_inc(fault_stats, field)

#endif

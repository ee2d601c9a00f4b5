/*
 * Address spaces: struct mm and the calls that create, enter and destroy one.
 *
 * An mm is a top-level page table whose kernel half is shared with every other
 * mm (arch_mm_init_root) and whose user half [0, USER_VA_END) is filled on demand
 * by the page-fault handler (mm/fault.c) inside the VMAs (mm/vma.c). A CPU enters
 * an mm with mm_switch(); it may then touch the user half between
 * arch_user_access_begin() and arch_user_access_end(), faulting pages in.
 *
 * Locks (lock order: docs/locking.md):
 *   vma_lock (rwlock)     the VMA array. Faults take it for reading only; map,
 *                         unmap and protect for writing. Held for writing, it
 *                         excludes every fault, so unmap and protect may edit
 *                         tables freely (still under their page-table locks).
 *                         mm_destroy() takes none: no thread uses the mm then.
 *   page-table locks      the entries of one PUD, PMD or PTE table: that table
 *                         page's own ptl (struct page) with PTLOCK_SPLIT, else
 *                         mm->page_table_lock for every table (PTLOCK_MM). The
 *                         PUD table's (Sv39 root, x86 PDPT) is taken to install
 *                         a PMD table, once per 1 GiB region.
 *   top levels            entries of tables above the PUD level (x86 PML4) are
 *                         filled by cmpxchg and take no lock (mm/pagewalk.c).
 */
#ifndef GRACE_ADDRESS_SPACE_H
#define GRACE_ADDRESS_SPACE_H

#include <grace/cpumask.h>
#include <grace/pgtable.h>
#include <grace/rwlock.h>
#include <grace/spinlock.h>
#include <grace/types.h>

/* vma->flags */
#define VMA_ANON 0x1   /* anonymous, demand-zero memory (every VMA today) */
#define VMA_NOHUGE 0x2 /* never back with 2 MiB pages, even where aligned */

struct vma {
	uintptr_t start, end; /* [start, end), page aligned */
	unsigned prot;	      /* PROT_READ|PROT_WRITE|PROT_EXEC (PROT_USER implied) */
	unsigned flags;	      /* VMA_* */
};

/* Page-table locking of an mm, fixed when it is created. */
enum ptlock_mode {
	PTLOCK_SPLIT, /* one lock per page-table page: faults in different PMD tables never meet */
	PTLOCK_MM, /* one lock for every table of the mm (the pre-2013 Linux way, for comparison) */
};

/*
 * Laid out by who writes what, one cache line per writer: every fault writes
 * vma_lock, so nothing a fault only reads may share its line (the first line is
 * read by every fault and written only by map, unmap and create).
 */
struct mm {
	pte_t *root; /* top-level table (direct-map address); set at create */
	phys_addr_t root_pa;
	enum ptlock_mode ptlock; /* set at create, read-only afterwards */
	struct vma *vmas;	 /* under vma_lock: sorted by start, disjoint */
	unsigned nr_vmas;	 /* under vma_lock */
	unsigned vma_order;	 /* under vma_lock: vmas is one block of 2^vma_order pages */

	rwlock_t vma_lock __cacheline_aligned; /* protects vmas, nr_vmas, vma_order */

	/* PTLOCK_MM: every entry of the PUD, PMD and PTE tables changes under this. */
	spinlock_t page_table_lock __cacheline_aligned;

	/*
	 * CPUs whose TLB may hold this mm's user entries: set by mm_load() before it
	 * loads the tables, cleared when the CPU switches away (arch_switch_mm flushes
	 * the user half). Atomic bit operations; read by shootdowns after a full barrier.
	 */
	struct cpumask cpus __cacheline_aligned;
};

/* "ptlock=split|mm" on the command line; PTLOCK_SPLIT without it. */
enum ptlock_mode mm_default_ptlock(void);
const char *ptlock_mode_name(enum ptlock_mode mode);

/* A new, empty address space; NULL when out of memory. mm_create uses mm_default_ptlock(). */
struct mm *mm_create(void);
struct mm *mm_create_ptlock(enum ptlock_mode mode);

/*
 * Free every page, table and VMA of mm, and mm. CPUs still switched onto it are
 * moved off it first by IPI (an mm should not be destroyed under a running CPU;
 * this keeps the hardware off freed tables if one is).
 */
void mm_destroy(struct mm *mm);

/*
 * Make mm the calling thread's address space (NULL: none) and load its tables.
 * The scheduler loads a thread's mm whenever it switches to it; threads without
 * one run on whatever tables the CPU has loaded (they touch only the kernel half).
 */
void mm_switch(struct mm *mm);
/* Load mm's tables on this CPU (NULL: the kernel-only tables); interrupts off or not. */
void mm_load(struct mm *mm);
/* The calling thread's address space, or NULL. */
struct mm *current_mm(void);

#endif

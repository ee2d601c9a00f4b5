/*
 * Address spaces: struct mm and the calls that create, enter and destroy one.
 *
 * An mm is a top-level page table whose kernel half is shared with every other
 * mm (arch_mm_init_root) and whose user half [0, USER_VA_END) is filled on demand
 * by the page-fault handler (mm/fault.c) inside the VMAs (mm/vma*.c). A CPU enters
 * an mm with mm_switch(); it may then touch the user half between
 * arch_user_access_begin() and arch_user_access_end(), faulting pages in.
 *
 * Locks (lock order: docs/locking.md):
 *   vma_lock (rwlock)     the VMA table. Map, unmap and protect take it for
 *                         writing; faults for reading only when the lockless
 *                         lookup fails (VMA_LOOKUP_RCU) or always
 *                         (VMA_LOOKUP_LOCKED). mm_destroy() takes none: no
 *                         thread uses the mm then.
 *   vma->lock             one VMA: a fault that found its VMA under RCU holds it
 *                         for reading (it only ever tries); a writer takes it,
 *                         waiting for those faults, before it changes or removes
 *                         the VMA (mm/vma_lock.c).
 *   vma_seq (seqcount)    bumped around every change of the table, so a fork
 *                         knows whether the VMAs it copied are still all.
 *   page-table locks      the entries of one PMD or PTE table: that table page's
 *                         own ptl (struct page) with PTLOCK_SPLIT, else
 *                         mm->page_table_lock for every table (PTLOCK_MM), PUD
 *                         tables too (Sv39 root, x86 PDPT).
 *   top levels            entries of tables above the PMD level are filled by
 *                         cmpxchg and take no lock (with PTLOCK_MM: above the
 *                         PUD level; mm/pagewalk.c).
 */
#ifndef GRACE_ADDRESS_SPACE_H
#define GRACE_ADDRESS_SPACE_H

#include <grace/cpumask.h>
#include <grace/pgtable.h>
#include <grace/rcupdate.h>
#include <grace/rwlock.h>
#include <grace/seqlock.h>
#include <grace/spinlock.h>
#include <grace/types.h>

/* vma->flags */
#define VMA_ANON 0x1   /* anonymous, demand-zero memory (every VMA today) */
#define VMA_NOHUGE 0x2 /* never back with 2 MiB pages, even where aligned */

/*
 * Two cache lines: every lookup's binary search reads the first line of the
 * VMAs on its way, while only the faults inside a VMA write its lock, on the
 * second line, so a fault's lock never moves a line another CPU's search reads.
 */
struct vma {
	uintptr_t start, end;	      /* [start, end), page aligned */
	struct mm *mm;		      /* whose table holds it: set as it goes in */
	unsigned prot;		      /* PROT_READ|PROT_WRITE|PROT_EXEC (PROT_USER implied) */
	unsigned flags;		      /* VMA_* */
	struct rcu_head rcu;	      /* vma_free=rcu: freed after a grace period */
	u32 lock __cacheline_aligned; /* readers | VMA_LOCK_WRITER (mm/vma_lock.c) */
} __cacheline_aligned;
/* vma->lock: the count of readers, and this bit while a writer holds or waits for it. */
#define VMA_LOCK_WRITER (1u << 31)

/*
 * The VMA pointers of an mm, sorted by start, with holes (NULL slots, where an
 * unmap left one: see mm/vma_table.c); replaced (and freed after a grace period) to
 * grow. After the cap slots come cap ends, slot[i]'s end at
 * vma_table_ends(t)[i]: a lookup's binary search reads only the table's lines,
 * not the VMAs of other CPUs it passes on the way.
 */
struct vma_table {
	unsigned nr, cap; /* slots used (holes too: NULL, their ends kept), slots there */
	unsigned order;	  /* the table is one block of 2^order pages */
	struct rcu_head rcu;
	/*
	 * Written with WRITE_ONCE: lookups read it under RCU. From a line of its own:
	 * every lookup reads nr and cap, which change only when a slot is added or
	 * taken out (a map that fills no hole, compaction, growth), and the slots
	 * change at every map and unmap.
	 */
	struct vma *slot[] __cacheline_aligned;
};

static inline uintptr_t *vma_table_ends(struct vma_table *t)
{
	return (uintptr_t *)&t->slot[t->cap];
}

/* Page-table locking of an mm, fixed when it is created. */
enum ptlock_mode {
	PTLOCK_SPLIT, /* one lock per page-table page: faults in different PMD tables never meet */
	PTLOCK_MM, /* one lock for every table of the mm (the pre-2013 Linux way, for comparison) */
};

/* How faults find their VMA, fixed when the mm is created. */
enum vma_lookup {
	VMA_LOOKUP_RCU,	   /* under RCU, then the VMA's own lock: faults write no shared line */
	VMA_LOOKUP_LOCKED, /* under mm->vma_lock for reading (Linux before 6.4, for comparison) */
};

/*
 * When the page-table pages above the PTE level that an unmap empties are freed,
 * fixed when the mm is created. A PTE table always goes with the unmap.
 */
enum pt_free_mode {
	PT_FREE_EXIT,  /* kept until the mm goes: a later fault there installs no table above */
	PT_FREE_UNMAP, /* by the unmap that empties them, as Linux's free_pgtables() */
};

/*
 * Per-CPU resident-set counters of one mm, one cache line per CPU: the CPU that
 * maps or unmaps a page counts it in its own slot (so a slot may go negative),
 * and mm_rss() sums them.
 */
struct mm_rss {
	long pages_4k, pages_huge;
} __cacheline_aligned;

/*
 * Laid out by who writes what, one cache line per writer. The first line is read
 * by every fault and written only at create, when the table grows and by forks;
 * the second, vma_lock and vma_seq, by every map and unmap (and vma_lock by every
 * fault in VMA_LOOKUP_LOCKED mode only).
 */
struct mm {
	pte_t *root; /* top-level table (direct-map address); set at create */
	phys_addr_t root_pa;
	enum ptlock_mode ptlock;    /* set at create, read-only afterwards */
	enum vma_lookup vma_lookup; /* set at create, read-only afterwards */
	enum pt_free_mode pt_free;  /* set at create (or mm_set_pt_free), read-only afterwards */
	struct vma_table *vmat;	    /* under vma_lock, read under RCU; NULL until the first map */
	struct mm_rss *rss;	    /* [boot_info.nr_cpus]; set at create */
	/*
	 * Forks of this mm in progress (mm/fork.c): a copy-on-write fault waits for
	 * them, since CPUs may still write through entries a fork has write-protected
	 * until its shootdown.
	 */
	atomic_t forking;

	rwlock_t vma_lock __cacheline_aligned; /* serializes the writers of vmat and its VMAs */
	seqcount_t vma_seq; /* written under vma_lock: around every change of vmat */

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
/* "vma_lookup=rcu|locked" on the command line; VMA_LOOKUP_RCU without it. */
enum vma_lookup mm_default_vma_lookup(void);
const char *vma_lookup_name(enum vma_lookup mode);
/* "pt_free=exit|unmap" on the command line; PT_FREE_EXIT without it. */
enum pt_free_mode mm_default_pt_free(void);
const char *pt_free_mode_name(enum pt_free_mode mode);
/* Give a new mm, before anything is mapped in it, another pt_free mode. */
void mm_set_pt_free(struct mm *mm, enum pt_free_mode mode);
/*
 * Make ptlock and lookup the defaults that later mm_create() calls (an exec among
 * them) use, over the command line's: how a benchmark runs user programs in each
 * design in one boot.
 */
void mm_set_default_modes(enum ptlock_mode ptlock, enum vma_lookup lookup);

/*
 * A new, empty address space; NULL when out of memory (or a mode out of range).
 * mm_create uses the command line's defaults, mm_create_ptlock its VMA lookup.
 */
struct mm *mm_create(void);
struct mm *mm_create_ptlock(enum ptlock_mode mode);
struct mm *mm_create_modes(enum ptlock_mode ptlock, enum vma_lookup lookup);

/* Pages mapped in mm now (summed over CPUs; exact while nothing maps or unmaps). */
struct mm_rss_sum {
	u64 pages_4k, pages_huge;
};
void mm_rss(struct mm *mm, struct mm_rss_sum *out);
/* Count delta leaves of level (PT_LEVEL_PTE or PT_LEVEL_PMD) on this CPU. */
void mm_rss_add(struct mm *mm, int level, long delta);

/*
 * Free every page, table and VMA of mm, and mm. CPUs still switched onto it are
 * moved off it first by IPI (an mm should not be destroyed under a running CPU;
 * this keeps the hardware off freed tables if one is).
 */
void mm_destroy(struct mm *mm);

/*
 * A copy of src for fork: the same VMAs, its 4 KiB pages shared copy-on-write
 * (read-only in both until one side writes), its 2 MiB pages copied. Called by
 * src's only thread. NULL with *err (-ENOMEM) on failure, src unchanged but for
 * pages left read-only (a write then finds them unshared and makes them
 * writable again). mm/fork.c.
 */
struct mm *mm_fork(struct mm *src, int *err);

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

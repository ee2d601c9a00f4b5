/*
 * Huge-page split selftests: unmapping part of a 2 MiB page, and changing the
 * protection of part of one, split it into 4 KiB leaves while every other CPU runs
 * the mm and reads the rest of it over and over. The rest must read the same bytes
 * throughout and after (each 4 KiB page holds a value derived from its address, so
 * a leaf pointing at the wrong 4 KiB page shows), the cut part must be gone or
 * read-only on every CPU once the call returns, the page tables must hold exactly
 * what is left, and mm_destroy() must give back every page, split or not. Dropping
 * the pages of part of one (MADV_DONTNEED) splits it the same way, on one CPU. Without
 * memory for the split's table both calls fail before they change anything.
 *
 * The readers keep the user-access window open from their first read to their last
 * (QEMU's RISC-V flushes its TLB whenever sstatus.SUM changes), so their TLBs hold
 * the old 2 MiB translations while the split runs.
 */
#include "../../mm/address_space_internal.h"
#include <grace/printk.h>
#include "as_test.h"

#define RW (PROT_READ | PROT_WRITE)

/* 2 MiB pages the unmap test cuts, one way each (the last two across their boundary). */
#define SPLIT_REGIONS 5
#define SPLIT_PAGES (SPLIT_REGIONS * PT_ENTRIES)

static u64 split_value(uintptr_t va)
{
	return (va >> PAGE_SHIFT) * 0x9e3779b97f4a7c15ULL ^ 0x53504c4954ULL;
}

struct split_cut {
	uintptr_t start, end; /* offsets from the test's base */
};

/*
 * The middle 4 KiB of the first 2 MiB, the first 1 MiB of the second, the last page
 * of the third, and 32 KiB across the boundary of the fourth and fifth (one unmap,
 * two splits).
 */
static const struct split_cut split_cuts[] = {
    {256 * PAGE_SIZE, 257 * PAGE_SIZE},
    {1 * HUGE_SIZE, 1 * HUGE_SIZE + HUGE_SIZE / 2},
    {3 * HUGE_SIZE - PAGE_SIZE, 3 * HUGE_SIZE},
    {4 * HUGE_SIZE - 4 * PAGE_SIZE, 4 * HUGE_SIZE + 4 * PAGE_SIZE},
};
/* 2 MiB leaves the cuts split: one each, two for the one across a boundary. */
#define SPLIT_SPLITS 5

static bool split_is_cut(uintptr_t off)
{
	for (unsigned i = 0; i < ARRAY_SIZE(split_cuts); i++)
		if (off >= split_cuts[i].start && off < split_cuts[i].end)
			return true;
	return false;
}

static unsigned split_cut_pages(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(split_cuts); i++)
		n += (unsigned)((split_cuts[i].end - split_cuts[i].start) / PAGE_SIZE);
	return n;
}

struct split_test {
	struct mm *mm;
	uintptr_t base;
	unsigned cutter; /* the CPU that unmaps or protects (the one running the test) */
	atomic_t ready;	 /* CPUs with warm TLBs */
	u32 done;	 /* set once the cutter's calls returned */
	atomic_t errors; /* reads of kept pages that faulted or read the wrong value */
	atomic_t passes; /* reader passes over the kept pages while the cutter worked */
	atomic_t stale;	 /* protect: writes to read-only pages after it returned */
	int ret[ARRAY_SIZE(split_cuts) + 2]; /* the cutter's return values */
	bool protect;			     /* no page is cut (not the unmap test) */
};

static struct split_test st;

/*
 * Read the first word of every stride-th page of [base, base + len) that kept its
 * mapping.
 */
static void split_read_kept(struct split_test *t, uintptr_t len, uintptr_t stride)
{
	for (uintptr_t off = 0; off < len; off += stride) {
		u64 v;
		if (!t->protect && split_is_cut(off))
			continue;
		uintptr_t va = t->base + off;
		if (probe_read_u64((void *)va, &v) || v != split_value(va))
			atomic_inc(&t->errors);
	}
}

/* The protect test: the pages it makes read-only, and the one each CPU writes. */
#define PROT_RO_START (HUGE_SIZE / 2)
#define PROT_RO_LEN (HUGE_SIZE / 4)
#define PROT_HUGE_RO HUGE_SIZE /* the second 2 MiB, read-only as a whole */

/* A page of the part for each CPU; past PROT_RO_LEN's pages (128) CPUs share them. */
static uintptr_t prot_write_target(const struct split_test *t, unsigned cpu, bool huge)
{
	uintptr_t page = cpu % (PROT_RO_LEN / PAGE_SIZE);
	return t->base + (huge ? PROT_HUGE_RO : PROT_RO_START) + page * PAGE_SIZE;
}

/*
 * Protect test readers also write their own page of each part that becomes
 * read-only (its own value, so the bytes never change): once the cutter says done,
 * the next write must fault on every CPU. While the calls run they write only the
 * 2 MiB page protected whole, which no split flushes: a write that faults traps,
 * and a trap (sstatus.SUM toggles) flushes QEMU's RISC-V TLB, which would hide a
 * missing shootdown of the next page.
 */
static void prot_write_pages(struct split_test *t, unsigned cpu, bool after)
{
	for (int huge = 1; huge >= (after ? 0 : 1); huge--) {
		uintptr_t va = prot_write_target(t, cpu, huge);
		int ret = probe_write_u64((void *)va, split_value(va));
		if (after && ret == 0)
			atomic_inc(&t->stale);
	}
}

/*
 * Pages the protect test's readers read per pass while the calls run: few enough
 * that they do not evict the written page's translation from QEMU's TLB.
 */
#define PROT_READ_STRIDE (64 * PAGE_SIZE)

static void split_cutter_run(struct split_test *t)
{
	if (t->protect) {
		t->ret[0] = vma_protect(t->mm, t->base + PROT_RO_START, PROT_RO_LEN, PROT_READ);
		t->ret[1] = vma_protect(t->mm, t->base + PROT_HUGE_RO, HUGE_SIZE, PROT_READ);
		return;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(split_cuts); i++)
		t->ret[i] = vma_unmap(t->mm, t->base + split_cuts[i].start,
				      split_cuts[i].end - split_cuts[i].start);
}

static void split_worker(void *arg)
{
	struct split_test *t = arg;
	unsigned cpu = smp_processor_id();
	uintptr_t len = t->protect ? 2 * HUGE_SIZE : SPLIT_REGIONS * HUGE_SIZE;

	mm_switch(t->mm);
	arch_user_access_begin();
	split_read_kept(t, len, PAGE_SIZE);
	if (t->protect)
		prot_write_pages(t, cpu, false);
	atomic_fetch_add_release(&t->ready, 1);
	while ((unsigned)atomic_read_acquire(&t->ready) < num_online_cpus())
		cpu_relax();
	if (cpu == t->cutter) {
		split_cutter_run(t);
		smp_store_release(&t->done, 1);
	} else {
		/* Read during the calls; the pass after "done" checks what they left. */
		for (bool after = false; !after;) {
			after = smp_load_acquire(&t->done);
			split_read_kept(t, len, t->protect ? PROT_READ_STRIDE : PAGE_SIZE);
			if (t->protect)
				prot_write_pages(t, cpu, after);
			if (!after)
				atomic_inc(&t->passes);
		}
	}
	arch_user_access_end();
	mm_switch(NULL);
}

/*
 * Map len bytes at as_slot(0) as 2 MiB pages and fill them. The physical address of
 * each 2 MiB page goes to pa[]. False if a node had no 2 MiB block: the mm is gone
 * again, with all its memory (free bytes back to before), and the test is skipped.
 */
static bool split_map_huge(struct split_test *t, uintptr_t len, phys_addr_t *pa)
{
	int level;

	t->mm = mm_create();
	if (!t->mm || vma_map(t->mm, t->base, len, RW, 0))
		return false;
	for (uintptr_t off = 0; off < len; off += HUGE_SIZE) {
		if (mm_fault(t->mm, t->base + off, FAULT_WRITE))
			return false;
		pa[off / HUGE_SIZE] = as_pa(t->mm, t->base + off, &level);
		if (level != PT_LEVEL_PMD)
			return false;
	}
	return true;
}

static bool split_setup(struct split_test *t, uintptr_t len, phys_addr_t *pa, u64 before)
{
	if (!split_map_huge(t, len, pa)) {
		if (t->mm)
			mm_destroy(t->mm);
		EXPECT_EQ(as_free_bytes(), before);
		test_skip("no free 2 MiB blocks");
		return false;
	}
	mm_switch(t->mm);
	for (uintptr_t va = t->base; va < t->base + len; va += PAGE_SIZE)
		user_write_u64(va, split_value(va));
	mm_switch(NULL);
	return true;
}

static void split_test_init(bool protect)
{
	st = (struct split_test){.base = as_slot(0), .protect = protect};
	preempt_disable();
	st.cutter = smp_processor_id();
	preempt_enable();
}

/* Pages of [base, base + len) whose leaf, memory or contents are not what they should be. */
static unsigned split_bad_pages(struct split_test *t, uintptr_t len, const phys_addr_t *pa)
{
	unsigned bad = 0;
	int level;

	mm_switch(t->mm);
	for (uintptr_t off = 0; off < len; off += PAGE_SIZE) {
		uintptr_t va = t->base + off;
		phys_addr_t got = as_pa(t->mm, va, &level);
		u64 v = 0;
		if (!t->protect && split_is_cut(off)) {
			bad += got != 0 || mm_fault(t->mm, va, FAULT_READ) != -EFAULT;
			continue;
		}
		bad += got != pa[off / HUGE_SIZE] + off % HUGE_SIZE || user_read_u64(va, &v) ||
		       v != split_value(va);
	}
	mm_switch(NULL);
	return bad;
}

TEST(huge_split, partial_unmap_keeps_the_rest_while_cpus_read_it)
{
	phys_addr_t pa[SPLIT_REGIONS];
	u64 before = as_free_bytes(), bad = mm_bad_free_count();
	struct pt_table_stats p0, p1, p2;
	struct fault_stats f0, f1;
	struct pt_counts c;
	uintptr_t len = SPLIT_REGIONS * HUGE_SIZE;

	pt_table_stats_sum(&p0);
	split_test_init(false);
	if (!split_setup(&st, len, pa, before))
		return;
	fault_stats_sum(&f0);
	smp_run_all(split_worker, &st);
	fault_stats_sum(&f1);
	for (unsigned i = 0; i < ARRAY_SIZE(split_cuts); i++)
		EXPECT_EQ(st.ret[i], 0);
	EXPECT_EQ(atomic_read(&st.errors), 0);
	EXPECT_EQ(f1.split_huge - f0.split_huge, SPLIT_SPLITS);
	EXPECT_EQ(split_bad_pages(&st, len, pa), 0);

	/* Every 2 MiB page is now a PTE table of what is left of it. */
	pt_count(st.mm, &c);
	EXPECT_EQ(c.pages_huge, 0);
	EXPECT_EQ(c.pages_4k, SPLIT_PAGES - split_cut_pages());
	EXPECT_EQ(c.tables, PT_TOP_LEVEL - 1 + SPLIT_REGIONS);
	as_expect_rss_matches(st.mm);
	pt_table_stats_sum(&p1);
	/* The tables the splits did not use went back: allocated = held, root included. */
	EXPECT_EQ((p1.allocated - p0.allocated) - (p1.freed - p0.freed), c.tables + 1);
	mm_destroy(st.mm);
	pt_table_stats_sum(&p2);
	EXPECT_EQ(p2.allocated - p0.allocated, p2.freed - p0.freed);
	EXPECT_EQ(mm_bad_free_count(), bad);
	EXPECT_EQ(as_free_bytes(), before);
	printk("# huge_split: %d reader passes during the unmaps\n", atomic_read(&st.passes));
}

/* The leaf mapping va allows writing, and sits at level. */
static bool prot_leaf_writable(struct mm *mm, uintptr_t va, int want_level)
{
	pte_t pte;
	int level;
	if (pt_lookup(mm, va, &pte, &level) || level != want_level)
		return false;
	return pte_allows(pte, PROT_WRITE | PROT_USER);
}

static bool prot_leaf_read_only(struct mm *mm, uintptr_t va, int want_level)
{
	pte_t pte;
	int level;
	if (pt_lookup(mm, va, &pte, &level) || level != want_level)
		return false;
	return pte_allows(pte, PROT_READ | PROT_USER) && !pte_allows(pte, PROT_WRITE);
}

/* The four VMAs the two protect calls leave, and their prot. */
static void prot_check_vmas(struct split_test *t)
{
	static const struct {
		uintptr_t start, end;
		unsigned prot;
	} want[] = {
	    {0, PROT_RO_START, RW},
	    {PROT_RO_START, PROT_RO_START + PROT_RO_LEN, PROT_READ},
	    {PROT_RO_START + PROT_RO_LEN, HUGE_SIZE, RW},
	    {HUGE_SIZE, 2 * HUGE_SIZE, PROT_READ},
	};
	struct vma v;

	EXPECT_EQ(vma_count(t->mm), ARRAY_SIZE(want));
	for (unsigned i = 0; i < ARRAY_SIZE(want); i++) {
		EXPECT_TRUE(vma_lookup(t->mm, t->base + want[i].start, &v));
		EXPECT_EQ(v.start, t->base + want[i].start);
		EXPECT_EQ(v.end, t->base + want[i].end);
		EXPECT_EQ(v.prot, want[i].prot);
	}
}

/* Leaves and faults of the protected range, its neighbours and the read-only 2 MiB page. */
static void prot_check_leaves(struct split_test *t)
{
	uintptr_t ro = t->base + PROT_RO_START, ro_end = ro + PROT_RO_LEN;
	uintptr_t huge = t->base + PROT_HUGE_RO;

	EXPECT_TRUE(prot_leaf_read_only(t->mm, ro, PT_LEVEL_PTE));
	EXPECT_TRUE(prot_leaf_read_only(t->mm, ro_end - PAGE_SIZE, PT_LEVEL_PTE));
	EXPECT_TRUE(prot_leaf_writable(t->mm, ro - PAGE_SIZE, PT_LEVEL_PTE));
	EXPECT_TRUE(prot_leaf_writable(t->mm, ro_end, PT_LEVEL_PTE));
	EXPECT_TRUE(prot_leaf_writable(t->mm, t->base, PT_LEVEL_PTE));
	/* All of the second 2 MiB changed: it stays one leaf. */
	EXPECT_TRUE(prot_leaf_read_only(t->mm, huge, PT_LEVEL_PMD));
	EXPECT_EQ(mm_fault(t->mm, ro, FAULT_WRITE), -EFAULT);
	EXPECT_EQ(mm_fault(t->mm, huge + PAGE_SIZE, FAULT_WRITE), -EFAULT);
	EXPECT_EQ(mm_fault(t->mm, ro, FAULT_READ), 0);
	EXPECT_EQ(mm_fault(t->mm, ro_end, FAULT_WRITE), 0);

	mm_switch(t->mm);
	EXPECT_EQ(user_write_u64(ro, 1), -EFAULT);
	EXPECT_EQ(user_write_u64(huge, 1), -EFAULT);
	EXPECT_EQ(user_write_u64(ro - PAGE_SIZE, split_value(ro - PAGE_SIZE)), 0);
	EXPECT_EQ(user_write_u64(ro_end, split_value(ro_end)), 0);
	mm_switch(NULL);
}

TEST(huge_split, protect_makes_part_of_a_huge_page_read_only_on_every_cpu)
{
	phys_addr_t pa[2];
	u64 before = as_free_bytes(), bad = mm_bad_free_count();
	struct fault_stats f0, f1;
	uintptr_t len = 2 * HUGE_SIZE;

	split_test_init(true);
	if (!split_setup(&st, len, pa, before))
		return;
	fault_stats_sum(&f0);
	smp_run_all(split_worker, &st);
	fault_stats_sum(&f1);
	EXPECT_EQ(st.ret[0], 0);
	EXPECT_EQ(st.ret[1], 0);
	EXPECT_EQ(atomic_read(&st.errors), 0);
	/* Every CPU's next write after the return faulted: none used a stale writable entry. */
	EXPECT_EQ(atomic_read(&st.stale), 0);
	/* Only the first 2 MiB was cut by an edge. */
	EXPECT_EQ(f1.split_huge - f0.split_huge, 1);
	prot_check_vmas(&st);
	prot_check_leaves(&st);
	EXPECT_EQ(split_bad_pages(&st, len, pa), 0);

	/* Errors change nothing: a range past the VMAs' end, a bad range, unknown bits. */
	uintptr_t ro = st.base + PROT_RO_START;
	EXPECT_EQ(vma_protect(st.mm, st.base + len - PAGE_SIZE, 2 * PAGE_SIZE, RW), -ENOMEM);
	EXPECT_EQ(vma_protect(st.mm, st.base - PAGE_SIZE, 2 * PAGE_SIZE, RW), -ENOMEM);
	EXPECT_EQ(vma_protect(st.mm, ro + 1, PAGE_SIZE, RW), -EINVAL);
	EXPECT_EQ(vma_protect(st.mm, ro, PAGE_SIZE, 0x100), -EINVAL);
	prot_check_vmas(&st);

	/* And back: writable again, same memory, same bytes. */
	EXPECT_EQ(vma_protect(st.mm, ro, PROT_RO_LEN, RW), 0);
	EXPECT_TRUE(prot_leaf_writable(st.mm, ro, PT_LEVEL_PTE));
	mm_switch(st.mm);
	EXPECT_EQ(user_write_u64(ro, split_value(ro)), 0);
	mm_switch(NULL);
	EXPECT_EQ(split_bad_pages(&st, len, pa), 0);
	as_expect_rss_matches(st.mm);
	mm_destroy(st.mm);
	EXPECT_EQ(mm_bad_free_count(), bad);
	EXPECT_EQ(as_free_bytes(), before);
	printk("# huge_split: %d reader passes during the protects\n", atomic_read(&st.passes));
}

/*
 * No memory for the split's PTE table: the unmap or protect fails with -ENOMEM
 * before it changed anything (VMAs, leaves, contents), and leaks nothing.
 */
TEST(huge_split, out_of_memory_for_the_table_changes_nothing)
{
	phys_addr_t pa[1];
	u64 before = as_free_bytes(), bad = mm_bad_free_count();
	uintptr_t mid = as_slot(0) + HUGE_SIZE / 2;
	struct vma v;
	int level;

	split_test_init(true); /* no page counts as cut */
	if (!split_setup(&st, HUGE_SIZE, pa, before))
		return;
	/* The VMA array has room: the split's table is the only allocation. */
	mm_inject_alloc_failures(0, 1);
	EXPECT_EQ(vma_unmap(st.mm, mid, PAGE_SIZE), -ENOMEM);
	mm_inject_alloc_failures(0, 1);
	EXPECT_EQ(vma_protect(st.mm, mid, PAGE_SIZE, PROT_READ), -ENOMEM);
	mm_inject_alloc_failures(0, 0);
	EXPECT_EQ(vma_count(st.mm), 1);
	EXPECT_TRUE(vma_lookup(st.mm, mid, &v) && v.prot == RW);
	EXPECT_TRUE(as_pa(st.mm, mid, &level) == pa[0] + HUGE_SIZE / 2);
	EXPECT_EQ(level, PT_LEVEL_PMD);
	EXPECT_TRUE(prot_leaf_writable(st.mm, mid, PT_LEVEL_PMD));
	EXPECT_EQ(split_bad_pages(&st, HUGE_SIZE, pa), 0);
	/* With memory, both go through. */
	EXPECT_EQ(vma_protect(st.mm, mid, PAGE_SIZE, PROT_READ), 0);
	EXPECT_TRUE(prot_leaf_read_only(st.mm, mid, PT_LEVEL_PTE));
	EXPECT_EQ(vma_unmap(st.mm, mid, PAGE_SIZE), 0);
	EXPECT_TRUE(as_pa(st.mm, mid, NULL) == 0);
	as_expect_rss_matches(st.mm);
	mm_destroy(st.mm);
	EXPECT_EQ(mm_bad_free_count(), bad);
	EXPECT_EQ(as_free_bytes(), before);
}

/*
 * madvise(MADV_DONTNEED)'s vma_discard() of one 4 KiB page inside a 2 MiB page: the
 * 2 MiB page is split, that page is gone and faults back in as zeros, every other
 * page keeps its memory and bytes, and the VMA stays one, as it was.
 */
TEST(huge_split, discard_of_part_drops_only_it_and_keeps_the_vma)
{
	phys_addr_t pa[1];
	u64 before = as_free_bytes(), bad = mm_bad_free_count(), val = ~0ULL;
	uintptr_t mid = as_slot(0) + HUGE_SIZE / 2;
	unsigned changed = 0;
	struct vma v;

	split_test_init(false);
	if (!split_setup(&st, HUGE_SIZE, pa, before))
		return;
	EXPECT_EQ(vma_discard(st.mm, mid, PAGE_SIZE), 0);
	EXPECT_EQ(vma_count(st.mm), 1);
	EXPECT_TRUE(vma_lookup(st.mm, mid, &v) && v.start == st.base &&
		    v.end == st.base + HUGE_SIZE && v.prot == RW);
	EXPECT_TRUE(as_pa(st.mm, mid, NULL) == 0);
	mm_switch(st.mm);
	for (uintptr_t va = st.base; va < st.base + HUGE_SIZE; va += PAGE_SIZE) {
		int level;
		u64 x = 0;
		if (va != mid)
			changed += as_pa(st.mm, va, &level) != pa[0] + (va - st.base) ||
				   level != PT_LEVEL_PTE || user_read_u64(va, &x) ||
				   x != split_value(va);
	}
	EXPECT_EQ(user_read_u64(mid, &val), 0);
	mm_switch(NULL);
	EXPECT_EQ(changed, 0);
	EXPECT_EQ(val, 0);
	as_expect_rss_matches(st.mm);
	mm_destroy(st.mm);
	EXPECT_EQ(mm_bad_free_count(), bad);
	EXPECT_EQ(as_free_bytes(), before);
}

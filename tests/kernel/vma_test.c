/*
 * VMA selftests: map, find and unmap with their errors; trimming and splitting on
 * partial unmaps; an array grown past one page; the holes unmaps leave, filled
 * and compacted; splitting a 2 MiB page an unmap cuts; -ENOMEM without leaks;
 * maps from every CPU at once; PROT_NONE and back.
 */
#include "as_test.h"

#define RW (PROT_READ | PROT_WRITE)

TEST(vma, map_find_errors)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	struct vma v;

	EXPECT_EQ(vma_map(mm, a, 4 * PAGE_SIZE, RW, 0), 0);
	EXPECT_EQ(vma_map(mm, a + 8 * PAGE_SIZE, PAGE_SIZE, PROT_READ, VMA_NOHUGE), 0);

	EXPECT_TRUE(vma_lookup(mm, a, &v));
	EXPECT_EQ(v.start, a);
	EXPECT_EQ(v.end, a + 4 * PAGE_SIZE);
	EXPECT_EQ(v.prot, RW);
	EXPECT_TRUE(vma_lookup(mm, a + 4 * PAGE_SIZE - 1, &v));
	EXPECT_FALSE(vma_lookup(mm, a + 4 * PAGE_SIZE, &v));
	EXPECT_FALSE(vma_lookup(mm, a - 1, &v));
	EXPECT_TRUE(vma_lookup(mm, a + 8 * PAGE_SIZE, &v));
	EXPECT_EQ(v.prot, PROT_READ);
	EXPECT_TRUE(v.flags & VMA_NOHUGE);
	EXPECT_TRUE(v.flags & VMA_ANON);

	/* Overlaps, at either end or covering. */
	EXPECT_EQ(vma_map(mm, a + 3 * PAGE_SIZE, 2 * PAGE_SIZE, RW, 0), -EEXIST);
	EXPECT_EQ(vma_map(mm, a - PAGE_SIZE, 2 * PAGE_SIZE, RW, 0), -EEXIST);
	EXPECT_EQ(vma_map(mm, a - PAGE_SIZE, 16 * PAGE_SIZE, RW, 0), -EEXIST);
	/* The gap between them fits exactly. */
	EXPECT_EQ(vma_map(mm, a + 4 * PAGE_SIZE, 4 * PAGE_SIZE, RW, 0), 0);

	/* Bad input. */
	EXPECT_EQ(vma_map(mm, a + 1, PAGE_SIZE, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, a + 64 * PAGE_SIZE, 100, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, a + 64 * PAGE_SIZE, 0, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, 0, PAGE_SIZE, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, USER_VA_END - PAGE_SIZE, 2 * PAGE_SIZE, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, USER_VA_END, PAGE_SIZE, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, a + 64 * PAGE_SIZE, -PAGE_SIZE, RW, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, a + 64 * PAGE_SIZE, PAGE_SIZE, 0x100, 0), -EINVAL);
	EXPECT_EQ(vma_map(mm, a + 64 * PAGE_SIZE, PAGE_SIZE, RW, 0x100), -EINVAL);
	EXPECT_EQ(vma_unmap(mm, a + 1, PAGE_SIZE), -EINVAL);
	EXPECT_EQ(vma_unmap(mm, a, 0), -EINVAL);
	EXPECT_EQ(vma_count(mm), 3);

	/* Unmapping a hole is fine and changes nothing. */
	EXPECT_EQ(vma_unmap(mm, a + 100 * PAGE_SIZE, PAGE_SIZE), 0);
	EXPECT_EQ(vma_count(mm), 3);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(vma, unmap_trims_and_splits)
{
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	struct vma v;

	ASSERT_EQ(vma_map(mm, a, 16 * PAGE_SIZE, RW, 0), 0);
	/* A hole in the middle splits it in two. */
	EXPECT_EQ(vma_unmap(mm, a + 4 * PAGE_SIZE, 2 * PAGE_SIZE), 0);
	EXPECT_EQ(vma_count(mm), 2);
	EXPECT_TRUE(vma_lookup(mm, a + 3 * PAGE_SIZE, &v));
	EXPECT_EQ(v.end, a + 4 * PAGE_SIZE);
	EXPECT_FALSE(vma_lookup(mm, a + 5 * PAGE_SIZE, &v));
	EXPECT_TRUE(vma_lookup(mm, a + 6 * PAGE_SIZE, &v));
	EXPECT_EQ(v.start, a + 6 * PAGE_SIZE);
	EXPECT_EQ(v.end, a + 16 * PAGE_SIZE);
	/* Trim the head of one and the tail of the other at once. */
	EXPECT_EQ(vma_unmap(mm, a + 2 * PAGE_SIZE, 6 * PAGE_SIZE), 0);
	EXPECT_TRUE(vma_lookup(mm, a, &v));
	EXPECT_EQ(v.end, a + 2 * PAGE_SIZE);
	EXPECT_TRUE(vma_lookup(mm, a + 8 * PAGE_SIZE, &v));
	EXPECT_EQ(v.start, a + 8 * PAGE_SIZE);
	EXPECT_FALSE(vma_lookup(mm, a + 7 * PAGE_SIZE, &v));
	/* One unmap over both removes them. */
	EXPECT_EQ(vma_unmap(mm, a, 16 * PAGE_SIZE), 0);
	EXPECT_EQ(vma_count(mm), 0);
	mm_destroy(mm);
}

#define VMA_MANY 600 /* more than one page of VMA pointers: the table grows */

TEST(vma, many_vmas_grow_array)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	struct vma v;

	/* Mapped from the top down: every insert lands at the front of the array. */
	for (int i = VMA_MANY - 1; i >= 0; i--)
		ASSERT_EQ(vma_map(mm, a + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, RW, 0), 0);
	EXPECT_EQ(vma_count(mm), VMA_MANY);
	EXPECT_GE(mm->vmat->order, 1);
	for (unsigned i = 0; i < VMA_MANY; i++) {
		uintptr_t va = a + (uintptr_t)i * 2 * PAGE_SIZE;
		EXPECT_TRUE(vma_lookup(mm, va, &v) && v.start == va);
		EXPECT_FALSE(vma_lookup(mm, va + PAGE_SIZE, &v));
	}
	EXPECT_EQ(mm_fault(mm, a + 2 * PAGE_SIZE * 300, FAULT_WRITE), 0);
	EXPECT_EQ(vma_unmap(mm, a, 2 * PAGE_SIZE * VMA_MANY), 0);
	EXPECT_EQ(vma_count(mm), 0);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* Is [start, end) mm's VMA, with no VMA in the page on either side of it? */
static bool vma_is_exactly(struct mm *mm, uintptr_t start, uintptr_t end)
{
	struct vma v;
	return vma_lookup(mm, start, &v) && v.start == start && v.end == end &&
	       vma_lookup(mm, end - 1, &v) && !vma_lookup(mm, start - 1, &v) &&
	       !vma_lookup(mm, end, &v) && mm_fault(mm, end, FAULT_READ) == -EFAULT;
}

/*
 * An unmap leaves a hole that keeps its end, and a map of the same range fills it
 * without moving a slot or writing an end. A map into a hole takes its own end,
 * shorter or longer than the hole's.
 */
TEST(vma, an_unmapped_range_leaves_a_hole_its_map_fills)
{
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0), b = a + 2 * PAGE_SIZE, c = a + 6 * PAGE_SIZE;

	ASSERT_EQ(vma_map(mm, a, PAGE_SIZE, RW, 0), 0);
	ASSERT_EQ(vma_map(mm, b, 2 * PAGE_SIZE, RW, 0), 0);
	ASSERT_EQ(vma_map(mm, c, PAGE_SIZE, RW, 0), 0);
	struct vma_table *t = mm->vmat;
	uintptr_t *ends = vma_table_ends(t);
	ASSERT_EQ(t->nr, 3);

	EXPECT_EQ(vma_unmap(mm, b, 2 * PAGE_SIZE), 0);
	EXPECT_EQ(t->nr, 3);
	EXPECT_TRUE(t->slot[1] == NULL);
	EXPECT_EQ(ends[1], b + 2 * PAGE_SIZE);
	EXPECT_EQ(vma_count(mm), 2);
	EXPECT_EQ(mm_fault(mm, b, FAULT_READ), -EFAULT);
	EXPECT_TRUE(vma_is_exactly(mm, a, a + PAGE_SIZE));
	EXPECT_TRUE(vma_is_exactly(mm, c, c + PAGE_SIZE));

	EXPECT_EQ(vma_map(mm, b, 2 * PAGE_SIZE, RW, 0), 0);
	EXPECT_EQ(t->nr, 3);
	EXPECT_TRUE(t->slot[1] != NULL);
	EXPECT_EQ(ends[1], b + 2 * PAGE_SIZE);
	EXPECT_TRUE(vma_is_exactly(mm, b, b + 2 * PAGE_SIZE));
	EXPECT_EQ(mm_fault(mm, b, FAULT_WRITE), 0);

	/* Shorter: the page past it is no VMA's. */
	EXPECT_EQ(vma_unmap(mm, b, 2 * PAGE_SIZE), 0);
	EXPECT_EQ(vma_map(mm, b, PAGE_SIZE, RW, 0), 0);
	EXPECT_TRUE(vma_is_exactly(mm, b, b + PAGE_SIZE));
	/* Longer, past the hole's end up to c. */
	EXPECT_EQ(vma_unmap(mm, b, PAGE_SIZE), 0);
	EXPECT_EQ(vma_map(mm, b, c + PAGE_SIZE - b, RW, 0), -EEXIST); /* past the hole into c */
	EXPECT_EQ(vma_map(mm, b, c - b, RW, 0), 0);
	struct vma v;
	EXPECT_TRUE(vma_lookup(mm, b, &v) && v.start == b && v.end == c);
	EXPECT_TRUE(vma_lookup(mm, c - 1, &v) && v.start == b && v.end == c);
	EXPECT_TRUE(vma_lookup(mm, c, &v) && v.start == c && v.end == c + PAGE_SIZE);
	EXPECT_EQ(vma_count(mm), 3);

	/* Over two holes: the first ends inside it and goes, the second is filled. */
	EXPECT_EQ(vma_unmap(mm, b, c - b), 0);
	EXPECT_EQ(vma_map(mm, b, PAGE_SIZE, RW, 0), 0);
	EXPECT_EQ(vma_map(mm, b + 2 * PAGE_SIZE, PAGE_SIZE, RW, 0), 0);
	EXPECT_EQ(vma_unmap(mm, b, 3 * PAGE_SIZE), 0);
	EXPECT_EQ(vma_map(mm, b, 3 * PAGE_SIZE, PROT_READ, 0), 0);
	EXPECT_TRUE(vma_is_exactly(mm, b, b + 3 * PAGE_SIZE));
	EXPECT_TRUE(vma_lookup(mm, b + PAGE_SIZE, &v) && v.prot == PROT_READ);
	EXPECT_EQ(vma_count(mm), 3);

	/* A split's upper part into the hole above: mprotect the middle of b's VMA. */
	EXPECT_EQ(vma_unmap(mm, c, PAGE_SIZE), 0);
	EXPECT_EQ(vma_protect(mm, b + PAGE_SIZE, PAGE_SIZE, RW), 0);
	EXPECT_TRUE(vma_lookup(mm, b + PAGE_SIZE, &v) && v.start == b + PAGE_SIZE &&
		    v.end == b + 2 * PAGE_SIZE && v.prot == RW);
	EXPECT_TRUE(vma_lookup(mm, b, &v) && v.start == b && v.end == b + PAGE_SIZE &&
		    v.prot == PROT_READ);
	EXPECT_TRUE(vma_lookup(mm, b + 2 * PAGE_SIZE, &v) && v.start == b + 2 * PAGE_SIZE &&
		    v.end == b + 3 * PAGE_SIZE && v.prot == PROT_READ);
	EXPECT_EQ(mm_fault(mm, c, FAULT_READ), -EFAULT);
	EXPECT_EQ(vma_count(mm), 4);
	mm_destroy(mm);
}

/*
 * A table full of VMAs and holes is compacted, not grown, when there are holes
 * enough for what a map needs; every VMA keeps its range.
 */
TEST(vma, holes_are_compacted_before_the_table_grows)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	unsigned bad = 0;

	ASSERT_EQ(vma_map(mm, a, PAGE_SIZE, RW, 0), 0);
	struct vma_table *t = mm->vmat;
	unsigned cap = t->cap;
	for (unsigned i = 1; i < cap; i++)
		bad += vma_map(mm, a + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, RW, 0) != 0;
	for (unsigned i = 0; i < cap; i += 2)
		bad += vma_unmap(mm, a + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE) != 0;
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(t->nr, cap);
	/* Above the last: no hole is where they go, so each needs a new slot. */
	uintptr_t above = a + (uintptr_t)cap * 2 * PAGE_SIZE;
	for (unsigned i = 0; i < cap / 2; i++)
		bad += vma_map(mm, above + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, RW, 0) != 0;
	EXPECT_EQ(bad, 0);
	EXPECT_TRUE(mm->vmat == t);
	EXPECT_EQ(vma_count(mm), cap - (cap + 1) / 2 + cap / 2);
	for (unsigned i = 0; i < cap + cap / 2; i++) {
		uintptr_t va = a + (uintptr_t)i * 2 * PAGE_SIZE;
		bool mapped = i >= cap || i % 2;
		bad += mapped ? !vma_is_exactly(mm, va, va + PAGE_SIZE)
			      : mm_fault(mm, va, FAULT_READ) != -EFAULT;
	}
	EXPECT_EQ(bad, 0);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* A value for each 4 KiB page, from its address, to tell the pages apart. */
static u64 vma_page_value(uintptr_t va)
{
	return (va >> PAGE_SHIFT) * 0x9e3779b97f4a7c15ULL + 1;
}

/*
 * An unmap whose edges cut a mapped 2 MiB page splits it: the cut part is gone
 * (faults fail, no leaf), the rest keeps its memory and contents as 4 KiB leaves,
 * and every page, split or not, goes back to the allocator by mm_destroy().
 */
TEST(vma, unmap_splits_the_huge_page_an_edge_cuts)
{
	u64 before = as_free_bytes(), bad = mm_bad_free_count();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	struct pt_counts c;
	int level;

	ASSERT_EQ(vma_map(mm, a, 2 * HUGE_SIZE, RW, 0), 0);
	ASSERT_EQ(mm_fault(mm, a, FAULT_WRITE), 0);
	phys_addr_t pa = as_pa(mm, a, &level);
	if (level != PT_LEVEL_PMD) {
		mm_destroy(mm);
		test_skip("no free 2 MiB block");
		return;
	}
	mm_switch(mm);
	for (uintptr_t va = a; va < a + HUGE_SIZE; va += PAGE_SIZE)
		ASSERT_EQ(user_write_u64(va, vma_page_value(va)), 0);
	/* Page 1 and the last page: one split (both edges cut the same 2 MiB), then none. */
	EXPECT_EQ(vma_unmap(mm, a + PAGE_SIZE, PAGE_SIZE), 0);
	EXPECT_EQ(vma_unmap(mm, a + HUGE_SIZE - PAGE_SIZE, 2 * PAGE_SIZE), 0);
	EXPECT_EQ(vma_count(mm), 3);
	unsigned bad_pages = 0;
	for (uintptr_t va = a; va < a + HUGE_SIZE; va += PAGE_SIZE) {
		bool gone = va == a + PAGE_SIZE || va == a + HUGE_SIZE - PAGE_SIZE;
		u64 v = 0;
		phys_addr_t got = as_pa(mm, va, &level);
		if (gone) {
			bad_pages += got != 0 || mm_fault(mm, va, FAULT_READ) != -EFAULT;
			continue;
		}
		bad_pages += got != pa + (va - a) || level != PT_LEVEL_PTE ||
			     user_read_u64(va, &v) || v != vma_page_value(va);
	}
	mm_switch(NULL);
	EXPECT_EQ(bad_pages, 0);
	/* The second 2 MiB was never faulted; its first page was unmapped with the split. */
	pt_count(mm, &c);
	EXPECT_EQ(c.pages_huge, 0);
	EXPECT_EQ(c.pages_4k, PT_ENTRIES - 2);
	EXPECT_EQ(c.tables, PT_TOP_LEVEL); /* one per level below the root: one PTE table */
	EXPECT_EQ(vma_unmap(mm, a, HUGE_SIZE), 0);
	EXPECT_TRUE(as_pa(mm, a, NULL) == 0);
	mm_destroy(mm);
	EXPECT_EQ(mm_bad_free_count(), bad);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(vma, oom_no_leak)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);

	/* The first map allocates the array: make that fail. */
	mm_inject_alloc_failures(0, 1);
	EXPECT_EQ(vma_map(mm, a, PAGE_SIZE, RW, 0), -ENOMEM);
	mm_inject_alloc_failures(0, 0);
	EXPECT_EQ(vma_count(mm), 0);
	EXPECT_EQ(vma_map(mm, a, 16 * PAGE_SIZE, RW, 0), 0);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);

	/* mm_create itself: no mm page, or no root table. */
	for (unsigned skip = 0; skip < 2; skip++) {
		mm_inject_alloc_failures(skip, 1);
		EXPECT_TRUE(mm_create() == NULL);
		mm_inject_alloc_failures(0, 0);
		EXPECT_EQ(as_free_bytes(), before);
	}
}

struct vma_concurrent {
	struct mm *mm;
	struct smp_sync start;
	atomic_t errors;
};

#define VMA_CONCURRENT_TOTAL 256 /* map/unmap pairs over all CPUs */

static void vma_concurrent_worker(void *arg)
{
	struct vma_concurrent *t = arg;
	unsigned cpu = smp_processor_id(), n = MAX(VMA_CONCURRENT_TOTAL / num_online_cpus(), 1u);
	uintptr_t base = as_slot(cpu);
	struct vma v;

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < n; i++) {
		uintptr_t va = base + (uintptr_t)(i % 8) * PAGE_SIZE;
		if (vma_map(t->mm, va, PAGE_SIZE, RW, 0) || !vma_lookup(t->mm, va, &v) ||
		    v.start != va || mm_fault(t->mm, va, FAULT_WRITE))
			atomic_inc(&t->errors);
		if (i % 8 == 7 && vma_unmap(t->mm, base, 8 * PAGE_SIZE))
			atomic_inc(&t->errors);
	}
}

TEST(vma, concurrent_map_unmap)
{
	static struct vma_concurrent t;
	u64 before = as_free_bytes();

	t = (struct vma_concurrent){0};
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(vma_concurrent_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	/* Each CPU left at most its last partial round mapped, all inside its own slot. */
	struct vma *v;
	read_lock(&t.mm->vma_lock);
	for (unsigned i = 0; (v = vma_next_locked(t.mm, &i)); i++)
		EXPECT_LT(v->end - ALIGN_DOWN(v->start, as_slot_size()), 8 * PAGE_SIZE + 1);
	read_unlock(&t.mm->vma_lock);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* ---- every CPU maps and unmaps at once, past the table's first growth ---- */

#define VMA_GROW_TOTAL 1024 /* single-page VMAs over all CPUs: the table grows twice */

static void vma_grow_worker(void *arg)
{
	struct vma_concurrent *t = arg;
	unsigned n = MAX(VMA_GROW_TOTAL / num_online_cpus(), 8u);
	uintptr_t base = as_slot(smp_processor_id());
	struct vma v;

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < n; i++)
		if (vma_map(t->mm, base + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, RW, 0))
			atomic_inc(&t->errors);
	/* A table grown under other CPUs' maps and unmaps lost none of this CPU's VMAs. */
	for (unsigned i = 0; i < n; i++) {
		uintptr_t va = base + (uintptr_t)i * 2 * PAGE_SIZE;
		if (!vma_lookup(t->mm, va, &v) || v.start != va || v.end != va + PAGE_SIZE)
			atomic_inc(&t->errors);
	}
	if (vma_unmap(t->mm, base, (size_t)n * 2 * PAGE_SIZE))
		atomic_inc(&t->errors);
}

TEST(vma, concurrent_maps_grow_the_table_and_keep_every_vma)
{
	static struct vma_concurrent t;
	u64 before = as_free_bytes();

	t = (struct vma_concurrent){0};
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(vma_grow_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(vma_count(t.mm), 0);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* Is va mapped in mm by a leaf user mode may use? */
static bool vma_test_user_leaf(struct mm *mm, uintptr_t va)
{
	pte_t pte;
	int level;
	return !pt_lookup(mm, va, &pte, &level) && pte_allows(pte, PROT_USER);
}

TEST(vma, prot_none_refuses_every_access_and_keeps_the_bytes)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	u64 v = 0;

	ASSERT_EQ(vma_map(mm, a, 2 * PAGE_SIZE, RW, 0), 0);
	mm_switch(mm);
	ASSERT_EQ(user_write_u64(a, 0x6e6f6e65), 0);
	mm_switch(NULL);
	phys_addr_t pa = as_pa(mm, a, NULL);

	EXPECT_EQ(vma_protect(mm, a, PAGE_SIZE, 0), 0);
	EXPECT_FALSE(vma_test_user_leaf(mm, a));
	EXPECT_EQ(mm_fault(mm, a, FAULT_READ), -EFAULT);
	EXPECT_EQ(mm_fault(mm, a + PAGE_SIZE, FAULT_WRITE), 0); /* the other page is untouched */
	EXPECT_EQ(vma_protect(mm, a, PAGE_SIZE, RW), 0);
	EXPECT_TRUE(vma_test_user_leaf(mm, a));
	EXPECT_EQ(as_pa(mm, a, NULL), pa);
	mm_switch(mm);
	EXPECT_EQ(user_read_u64(a, &v), 0);
	mm_switch(NULL);
	EXPECT_EQ(v, 0x6e6f6e65);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

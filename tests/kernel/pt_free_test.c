/*
 * Selftests for when an unmap's emptied page tables go (pt_free=, mm/pagewalk.c):
 * kept until the mm is destroyed (exit), or freed by the unmap as Linux's
 * free_pgtables() does (unmap). Either way the PTE tables go with the unmap and
 * the mm's destruction gives back every table page.
 */
#include "../../mm/address_space_internal.h"
#include "as_test.h"

#define PT_FREE_CYCLES 3

/* Tables above the PTE level on the way to one 2 MiB leaf: a PMD table (x86_64: and its PDPT). */
#define TABLES_ABOVE_PTE (PT_TOP_LEVEL - PT_LEVEL_PMD)

static void pt_free_run(enum pt_free_mode mode, bool huge)
{
	u64 before = as_free_bytes();
	struct pt_table_stats p0, p1, p2;
	struct pt_counts c;
	uintptr_t va = as_slot(3);
	bool keep = mode == PT_FREE_EXIT;

	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	mm_set_pt_free(mm, mode);
	pt_table_stats_sum(&p0);
	for (unsigned cycle = 0; cycle < PT_FREE_CYCLES; cycle++) {
		ASSERT_EQ(vma_map(mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE, huge ? 0 : VMA_NOHUGE),
			  0);
		ASSERT_EQ(mm_fault(mm, va, FAULT_WRITE), 0);
		pt_count(mm, &c);
		EXPECT_EQ(c.pages_huge + c.pages_4k, 1);
		EXPECT_EQ(c.tables, TABLES_ABOVE_PTE + (huge ? 0 : 1));
		ASSERT_EQ(vma_unmap(mm, va, HUGE_SIZE), 0);
		pt_count(mm, &c);
		EXPECT_EQ(c.pages_huge + c.pages_4k, 0);
		/* The PTE table always goes; the ones above it stay only when kept. */
		EXPECT_EQ(c.tables, keep ? TABLES_ABOVE_PTE : 0);
	}
	pt_table_stats_sum(&p1);
	/* Kept tables are made once; freed ones again each cycle. */
	u64 per_cycle = (keep ? 0 : TABLES_ABOVE_PTE) + (huge ? 0 : 1);
	EXPECT_EQ(p1.allocated - p0.allocated,
		  (keep ? TABLES_ABOVE_PTE : 0) + PT_FREE_CYCLES * per_cycle);
	mm_destroy(mm);
	pt_table_stats_sum(&p2);
	EXPECT_EQ(p2.allocated - p0.allocated + 1, p2.freed - p0.freed); /* and the root */
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(pt_free, exit_keeps_emptied_pmd_tables_until_the_mm_goes)
{
	pt_free_run(PT_FREE_EXIT, true);
	pt_free_run(PT_FREE_EXIT, false);
}

TEST(pt_free, unmap_frees_emptied_pmd_tables_as_linux_does)
{
	pt_free_run(PT_FREE_UNMAP, true);
	pt_free_run(PT_FREE_UNMAP, false);
}

/* A fork copies its parent's choice. */
TEST(pt_free, fork_keeps_the_parents_mode)
{
	for (unsigned m = 0; m < 2; m++) {
		enum pt_free_mode mode = m ? PT_FREE_UNMAP : PT_FREE_EXIT;
		struct mm *mm = mm_create();
		ASSERT_TRUE(mm != NULL);
		mm_set_pt_free(mm, mode);
		int err = 0;
		struct mm *child = mm_fork(mm, &err);
		ASSERT_TRUE(child != NULL);
		EXPECT_EQ(child->pt_free, mode);
		mm_destroy(child);
		mm_destroy(mm);
	}
}

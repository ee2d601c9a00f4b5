/*
 * Two faults installing the same entry (mm/fault.c, mm/pagewalk.c): one is parked
 * by a race point after it saw the entry empty and allocated what to put there,
 * before it takes the entry's lock (or tries its cmpxchg), while the other fault
 * fills the entry on another CPU. The parked one must find the entry filled,
 * free its own allocation and use what is there: the other fault's mapping stays,
 * the resident counts match the tables, and every page comes back.
 *
 * The second fault waits for nothing the parked one holds: the parked one holds
 * its VMA for reading (so does the second) and no page-table lock yet.
 */
#include "as_test.h"
#include "race_test_util.h"

struct fault_race {
	struct mm *mm;
	uintptr_t racer_va, change_va;
	int racer_ret, change_ret;
	phys_addr_t change_pa; /* what change_va maps to once the second fault returned */
	int change_level;
};

static void fault_racer(void *arg)
{
	struct fault_race *f = arg;
	f->racer_ret = mm_fault(f->mm, f->racer_va, FAULT_WRITE);
}

static void fault_change(void *arg)
{
	struct fault_race *f = arg;
	f->change_ret = mm_fault(f->mm, f->change_va, FAULT_WRITE);
	f->change_pa = as_pa(f->mm, f->change_va, &f->change_level);
}

/*
 * In an mm of ptlock mode: map [base, base + len) with flags, fault prefault (the
 * tables above the contested entry; 0: none), then race a fault of racer_va
 * parked at point against a fault of change_va.
 */
static void fault_race_run(enum ptlock_mode mode, const char *point, uintptr_t base, size_t len,
			   unsigned flags, uintptr_t prefault, uintptr_t racer_va,
			   uintptr_t change_va)
{
	u64 before = as_free_bytes();
	struct fault_race f = {.racer_va = racer_va, .change_va = change_va};
	f.mm = mm_create_modes(mode, VMA_LOOKUP_RCU);
	ASSERT_TRUE(f.mm != NULL);
	ASSERT_EQ(vma_map(f.mm, base, len, PROT_READ | PROT_WRITE, flags), 0);
	if (prefault)
		ASSERT_EQ(mm_fault(f.mm, prefault, FAULT_WRITE), 0);

	struct race race = {
	    .point = point, .key = f.mm, .racer = fault_racer, .change = fault_change, .arg = &f};
	if (race_run(&race)) {
		EXPECT_EQ(f.change_ret, 0);
		EXPECT_EQ(f.racer_ret, 0);
		EXPECT_NE(f.change_pa, 0);
		/* The second fault's mapping is still the one there. */
		int level;
		EXPECT_EQ(as_pa(f.mm, change_va, &level), f.change_pa);
		EXPECT_EQ(level, f.change_level);
		EXPECT_NE(as_pa(f.mm, racer_va, NULL), 0);
		as_expect_rss_matches(f.mm);
	}
	mm_destroy(f.mm);
	/* The parked fault's allocation went back, and no page was lost under a replaced entry. */
	EXPECT_EQ(as_free_bytes(), before);
}

/*
 * The PUD entry over a fresh 1 GiB, filled by cmpxchg (ptlock=split) or under
 * mm->page_table_lock after a recheck (ptlock=mm). A page in the GiB below has
 * made every level above the PUD, so the parked fault allocates at the PUD first.
 */
TEST(fault_race, pud_entry_filled_meanwhile_is_kept)
{
	/* The GiB above slot 0's: slot 1 itself shares it when slots shrink (as_slot()). */
	uintptr_t gib = ALIGN_UP(as_slot(0) + 1, GiB);
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		fault_race_run(as_ptlock_modes[m], "pt.populate_entry", as_slot(0),
			       gib + HUGE_SIZE - as_slot(0), VMA_NOHUGE, as_slot(0), gib,
			       gib + PAGE_SIZE);
}

/* A PMD entry in a PMD table that exists: the PTE table under it, made by the other fault. */
TEST(fault_race, pte_table_filled_meanwhile_is_kept)
{
	uintptr_t base = as_slot(1);
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		fault_race_run(as_ptlock_modes[m], "fault.pte_table_install", base, 2 * HUGE_SIZE,
			       VMA_NOHUGE, base + HUGE_SIZE, base, base + PAGE_SIZE);
}

/* A PTE in a PTE table that exists: both faults want the same 4 KiB page. */
TEST(fault_race, small_page_filled_meanwhile_is_kept)
{
	uintptr_t base = as_slot(1);
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		fault_race_run(as_ptlock_modes[m], "fault.small_install", base, HUGE_SIZE,
			       VMA_NOHUGE, base + PAGE_SIZE, base, base);
}

/* A PMD entry both faults want a 2 MiB page in: the other fault's block stays mapped. */
TEST(fault_race, huge_page_filled_meanwhile_is_kept)
{
	uintptr_t base = as_slot(1);
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		fault_race_run(as_ptlock_modes[m], "fault.huge_install", base, 2 * HUGE_SIZE, 0,
			       base + HUGE_SIZE, base, base + PAGE_SIZE);
}

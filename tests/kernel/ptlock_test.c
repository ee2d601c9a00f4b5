/*
 * Page-table lock selftests. With split locks, a CPU holding one PMD table's lock
 * does not stop a fault under another PMD table (another 1 GiB), but does stop
 * one under the same table; with the mm-wide lock it stops both. The default mode
 * follows ptlock= on the command line. (Correctness of faults under each mode is
 * in the fault suite, which runs its concurrency tests in both.)
 */
#include <grace/cmdline.h>
#include <grace/string.h>
#include <grace/time.h>
#include "as_test.h"

/* How long a blocked fault is given to (wrongly) get through, and a free one to finish. */
#define PTLOCK_BLOCKED_NS (50 * NSEC_PER_MSEC)
#define PTLOCK_FREE_NS (20 * NSEC_PER_SEC) /* 64 vCPUs on 2 host cores: be patient */

struct ptlock_test {
	struct mm *mm;
	uintptr_t held_va, other_va; /* held_va's PMD table lock is held; other_va in another GiB */
	u32 locked, other_done, same_done, release;
	s32 other_ret, same_ret;
};

static void ptlock_worker(void *arg)
{
	struct ptlock_test *t = arg;
	unsigned cpu = smp_processor_id();
	unsigned first = cpumask_next(&cpu_online_mask, 0);
	unsigned second = cpumask_next(&cpu_online_mask, first + 1);
	unsigned third = cpumask_next(&cpu_online_mask, second + 1);

	if (cpu == first) {
		int err = 0;
		pte_t *pmd_table = pt_pmd_table(t->mm, t->held_va, &err);
		EXPECT_TRUE(pmd_table != NULL);
		if (!pmd_table) {
			smp_store_release(&t->locked, 2);
			return;
		}
		spinlock_t *ptl = pt_lock(t->mm, pmd_table);
		smp_store_release(&t->locked, 1);
		while (!smp_load_acquire(&t->release))
			cpu_relax();
		spin_unlock(ptl);
	} else if (cpu == second) {
		while (!smp_load_acquire(&t->locked))
			cpu_relax();
		t->other_ret = mm_fault(t->mm, t->other_va, FAULT_WRITE);
		smp_store_release(&t->other_done, 1);
	} else if (cpu == third) {
		while (!smp_load_acquire(&t->locked))
			cpu_relax();
		t->same_ret = mm_fault(t->mm, t->held_va, FAULT_WRITE);
		smp_store_release(&t->same_done, 1);
	}
}

/* Wait until *flag is set or ns pass; was it set? */
static bool wait_flag(u32 *flag, u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	while (!smp_load_acquire(flag))
		if (arch_clock_ns() > end)
			return false;
	return true;
}

/* The boot CPU's side, run while the workers wait: it decides when the holder lets go. */
struct ptlock_observed {
	bool other_while_held, same_while_held;
};

static struct ptlock_test pt;
static struct ptlock_observed seen;

static void ptlock_observer(void *arg)
{
	/* Runs on the last online CPU, which is none of first/second/third at SMP >= 4. */
	if (smp_processor_id() != (unsigned)(uintptr_t)arg)
		return;
	while (!smp_load_acquire(&pt.locked))
		cpu_relax();
	bool split = pt.mm->ptlock == PTLOCK_SPLIT;
	seen.other_while_held =
	    wait_flag(&pt.other_done, split ? PTLOCK_FREE_NS : PTLOCK_BLOCKED_NS);
	seen.same_while_held = wait_flag(&pt.same_done, PTLOCK_BLOCKED_NS);
	smp_store_release(&pt.release, 1);
}

static void ptlock_run(void *arg)
{
	ptlock_worker(&pt);
	ptlock_observer(arg);
}

TEST(ptlock, split_pmd_locks_are_independent)
{
	unsigned cpu, last = 0, n = 0;

	for_each_online_cpu(cpu) {
		last = cpu;
		n++;
	}
	if (n < 4) {
		test_skip("needs 4 CPUs");
		return;
	}
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++) {
		enum ptlock_mode mode = as_ptlock_modes[m];
		u64 before = mm_free_bytes();
		pt = (struct ptlock_test){.held_va = as_slot(0), .other_va = as_slot(1)};
		seen = (struct ptlock_observed){0};
		pt.mm = mm_create_ptlock(mode);
		ASSERT_TRUE(pt.mm != NULL);
		ASSERT_EQ(vma_map(pt.mm, pt.held_va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
		ASSERT_EQ(vma_map(pt.mm, pt.other_va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
		smp_run_all(ptlock_run, (void *)(uintptr_t)last);

		/* Split: the other GiB's fault got through under the held lock; mm-wide: it waited. */
		EXPECT_EQ(seen.other_while_held, mode == PTLOCK_SPLIT);
		/* Under the held table itself, it waits in both modes. */
		EXPECT_FALSE(seen.same_while_held);
		EXPECT_EQ(pt.other_ret, 0);
		EXPECT_EQ(pt.same_ret, 0);
		mm_destroy(pt.mm);
		EXPECT_EQ(mm_free_bytes(), before);
	}
}

TEST(ptlock, default_follows_cmdline)
{
	const char *v = cmdline_get("ptlock");
	enum ptlock_mode want = v && !strcmp(v, "mm") ? PTLOCK_MM : PTLOCK_SPLIT;
	struct mm *mm = mm_create();

	ASSERT_TRUE(mm != NULL);
	EXPECT_EQ(mm_default_ptlock(), want);
	EXPECT_EQ(mm->ptlock, want);
	mm_destroy(mm);
	mm = mm_create_ptlock(want == PTLOCK_MM ? PTLOCK_SPLIT : PTLOCK_MM);
	ASSERT_TRUE(mm != NULL);
	EXPECT_NE(mm->ptlock, want);
	mm_destroy(mm);
	EXPECT_TRUE(mm_create_ptlock((enum ptlock_mode)7) == NULL);
}

/* The lock a fault takes is the PMD table's own (split) or the mm's. */
TEST(ptlock, lock_of_each_table)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++) {
		struct mm *mm = mm_create_ptlock(as_ptlock_modes[m]);
		int err = 0;
		ASSERT_TRUE(mm != NULL);
		pte_t *a = pt_pmd_table(mm, as_slot(0), &err);
		pte_t *b = pt_pmd_table(mm, as_slot(1), &err);
		ASSERT_TRUE(a && b);
		EXPECT_TRUE(a != b);
		if (mm->ptlock == PTLOCK_SPLIT) {
			EXPECT_TRUE(pt_lockptr(mm, a) == &virt_to_page(a)->ptl);
			EXPECT_TRUE(pt_lockptr(mm, a) != pt_lockptr(mm, b));
		} else {
			EXPECT_TRUE(pt_lockptr(mm, a) == &mm->page_table_lock);
			EXPECT_TRUE(pt_lockptr(mm, b) == &mm->page_table_lock);
		}
		mm_destroy(mm);
	}
}

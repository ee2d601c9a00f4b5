/*
 * TLB shootdown selftests: after an unmap, no CPU that ran the mm can still read
 * the old pages through its TLB; the flush reaches exactly the CPUs that run the
 * mm, with one IPI each however many pages the unmap covered; destroying an mm
 * moves CPUs still on it off it.
 *
 * Half the CPUs run the mm and the others never do. QEMU's software TLB keeps
 * a translation until it is flushed, so a missing shootdown shows up as a read
 * that succeeds after the unmap.
 */
#include <grace/tlb.h>
#include <asm/cpu.h>
#include "as_test.h"

#define TLB_TEST_SMALL_PAGES 40 /* more than TLB_FLUSH_MAX_PAGES: a full flush */

struct tlb_test {
	struct mm *mm;
	uintptr_t small, huge; /* a run of 4 KiB pages and one 2 MiB page */
	unsigned unmapper;     /* the CPU that unmaps (the boot CPU) */
	u32 ready, unmapped;   /* CPUs with warm TLBs; set once the unmap returned */
	u32 errors, stale, runners;
	u64 ipis[MAX_CPUS]; /* tlb_flush_ipis() before the unmap */
	s32 unmap_ret;
};

/* The CPUs of the unmapper's parity run the mm (the boot CPU is not always CPU 0). */
static unsigned tlb_parity;

static bool tlb_test_runs_mm(unsigned cpu)
{
	return cpu % 2 == tlb_parity;
}

/* Read every page inside one open user-access window (see below); false on a failed read. */
static bool tlb_read_all(struct tlb_test *t, bool expect_fault)
{
	bool ok = true;
	u64 v;
	for (unsigned i = 0; i < TLB_TEST_SMALL_PAGES; i++) {
		int ret = probe_read_u64((void *)(t->small + (uintptr_t)i * PAGE_SIZE), &v);
		ok &= expect_fault ? ret == -EFAULT : ret == 0 && v == i + 1;
	}
	int ret = probe_read_u64((void *)(t->huge + PAGE_SIZE), &v);
	ok &= expect_fault ? ret == -EFAULT : ret == 0 && v == 0x4855474555ULL;
	return ok;
}

/*
 * The CPUs of one parity enter the mm and read every page, filling their TLBs, then wait
 * for the unmap and read again: every read must fault. The window stays open from
 * the first read to the last because QEMU's RISC-V flushes its whole TLB whenever
 * sstatus.SUM changes: closing it in between would hide a missing shootdown. (Any
 * interrupt toggles SUM too, so on RISC-V it is the IPI itself that is tested.)
 */
static void tlb_worker(void *arg)
{
	struct tlb_test *t = arg;
	unsigned cpu = smp_processor_id(), c;

	if (!tlb_test_runs_mm(cpu))
		return;
	mm_switch(t->mm);
	arch_user_access_begin();
	if (!tlb_read_all(t, false))
		__atomic_fetch_add(&t->errors, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->ready, 1, __ATOMIC_RELEASE);
	if (cpu == t->unmapper) {
		while (__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) < t->runners)
			cpu_relax();
		for_each_online_cpu(c)
			t->ipis[c] = tlb_flush_ipis(c);
		/* One unmap covering both ranges: many pages, a 2 MiB page and freed tables. */
		t->unmap_ret = vma_unmap(t->mm, t->small, t->huge + HUGE_SIZE - t->small);
		smp_store_release(&t->unmapped, 1);
	}
	while (!smp_load_acquire(&t->unmapped))
		cpu_relax();
	if (!tlb_read_all(t, true))
		__atomic_fetch_add(&t->stale, 1, __ATOMIC_RELAXED);
	arch_user_access_end();
	mm_switch(NULL);
}

TEST(tlb, stale_mapping_flushed_after_unmap)
{
	static struct tlb_test t;
	unsigned cpu, self = smp_processor_id();
	u64 before = mm_free_bytes();

	t = (struct tlb_test){.small = as_slot(0), .huge = as_slot(1), .unmapper = self};
	tlb_parity = self % 2;
	for_each_online_cpu(cpu)
		t.runners += tlb_test_runs_mm(cpu);
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	ASSERT_EQ(
	    vma_map(t.mm, t.small, TLB_TEST_SMALL_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	ASSERT_EQ(vma_map(t.mm, t.huge, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	mm_switch(t.mm);
	for (unsigned i = 0; i < TLB_TEST_SMALL_PAGES; i++)
		ASSERT_EQ(user_write_u64(t.small + (uintptr_t)i * PAGE_SIZE, i + 1), 0);
	ASSERT_EQ(user_write_u64(t.huge + PAGE_SIZE, 0x4855474555ULL), 0);
	mm_switch(NULL);

	smp_run_all(tlb_worker, &t);
	EXPECT_EQ(t.errors, 0);
	EXPECT_EQ(t.unmap_ret, 0);
	EXPECT_EQ(t.stale, 0);
	for_each_online_cpu(cpu) {
		u64 got = tlb_flush_ipis(cpu) - t.ipis[cpu];
		/* Exactly the other CPUs on the mm, once each, for all those pages. */
		u64 want = cpu != self && tlb_test_runs_mm(cpu) ? 1 : 0;
		if (got != want)
			EXPECT_EQ(got * 1000 + cpu,
				  want * 1000 + cpu); /* names the CPU in the failure */
	}
	EXPECT_EQ(cpumask_weight(&t.mm->cpus), 0);
	mm_destroy(t.mm);
	EXPECT_EQ(mm_free_bytes(), before);
}

/* Unmaps by several CPUs at once, each in its own slot, while all of them run the mm. */
struct tlb_concurrent {
	struct mm *mm;
	struct smp_sync start;
	u32 errors;
};

#define TLB_CONCURRENT_TOTAL 32 /* map/touch/unmap rounds over all CPUs */

static void tlb_concurrent_worker(void *arg)
{
	struct tlb_concurrent *t = arg;
	unsigned cpu = smp_processor_id();
	uintptr_t va = as_slot(cpu);
	u64 v;

	mm_switch(t->mm);
	smp_sync_wait(&t->start, num_online_cpus());
	unsigned rounds = MAX(TLB_CONCURRENT_TOTAL / num_online_cpus(), 1u);
	for (unsigned r = 0; r < rounds; r++) {
		if (vma_map(t->mm, va, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, 0) ||
		    user_write_u64(va, cpu * 100 + r) || user_read_u64(va, &v) ||
		    v != cpu * 100 + r || vma_unmap(t->mm, va, 4 * PAGE_SIZE) ||
		    user_read_u64(va, &v) != -EFAULT)
			__atomic_fetch_add(&t->errors, 1, __ATOMIC_RELAXED);
	}
	mm_switch(NULL);
}

TEST(tlb, concurrent_unmaps)
{
	static struct tlb_concurrent t;
	u64 before = mm_free_bytes();

	t = (struct tlb_concurrent){0};
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(tlb_concurrent_worker, &t);
	EXPECT_EQ(t.errors, 0);
	mm_destroy(t.mm);
	EXPECT_EQ(mm_free_bytes(), before);
}

static void tlb_enter_worker(void *arg)
{
	if (smp_processor_id() % 2)
		mm_switch(arg);
}

static void tlb_left_worker(void *arg)
{
	EXPECT_TRUE(current_mm() == NULL);
}

TEST(tlb, destroy_moves_cpus_off)
{
	u64 before = mm_free_bytes();
	struct mm *mm = mm_create();

	ASSERT_TRUE(mm != NULL);
	ASSERT_EQ(vma_map(mm, as_slot(0), PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	ASSERT_EQ(mm_fault(mm, as_slot(0), FAULT_WRITE), 0);
	/* The odd CPUs enter and stay: a misuse mm_destroy must survive. */
	smp_run_all(tlb_enter_worker, mm);
	EXPECT_EQ(cpumask_weight(&mm->cpus), num_online_cpus() / 2);
	mm_destroy(mm);
	smp_run_all(tlb_left_worker, NULL);
	EXPECT_EQ(mm_free_bytes(), before);
}

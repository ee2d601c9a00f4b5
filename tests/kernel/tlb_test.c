/*
 * TLB shootdown selftests: CPUs that run the mm keep reading its pages while one
 * CPU unmaps them, and once vma_unmap() has returned the next read of each page on
 * every CPU must fault; the flush reaches exactly the CPUs that run the mm (half of
 * them in one test, all in another), with one IPI each however many pages the
 * unmap covered; several CPUs unmapping pages of one mm at once leave no CPU
 * reading any of them; destroying an mm moves CPUs still on it off it.
 *
 * QEMU's software TLB keeps a translation until it is flushed, so a missing
 * shootdown shows up as a read that succeeds after the unmap returned.
 */
#include <grace/tlb.h>
#include <asm/cpu.h>
#include "as_test.h"

#define TLB_TEST_SMALL_PAGES 40			  /* more than TLB_FLUSH_MAX_PAGES: a full flush */
#define TLB_TEST_PAGES (TLB_TEST_SMALL_PAGES + 1) /* and the 2 MiB page */
#define TLB_TEST_HUGE_VALUE 0x4855474555ULL

struct tlb_test {
	struct mm *mm;
	uintptr_t small, huge; /* a run of 4 KiB pages and one 2 MiB page */
	unsigned unmapper;     /* the CPU that unmaps (the boot CPU) */
	bool all;	       /* every CPU runs the mm; else those of the unmapper's parity */
	atomic_t ready;	       /* CPUs with warm TLBs */
	u32 unmapped;	       /* set once the unmap returned */
	atomic_t errors;
	u32 runners;
	atomic_t stale;	    /* reads of the old contents after the unmap returned */
	u64 ipis[MAX_CPUS]; /* tlb_flush_ipis() before the unmap */
	s32 unmap_ret;
};

/* The CPUs of the unmapper's parity run the mm (the boot CPU is not always CPU 0). */
static unsigned tlb_parity;

static bool tlb_test_runs_mm(const struct tlb_test *t, unsigned cpu)
{
	return t->all || cpu % 2 == tlb_parity;
}

/* Read page i (the last is the 2 MiB page): 0 and *v, or -EFAULT. User access window open. */
static int tlb_read_page(const struct tlb_test *t, unsigned i, u64 *v)
{
	if (i == TLB_TEST_SMALL_PAGES)
		return probe_read_u64((void *)(t->huge + PAGE_SIZE), v);
	return probe_read_u64((void *)(t->small + (uintptr_t)i * PAGE_SIZE), v);
}

static u64 tlb_page_value(unsigned i)
{
	return i == TLB_TEST_SMALL_PAGES ? TLB_TEST_HUGE_VALUE : i + 1;
}

/*
 * Read every page over and over while the unmap runs; a page is done when its read
 * faults. Once the unmap has returned (the flag, read before the pass), the next
 * read of every page left must fault: a read that still gets the old contents went
 * through a translation the shootdown should have removed.
 */
static void tlb_read_until_gone(struct tlb_test *t)
{
	u64 left = (1ULL << TLB_TEST_PAGES) - 1;

	while (left) {
		bool after = smp_load_acquire(&t->unmapped);
		for (unsigned i = 0; i < TLB_TEST_PAGES; i++) {
			u64 v;
			if (!(left & (1ULL << i)))
				continue;
			int ret = tlb_read_page(t, i, &v);
			if (ret == -EFAULT || after)
				left &= ~(1ULL << i);
			if (ret == 0 && after)
				atomic_inc(&t->stale);
			else if (ret == 0 && v != tlb_page_value(i))
				atomic_inc(&t->errors);
		}
	}
}

/*
 * The CPUs that run the mm read every page, filling their TLBs, then keep reading
 * while the unmapper unmaps. The window stays open from the first read to the last
 * because QEMU's RISC-V flushes its whole TLB whenever sstatus.SUM changes: closing
 * it in between would hide a missing shootdown. (Any interrupt toggles SUM too, so
 * on RISC-V it is the IPI itself that is tested.)
 */
static void tlb_worker(void *arg)
{
	struct tlb_test *t = arg;
	unsigned cpu = smp_processor_id(), c;

	if (!tlb_test_runs_mm(t, cpu))
		return;
	mm_switch(t->mm);
	arch_user_access_begin();
	for (unsigned i = 0; i < TLB_TEST_PAGES; i++) {
		u64 v;
		if (tlb_read_page(t, i, &v) || v != tlb_page_value(i))
			atomic_inc(&t->errors);
	}
	atomic_fetch_add_release(&t->ready, 1);
	if (cpu == t->unmapper) {
		while ((u32)atomic_read_acquire(&t->ready) < t->runners)
			cpu_relax();
		for_each_online_cpu(c)
			t->ipis[c] = tlb_flush_ipis(c);
		/* One unmap covering both ranges: many pages, a 2 MiB page and freed tables. */
		t->unmap_ret = vma_unmap(t->mm, t->small, t->huge + HUGE_SIZE - t->small);
		smp_store_release(&t->unmapped, 1);
	}
	tlb_read_until_gone(t);
	arch_user_access_end();
	mm_switch(NULL);
}

static void tlb_unmap_run(bool all)
{
	static struct tlb_test t;
	unsigned cpu, self = smp_processor_id();
	u64 before = as_free_bytes();

	t = (struct tlb_test){
	    .small = as_slot(0), .huge = as_slot(1), .unmapper = self, .all = all};
	tlb_parity = self % 2;
	for_each_online_cpu(cpu)
		t.runners += tlb_test_runs_mm(&t, cpu);
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	ASSERT_EQ(
	    vma_map(t.mm, t.small, TLB_TEST_SMALL_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	ASSERT_EQ(vma_map(t.mm, t.huge, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	mm_switch(t.mm);
	for (unsigned i = 0; i < TLB_TEST_SMALL_PAGES; i++)
		ASSERT_EQ(user_write_u64(t.small + (uintptr_t)i * PAGE_SIZE, tlb_page_value(i)), 0);
	ASSERT_EQ(user_write_u64(t.huge + PAGE_SIZE, TLB_TEST_HUGE_VALUE), 0);
	mm_switch(NULL);

	smp_run_all(tlb_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(t.unmap_ret, 0);
	EXPECT_EQ(atomic_read(&t.stale), 0);
	for_each_online_cpu(cpu) {
		u64 got = tlb_flush_ipis(cpu) - t.ipis[cpu];
		/* Exactly the other CPUs on the mm, once each, for all those pages. */
		u64 want = cpu != self && tlb_test_runs_mm(&t, cpu) ? 1 : 0;
		if (got != want)
			EXPECT_EQ(got * 1000 + cpu,
				  want * 1000 + cpu); /* names the CPU in the failure */
	}
	EXPECT_EQ(cpumask_weight(&t.mm->cpus), 0);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* Half the CPUs run the mm: only they are asked to flush. */
TEST(tlb, stale_mapping_flushed_after_unmap)
{
	tlb_unmap_run(false);
}

TEST(tlb, every_reader_faults_on_its_next_access_once_unmap_returns)
{
	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	tlb_unmap_run(true);
}

/*
 * Several CPUs unmap a page each, all of one PTE table of one mm, at once, while
 * every CPU runs the mm and reads every one of those pages: once an unmapper's
 * vma_unmap() returned, no CPU may read its page again. The unmaps serialise on
 * the VMA lock only while they clear entries; their shootdowns (one page each by
 * address, or a full flush from the one that leaves the PTE table empty) overlap.
 */
#define TLB_CONCURRENT_UNMAPPERS 8
/* Each round its own pages, so a round's mapping never meets the last round's readers. */
#define TLB_CONCURRENT_ROUNDS 2

struct tlb_concurrent {
	struct mm *mm;
	uintptr_t base; /* k's page in round r: tlb_concurrent_va(t, k, r) */
	unsigned unmappers;
	s32 rank[MAX_CPUS]; /* each CPU's k, or -1 if it only reads */
	struct smp_sync sync[TLB_CONCURRENT_ROUNDS][2];
	u32 unmapped[TLB_CONCURRENT_UNMAPPERS]; /* round + 1, once k's unmap returned */
	atomic_t errors, stale;
};

static u64 tlb_concurrent_value(unsigned k, unsigned round)
{
	return 0x746c6200000000ULL | (u64)k << 16 | round;
}

static uintptr_t tlb_concurrent_va(const struct tlb_concurrent *t, unsigned k, unsigned round)
{
	return t->base + (uintptr_t)(round * TLB_CONCURRENT_UNMAPPERS + k) * PAGE_SIZE;
}

/* Read the unmappers' pages until each faults; after its unmap returned, it must. */
static void tlb_concurrent_read_until_gone(struct tlb_concurrent *t, unsigned round)
{
	u32 left = (1u << t->unmappers) - 1;

	while (left) {
		for (unsigned k = 0; k < t->unmappers; k++) {
			u64 v;
			if (!(left & (1u << k)))
				continue;
			bool after = smp_load_acquire(&t->unmapped[k]) == round + 1;
			int ret = probe_read_u64((void *)tlb_concurrent_va(t, k, round), &v);
			if (ret == -EFAULT || after)
				left &= ~(1u << k);
			if (ret == 0 && after)
				atomic_inc(&t->stale);
			else if (ret == 0 && v != tlb_concurrent_value(k, round))
				atomic_inc(&t->errors);
		}
	}
}

static void tlb_concurrent_worker(void *arg)
{
	struct tlb_concurrent *t = arg;
	unsigned cpu = smp_processor_id(), n = num_online_cpus();
	s32 k = t->rank[cpu];

	mm_switch(t->mm);
	for (unsigned r = 0; r < TLB_CONCURRENT_ROUNDS; r++) {
		uintptr_t va = k >= 0 ? tlb_concurrent_va(t, (unsigned)k, r) : 0;
		if (k >= 0 && (vma_map(t->mm, va, PAGE_SIZE, PROT_READ | PROT_WRITE, 0) ||
			       user_write_u64(va, tlb_concurrent_value((unsigned)k, r))))
			atomic_inc(&t->errors);
		smp_sync_wait(&t->sync[r][0], n);
		/* One window from the first read to the last (see tlb_worker). */
		arch_user_access_begin();
		for (unsigned j = 0; j < t->unmappers; j++) {
			u64 v;
			if (probe_read_u64((void *)tlb_concurrent_va(t, j, r), &v) ||
			    v != tlb_concurrent_value(j, r))
				atomic_inc(&t->errors);
		}
		smp_sync_wait(&t->sync[r][1], n);
		if (k >= 0) {
			if (vma_unmap(t->mm, va, PAGE_SIZE))
				atomic_inc(&t->errors);
			smp_store_release(&t->unmapped[k], r + 1);
		}
		tlb_concurrent_read_until_gone(t, r);
		arch_user_access_end();
	}
	mm_switch(NULL);
}

TEST(tlb, concurrent_unmaps_leave_no_cpu_reading_an_unmapped_page)
{
	static struct tlb_concurrent t;
	u64 before = as_free_bytes();
	unsigned cpu;

	t = (struct tlb_concurrent){.base = as_slot(0)};
	for_each_online_cpu(cpu)
		t.rank[cpu] = t.unmappers < TLB_CONCURRENT_UNMAPPERS ? (s32)t.unmappers++ : -1;
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(tlb_concurrent_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.stale), 0);
	struct pt_counts c;
	pt_count(t.mm, &c);
	EXPECT_EQ(c.pages_4k, 0);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

static void tlb_enter_worker(void *arg)
{
	if (smp_online_index(smp_processor_id()) % 2) /* every other online CPU */
		mm_switch(arg);
}

static void tlb_left_worker(void *arg)
{
	EXPECT_TRUE(current_mm() == NULL);
}

TEST(tlb, destroy_moves_cpus_off)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();

	ASSERT_TRUE(mm != NULL);
	ASSERT_EQ(vma_map(mm, as_slot(0), PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	ASSERT_EQ(mm_fault(mm, as_slot(0), FAULT_WRITE), 0);
	/* The odd CPUs enter and stay: a misuse mm_destroy must survive. */
	smp_run_all(tlb_enter_worker, mm);
	EXPECT_EQ(cpumask_weight(&mm->cpus), num_online_cpus() / 2);
	mm_destroy(mm);
	smp_run_all(tlb_left_worker, NULL);
	EXPECT_EQ(as_free_bytes(), before);
}

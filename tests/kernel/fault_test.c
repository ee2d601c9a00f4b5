/*
 * Page-fault selftests: first touch of each CPU's own region and of shared pages
 * from every CPU at once (in both page-table lock modes), huge pages where the
 * VMA allows them, zeroed pages, faults after unmap, -EFAULT outside a VMA and
 * for writes to a read-only one, -ENOMEM without leaks, and node-local memory,
 * 2 MiB pages included. Work is sized by a fixed total, split over the CPUs.
 */
#include <grace/numa.h>
#include <grace/printk.h>
#include "../../mm/address_space_internal.h"
#include "as_test.h"

#define FAULT_TOTAL_PAGES 1024 /* 4 KiB pages first-touched over all CPUs (4 MiB) */
#define FAULT_SHARED_PAGES 16  /* pages every CPU touches at once */
#define FAULT_HUGE_CPUS 8      /* CPUs that each allocate a 2 MiB page in the huge tests */

static u64 tag(unsigned cpu, u64 i)
{
	return 0x6661756c74000000ULL ^ ((u64)cpu << 32) ^ i;
}

/* ---- every CPU first-touches its own region ---- */

struct own_region {
	struct mm *mm;
	struct smp_sync start;
	unsigned pages; /* per CPU */
	atomic_t errors;
};

static void own_region_worker(void *arg)
{
	struct own_region *t = arg;
	unsigned cpu = smp_processor_id();
	uintptr_t base = as_slot(cpu);

	mm_switch(t->mm);
	int err =
	    vma_map(t->mm, base, (size_t)t->pages * PAGE_SIZE, PROT_READ | PROT_WRITE, VMA_NOHUGE);
	EXPECT_EQ(err, 0);
	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; !err && i < t->pages; i++)
		if (user_write_u64(base + (uintptr_t)i * PAGE_SIZE + 8 * (i % 512), tag(cpu, i)))
			atomic_inc(&t->errors);
	for (unsigned i = 0; !err && i < t->pages; i++) {
		u64 v = 0;
		if (user_read_u64(base + (uintptr_t)i * PAGE_SIZE + 8 * (i % 512), &v) ||
		    v != tag(cpu, i))
			atomic_inc(&t->errors);
	}
	mm_switch(NULL);
}

/* Move pa[i] down the max-heap pa[0..n) until both children are smaller. */
static void sift_down(phys_addr_t *pa, unsigned i, unsigned n)
{
	for (unsigned child; (child = 2 * i + 1) < n; i = child) {
		if (child + 1 < n && pa[child + 1] > pa[child])
			child++;
		if (pa[i] >= pa[child])
			return;
		phys_addr_t v = pa[i];
		pa[i] = pa[child];
		pa[child] = v;
	}
}

/* Heapsort: at 255 CPUs the arrays hold 16,000 addresses, too many to sort in n^2. */
static void sort_pas(phys_addr_t *pa, unsigned n)
{
	for (unsigned i = n / 2; i-- > 0;)
		sift_down(pa, i, n);
	for (unsigned end = n; end-- > 1;) {
		phys_addr_t v = pa[0];
		pa[0] = pa[end];
		pa[end] = v;
		sift_down(pa, 0, end);
	}
}

TEST(fault, own_region_first_touch)
{
	unsigned cpus = num_online_cpus();
	static struct own_region t;

	for (unsigned m = 0; m < ARRAY_SIZE(as_modes); m++) {
		u64 before = as_free_bytes();
		t = (struct own_region){.pages = MAX(FAULT_TOTAL_PAGES / cpus, 1u)};
		t.mm = mm_create_modes(as_modes[m].ptlock, as_modes[m].lookup);
		ASSERT_TRUE(t.mm != NULL);
		smp_run_all(own_region_worker, &t);
		EXPECT_EQ(atomic_read(&t.errors), 0);

		/* Every page mapped exactly once, and no two addresses share a page. */
		struct pt_counts c;
		pt_count(t.mm, &c);
		EXPECT_EQ(c.pages_4k, (u64)t.pages * cpus);
		EXPECT_EQ(c.pages_huge, 0);
		as_expect_rss_matches(t.mm);
		unsigned n = t.pages * cpus, k = 0;
		unsigned order = pages_order(n * sizeof(phys_addr_t));
		phys_addr_t *pas = alloc_pages(order);
		ASSERT_TRUE(pas != NULL);
		unsigned cpu;
		for_each_online_cpu(cpu)
			for (unsigned i = 0; i < t.pages; i++)
				pas[k++] =
				    as_pa(t.mm, as_slot(cpu) + (uintptr_t)i * PAGE_SIZE, NULL);
		EXPECT_EQ(k, n);
		sort_pas(pas, k);
		unsigned dups = 0, unmapped = 0;
		for (unsigned i = 0; i < k; i++) {
			unmapped += pas[i] == 0;
			dups += i && pas[i] == pas[i - 1];
		}
		EXPECT_EQ(unmapped, 0);
		EXPECT_EQ(dups, 0);
		free_pages(pas, order);

		mm_destroy(t.mm);
		EXPECT_EQ(as_free_bytes(), before);
	}
}

/* ---- every CPU touches the same pages at once ---- */

struct shared_pages {
	struct mm *mm;
	uintptr_t base;
	unsigned racers; /* the online CPUs of index 0..racers-1 (smp_online_index) take part */
	struct smp_sync start, written;
	atomic_t errors;
};

static void shared_pages_worker(void *arg)
{
	struct shared_pages *t = arg;
	/* A racer's index, not its CPU id: the reads below expect every slot 0..n-1 written. */
	int index = smp_online_index(smp_processor_id());
	unsigned cpu = (unsigned)index, n = t->racers;

	if (index < 0 || cpu >= n)
		return;
	mm_switch(t->mm);
	smp_sync_wait(&t->start, n);
	/* Each CPU writes its own u64 of every page, starting at a different page. */
	for (unsigned k = 0; k < FAULT_SHARED_PAGES; k++) {
		unsigned i = (k + cpu) % FAULT_SHARED_PAGES;
		if (user_write_u64(t->base + (uintptr_t)i * PAGE_SIZE + 8 * cpu, tag(cpu, i)))
			atomic_inc(&t->errors);
	}
	smp_sync_wait(&t->written, n);
	/*
	 * Had two CPUs installed different pages at one address, someone's write is
	 * missing. Each page is checked by one CPU (fixed total work at any CPU count).
	 */
	for (unsigned i = cpu; i < FAULT_SHARED_PAGES; i += n)
		for (unsigned c = 0; c < n; c++) {
			u64 v = 0;
			if (user_read_u64(t->base + (uintptr_t)i * PAGE_SIZE + 8 * c, &v) ||
			    v != tag(c, i))
				atomic_inc(&t->errors);
		}
	mm_switch(NULL);
}

static void shared_pages_run(const struct as_mode *mode, bool huge)
{
	static struct shared_pages t;
	u64 before = as_free_bytes();
	struct fault_stats s0, s1;

	/*
	 * Every racer for a 2 MiB page allocates and zeroes one before it finds out it
	 * lost: cap them, so the work stays fixed as CPUs grow (and fits MEM=96M).
	 */
	t = (struct shared_pages){.base = as_slot(0), .racers = num_online_cpus()};
	if (huge)
		t.racers = MIN(t.racers, FAULT_HUGE_CPUS);
	t.mm = mm_create_modes(mode->ptlock, mode->lookup);
	ASSERT_TRUE(t.mm != NULL);
	ASSERT_EQ(vma_map(t.mm, t.base, HUGE_SIZE, PROT_READ | PROT_WRITE, huge ? 0 : VMA_NOHUGE),
		  0);
	fault_stats_sum(&s0);
	smp_run_all(shared_pages_worker, &t);
	fault_stats_sum(&s1);
	EXPECT_EQ(atomic_read(&t.errors), 0);

	struct pt_counts c;
	pt_count(t.mm, &c);
	int level;
	as_pa(t.mm, t.base, &level);
	if (huge && level == PT_LEVEL_PMD) {
		EXPECT_EQ(c.pages_huge, 1);
		EXPECT_EQ(c.pages_4k, 0);
		EXPECT_EQ(s1.mapped_huge - s0.mapped_huge, 1);
	} else {
		EXPECT_TRUE(!huge || s1.huge_fallback > s0.huge_fallback);
		EXPECT_EQ(c.pages_4k, FAULT_SHARED_PAGES);
		EXPECT_EQ(s1.mapped_4k - s0.mapped_4k, FAULT_SHARED_PAGES);
	}
	as_expect_rss_matches(t.mm);
	mm_destroy(t.mm);
	/* Racing CPUs freed what they allocated: nothing leaked. */
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(fault, same_pages_all_cpus)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_modes); m++) {
		shared_pages_run(&as_modes[m], false);
		shared_pages_run(&as_modes[m], true);
	}
}

/* ---- own regions and shared ones, 4 KiB and 2 MiB, all at once ---- */

#define MIXED_OWN_PAGES 64 /* 4 KiB pages each CPU first-touches in its own slot */

struct mixed_faults {
	struct mm *mm;
	uintptr_t shared_4k, shared_huge; /* in a slot of their own, above every CPU's */
	unsigned huge_cpus;		  /* CPUs of index below this also fault 2 MiB regions */
	struct smp_sync start, written;
	atomic_t errors;
};

static uintptr_t mixed_own_huge(unsigned cpu)
{
	return as_slot(cpu) + HUGE_SIZE; /* past the 4 KiB region, 2 MiB aligned */
}

static void mixed_check(struct mixed_faults *t, uintptr_t va, u64 want)
{
	u64 v = 0;
	if (user_read_u64(va, &v) || v != want)
		atomic_inc(&t->errors);
}

static void mixed_worker(void *arg)
{
	struct mixed_faults *t = arg;
	/* Slots and offsets by online index: the shared slot is the one above the last. */
	unsigned cpu = (unsigned)smp_online_index(smp_processor_id());
	uintptr_t own = as_slot(cpu);
	bool huge = cpu < t->huge_cpus;

	mm_switch(t->mm);
	if (vma_map(t->mm, own, MIXED_OWN_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, VMA_NOHUGE) ||
	    (huge && vma_map(t->mm, mixed_own_huge(cpu), HUGE_SIZE, PROT_READ | PROT_WRITE, 0)))
		atomic_inc(&t->errors);
	smp_sync_wait(&t->start, num_online_cpus());
	/* Own pages and shared ones interleaved, so both kinds of fault run at once. */
	for (unsigned i = 0; i < MIXED_OWN_PAGES; i++) {
		uintptr_t shared = t->shared_4k + (uintptr_t)(i % FAULT_SHARED_PAGES) * PAGE_SIZE;
		if (user_write_u64(own + (uintptr_t)i * PAGE_SIZE, tag(cpu, i)) ||
		    user_write_u64(shared + 8 * cpu, tag(cpu, i % FAULT_SHARED_PAGES)))
			atomic_inc(&t->errors);
		if (huge && i == MIXED_OWN_PAGES / 2 &&
		    (user_write_u64(mixed_own_huge(cpu) + HUGE_SIZE - 8, tag(cpu, 0)) ||
		     user_write_u64(t->shared_huge + 8 * cpu, tag(cpu, 1))))
			atomic_inc(&t->errors);
	}
	smp_sync_wait(&t->written, num_online_cpus());
	/* Two pages installed at one shared address would lose someone's write. */
	for (unsigned i = 0; i < MIXED_OWN_PAGES; i++)
		mixed_check(t, own + (uintptr_t)i * PAGE_SIZE, tag(cpu, i));
	for (unsigned i = 0; i < FAULT_SHARED_PAGES; i++)
		mixed_check(t, t->shared_4k + (uintptr_t)i * PAGE_SIZE + 8 * cpu, tag(cpu, i));
	if (huge) {
		mixed_check(t, mixed_own_huge(cpu) + HUGE_SIZE - 8, tag(cpu, 0));
		mixed_check(t, t->shared_huge + 8 * cpu, tag(cpu, 1));
	}
	mm_switch(NULL);
}

/* No two addresses of [va, va + pages * 4 KiB) and the shared 4 KiB region share a page. */
static unsigned mixed_duplicate_pages(struct mixed_faults *t, unsigned cpus)
{
	unsigned n = 0, dups = 0, room = MAX_CPUS * MIXED_OWN_PAGES + FAULT_SHARED_PAGES;
	unsigned order = pages_order(room * sizeof(phys_addr_t));
	phys_addr_t *pas = alloc_pages(order);

	if (!pas)
		return ~0u;
	for (unsigned cpu = 0; cpu < cpus; cpu++) /* by online index, as mixed_worker() */
		for (unsigned i = 0; i < MIXED_OWN_PAGES; i++)
			pas[n++] = as_pa(t->mm, as_slot(cpu) + (uintptr_t)i * PAGE_SIZE, NULL);
	for (unsigned i = 0; i < FAULT_SHARED_PAGES; i++)
		pas[n++] = as_pa(t->mm, t->shared_4k + (uintptr_t)i * PAGE_SIZE, NULL);
	sort_pas(pas, n);
	for (unsigned i = 0; i < n; i++)
		dups += pas[i] == 0 || (i && pas[i] == pas[i - 1]);
	dups += n != cpus * MIXED_OWN_PAGES + FAULT_SHARED_PAGES;
	free_pages(pas, order);
	return dups;
}

static void mixed_run(const struct as_mode *mode)
{
	static struct mixed_faults t;
	unsigned cpus = num_online_cpus();
	struct fault_stats s0, s1;
	struct pt_table_stats p0, p1;
	struct pt_counts c;
	u64 before = as_free_bytes();

	pt_table_stats_sum(&p0);
	t = (struct mixed_faults){.huge_cpus = MIN(cpus, FAULT_HUGE_CPUS)};
	t.shared_4k = as_slot(cpus);
	t.shared_huge = t.shared_4k + HUGE_SIZE;
	t.mm = mm_create_modes(mode->ptlock, mode->lookup);
	ASSERT_TRUE(t.mm != NULL);
	ASSERT_EQ(vma_map(t.mm, t.shared_4k, FAULT_SHARED_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
			  VMA_NOHUGE),
		  0);
	ASSERT_EQ(vma_map(t.mm, t.shared_huge, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	fault_stats_sum(&s0);
	smp_run_all(mixed_worker, &t);
	fault_stats_sum(&s1);
	EXPECT_EQ(atomic_read(&t.errors), 0);

	/* What the faults say they installed is what the tables hold, and what the mm counts. */
	pt_count(t.mm, &c);
	EXPECT_EQ(s1.mapped_4k - s0.mapped_4k, c.pages_4k);
	EXPECT_EQ(s1.mapped_huge - s0.mapped_huge, c.pages_huge);
	EXPECT_GE(c.pages_4k, (u64)cpus * MIXED_OWN_PAGES + FAULT_SHARED_PAGES);
	as_expect_rss_matches(t.mm);
	EXPECT_EQ(mixed_duplicate_pages(&t, cpus), 0);
	/* Every table page allocated meanwhile is in the tables (the root included), or freed. */
	pt_table_stats_sum(&p1);
	EXPECT_EQ((p1.allocated - p0.allocated) - (p1.freed - p0.freed), c.tables + 1);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(fault, own_and_shared_regions_at_once)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_modes); m++)
		mixed_run(&as_modes[m]);
}

/* ---- huge pages where aligned, 4 KiB where not ---- */

struct huge_region {
	struct mm *mm;
	struct smp_sync start;
	unsigned cpus; /* the online CPUs of index 0..cpus-1 take part */
	atomic_t errors, huge, local;
};

static void huge_region_worker(void *arg)
{
	struct huge_region *t = arg;
	unsigned cpu = smp_processor_id();
	uintptr_t base = as_slot(cpu);

	if ((unsigned)smp_online_index(cpu) >= t->cpus)
		return;
	mm_switch(t->mm);
	EXPECT_EQ(vma_map(t->mm, base, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	if (user_write_u64(base + HUGE_SIZE - 8, tag(cpu, 0)))
		atomic_inc(&t->errors);
	int level;
	phys_addr_t pa = as_pa(t->mm, base, &level);
	if (level == PT_LEVEL_PMD) {
		atomic_inc(&t->huge);
		if (page_node(phys_to_page(pa)) == cpu_to_node(cpu))
			atomic_inc(&t->local);
	}
	/* The rest of the 2 MiB is there already: no more faults, and it reads zero. */
	u64 v = 1;
	if (user_read_u64(base + PAGE_SIZE, &v) || v != 0)
		atomic_inc(&t->errors);
	mm_switch(NULL);
}

TEST(fault, huge_when_aligned)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t base = as_slot(0);
	int level;

	mm_switch(mm);
	/* Aligned 4 MiB: two 2 MiB leaves. */
	ASSERT_EQ(vma_map(mm, base, 2 * HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_write_u64(base, 1), 0);
	EXPECT_EQ(user_write_u64(base + HUGE_SIZE + 4 * PAGE_SIZE, 2), 0);
	as_pa(mm, base, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);
	as_pa(mm, base + HUGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);

	/* 2 MiB starting 4 KiB past alignment holds no aligned 2 MiB: 4 KiB pages. */
	uintptr_t odd = base + 4 * HUGE_SIZE + PAGE_SIZE;
	ASSERT_EQ(vma_map(mm, odd, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_write_u64(odd + HUGE_SIZE - PAGE_SIZE, 3), 0);
	as_pa(mm, odd + HUGE_SIZE - PAGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);

	/* A VMA ending 4 KiB short of the next 2 MiB: huge first half, 4 KiB in the tail. */
	uintptr_t mixed = base + 8 * HUGE_SIZE;
	ASSERT_EQ(vma_map(mm, mixed, 2 * HUGE_SIZE - PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_write_u64(mixed, 4), 0);
	EXPECT_EQ(user_write_u64(mixed + HUGE_SIZE, 5), 0);
	as_pa(mm, mixed, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);
	as_pa(mm, mixed + HUGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);

	/* VMA_NOHUGE: 4 KiB even where aligned. */
	uintptr_t nohuge = base + 12 * HUGE_SIZE;
	ASSERT_EQ(vma_map(mm, nohuge, HUGE_SIZE, PROT_READ | PROT_WRITE, VMA_NOHUGE), 0);
	EXPECT_EQ(user_write_u64(nohuge, 6), 0);
	as_pa(mm, nohuge, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);

	struct pt_counts c;
	pt_count(mm, &c);
	EXPECT_EQ(c.pages_huge, 3);
	EXPECT_EQ(c.pages_4k, 3);
	as_expect_rss_matches(mm);
	mm_switch(NULL);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);

	/* Now the first few CPUs at once, one 2 MiB page each in its own slot. */
	static struct huge_region t;
	before = as_free_bytes();
	t = (struct huge_region){.cpus = MIN(num_online_cpus(), FAULT_HUGE_CPUS)};
	/* Room on their nodes for all of them: then each page must come from its CPU's node. */
	bool room = true;
	u64 need = (u64)FAULT_HUGE_CPUS << HUGE_ORDER;
	for (unsigned i = 0; i < t.cpus; i++)
		room &= node_free_pages(cpu_to_node(smp_online_cpu(i))) >= need;
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(huge_region_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.huge), t.cpus);
	if (room)
		EXPECT_EQ(atomic_read(&t.local), atomic_read(&t.huge));
	as_expect_rss_matches(t.mm);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/*
 * madvise(MADV_NOHUGEPAGE)'s vma_set_nohuge(): later faults in the range map 4 KiB
 * pages, even where an aligned 2 MiB fits; the 2 MiB page already there stays;
 * MADV_HUGEPAGE gives 2 MiB faults back; a range with a hole is -ENOMEM.
 */
TEST(fault, nohuge_advice_maps_small_pages)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t base = as_slot(0);
	int level;

	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, base, 3 * HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_write_u64(base, 1), 0); /* a 2 MiB page, before the advice */
	EXPECT_EQ(vma_set_nohuge(mm, base, 3 * HUGE_SIZE, true), 0);
	EXPECT_EQ(user_write_u64(base + HUGE_SIZE, 2), 0);
	as_pa(mm, base + HUGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);
	as_pa(mm, base, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);
	u64 v = 0;
	EXPECT_EQ(user_read_u64(base, &v), 0);
	EXPECT_EQ(v, 1);

	EXPECT_EQ(vma_set_nohuge(mm, base + 2 * HUGE_SIZE, HUGE_SIZE, false), 0);
	EXPECT_EQ(user_write_u64(base + 2 * HUGE_SIZE, 3), 0);
	as_pa(mm, base + 2 * HUGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);

	EXPECT_EQ(vma_set_nohuge(mm, base + 2 * HUGE_SIZE, 2 * HUGE_SIZE, true), -ENOMEM);
	as_expect_rss_matches(mm);
	mm_switch(NULL);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* ---- pages read as zero, even where freed pages were dirty ---- */

static bool range_reads_zero(uintptr_t va, size_t len)
{
	bool zero = true;
	arch_user_access_begin();
	for (size_t off = 0; off < len; off += sizeof(u64))
		zero &= *(volatile u64 *)(va + off) == 0;
	arch_user_access_end();
	return zero;
}

static void fill(uintptr_t va, size_t len, u64 v)
{
	arch_user_access_begin();
	for (size_t off = 0; off < len; off += sizeof(u64))
		*(volatile u64 *)(va + off) = v;
	arch_user_access_end();
}

TEST(fault, pages_read_zero)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t small = as_slot(0), huge = as_slot(1);
	size_t small_len = 8 * PAGE_SIZE;

	mm_switch(mm);
	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(vma_map(mm, small, small_len, PROT_READ | PROT_WRITE, VMA_NOHUGE), 0);
		ASSERT_EQ(vma_map(mm, huge, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
		/* Fault everything in with a probe first: plain accesses below must not fail. */
		for (size_t off = 0; off < small_len; off += PAGE_SIZE)
			ASSERT_EQ(user_write_u64(small + off, 0), 0);
		ASSERT_EQ(user_write_u64(huge, 0), 0);
		EXPECT_TRUE(range_reads_zero(small, small_len));
		EXPECT_TRUE(range_reads_zero(huge, HUGE_SIZE));
		/* Dirty them, then give them back: the next round's pages must be zero again. */
		fill(small, small_len, ~0ULL);
		fill(huge, HUGE_SIZE, ~0ULL);
		EXPECT_EQ(vma_unmap(mm, small, small_len), 0);
		EXPECT_EQ(vma_unmap(mm, huge, HUGE_SIZE), 0);
	}
	mm_switch(NULL);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* ---- unmap, then touch faults again ---- */

TEST(fault, unmap_then_touch_faults_again)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	struct fault_stats s0, s1;
	u64 v = 1;

	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, va, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_write_u64(va, 42), 0);
	EXPECT_EQ(vma_unmap(mm, va, 4 * PAGE_SIZE), 0);
	EXPECT_TRUE(as_pa(mm, va, NULL) == 0);
	/* No VMA now: the access fails, and nothing got mapped. */
	EXPECT_EQ(user_read_u64(va, &v), -EFAULT);
	EXPECT_TRUE(as_pa(mm, va, NULL) == 0);

	ASSERT_EQ(vma_map(mm, va, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	fault_stats_sum(&s0);
	EXPECT_EQ(user_read_u64(va, &v), 0);
	fault_stats_sum(&s1);
	EXPECT_EQ(v, 0); /* a new zero page, not the old 42 */
	EXPECT_EQ(s1.mapped_4k - s0.mapped_4k, 1);

	/* Unmapping one page of the middle splits the VMA; only that page faults again. */
	EXPECT_EQ(user_write_u64(va + 2 * PAGE_SIZE, 7), 0);
	EXPECT_EQ(vma_unmap(mm, va + PAGE_SIZE, PAGE_SIZE), 0);
	EXPECT_EQ(user_read_u64(va + PAGE_SIZE, &v), -EFAULT);
	EXPECT_EQ(user_read_u64(va + 2 * PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 7);
	mm_switch(NULL);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* ---- -EFAULT outside a VMA and for forbidden accesses ---- */

TEST(fault, outside_vma_efault)
{
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	u64 v;

	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, va, PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(user_read_u64(va + PAGE_SIZE, &v), -EFAULT);
	EXPECT_EQ(user_write_u64(va - PAGE_SIZE, 1), -EFAULT);
	EXPECT_EQ(user_read_u64(0, &v), -EFAULT);
	EXPECT_EQ(mm_fault(mm, va + PAGE_SIZE, FAULT_READ), -EFAULT);
	EXPECT_EQ(mm_fault(mm, USER_VA_END, FAULT_READ), -EFAULT);
	EXPECT_EQ(mm_fault(mm, va, 0), -EFAULT);
	EXPECT_EQ(mm_fault(mm, va, 0x80), -EFAULT);
	/* The VMA itself works, and the failed accesses mapped nothing else. */
	EXPECT_EQ(user_write_u64(va, 1), 0);
	struct pt_counts c;
	pt_count(mm, &c);
	EXPECT_EQ(c.pages_4k, 1);
	mm_switch(NULL);
	mm_destroy(mm);
}

TEST(fault, write_readonly_efault)
{
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	u64 v = 1;

	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, va, 2 * PAGE_SIZE, PROT_READ, 0), 0);
	/* A write before any read: no page appears. */
	EXPECT_EQ(user_write_u64(va + PAGE_SIZE, 1), -EFAULT);
	EXPECT_TRUE(as_pa(mm, va + PAGE_SIZE, NULL) == 0);
	/* A read maps a zero page; a write to it still fails and leaves it zero. */
	EXPECT_EQ(user_read_u64(va, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(user_write_u64(va, 1), -EFAULT);
	EXPECT_EQ(user_read_u64(va, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(mm_fault(mm, va, FAULT_WRITE), -EFAULT);
	EXPECT_EQ(mm_fault(mm, va, FAULT_EXEC), -EFAULT);
	mm_switch(NULL);
	mm_destroy(mm);
}

/*
 * A kernel access the hardware refuses whatever the tables say (RISC-V: a user page
 * outside a user-access window, or executing one) must fail, not fault forever.
 * x86 without SMAP/SMEP allows both: then the access simply works.
 */
TEST(fault, impossible_access_fails_not_loops)
{
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	u64 v = 1;

	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, va, PAGE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, 0), 0);
	/* A return instruction to call: copied from kernel text. */
	arch_user_access_begin();
	for (unsigned i = 0; i < 16; i++)
		((volatile u8 *)va)[i] = ((const u8 *)probe_ret_insn)[i];
	arch_user_access_end();
	int ret = probe_read_u64((const void *)va, &v); /* no user-access window */
	EXPECT_TRUE(ret == 0 || ret == -EFAULT);
	ret = probe_exec((const void *)va);
	EXPECT_TRUE(ret == 0 || ret == -EFAULT);
	mm_switch(NULL);
	mm_destroy(mm);
}

/* ---- out of memory: -ENOMEM, nothing leaked ---- */

TEST(fault, oom_enomem_no_leak)
{
	uintptr_t va = as_slot(0);
	unsigned skip;

	/* Fail every allocation after the first `skip` the fault makes: each level's error path. */
	for (skip = 0; skip < 16; skip++) {
		u64 before = as_free_bytes();
		struct mm *mm = mm_create();
		ASSERT_TRUE(mm != NULL);
		ASSERT_EQ(vma_map(mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
		mm_inject_alloc_failures(skip, ~0u);
		int ret = mm_fault(mm, va, FAULT_WRITE);
		mm_inject_alloc_failures(0, 0);
		EXPECT_TRUE(ret == 0 || ret == -ENOMEM);
		if (ret == -ENOMEM)
			EXPECT_TRUE(as_pa(mm, va, NULL) == 0);
		mm_destroy(mm);
		EXPECT_EQ(as_free_bytes(), before);
		if (ret == 0)
			break;
	}
	/* Every table between the root and the PMD level, then the 2 MiB page. */
	EXPECT_EQ(skip, PT_TOP_LEVEL);

	/* The huge page alone fails: the fault falls back to a 4 KiB page. */
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	ASSERT_EQ(vma_map(mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	mm_inject_alloc_failures(skip - 1, 1);
	EXPECT_EQ(mm_fault(mm, va, FAULT_WRITE), 0);
	mm_inject_alloc_failures(0, 0);
	int level;
	as_pa(mm, va, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);
	mm_destroy(mm);
}

/* A list of blocks chained through their own first word, to hold memory hostage. */
static void *hog_all(void)
{
	void *list = NULL;
	for (int order = MAX_ORDER; order >= 0; order--)
		for (;;) {
			void **b = alloc_pages_flags(NUMA_NO_NODE, order, ALLOC_NOZERO);
			if (!b)
				break;
			b[0] = list;
			b[1] = (void *)(uintptr_t)order;
			list = b;
		}
	return list;
}

static void hog_free(void *list)
{
	while (list) {
		void **b = list;
		list = b[0];
		free_pages(b, (unsigned)(uintptr_t)b[1]);
	}
}

TEST(fault, real_oom_enomem_then_recovers)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	ASSERT_EQ(vma_map(mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);

	void *hog = hog_all();
	EXPECT_TRUE(hog != NULL);
	EXPECT_EQ(mm_fault(mm, va, FAULT_WRITE), -ENOMEM);
	hog_free(hog);
	EXPECT_EQ(mm_fault(mm, va, FAULT_WRITE), 0);
	EXPECT_TRUE(as_pa(mm, va, NULL) != 0);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}

/* ---- NUMA: a node-1 CPU's fault gets node-1 memory ---- */

struct numa_local {
	struct mm *mm;
	atomic_t checked, remote_huge, remote_small, errors;
};

static void numa_local_worker(void *arg)
{
	struct numa_local *t = arg;
	unsigned cpu = smp_processor_id();
	int node = cpu_to_node(cpu), level;
	uintptr_t base = as_slot(cpu);

	/* One CPU per node is enough, and keeps the memory used small at 64 CPUs. */
	for (unsigned other = 0; other < cpu; other++)
		if (cpumask_test_cpu(&cpu_online_mask, other) && cpu_to_node(other) == node)
			return;
	mm_switch(t->mm);
	bool has_huge = node_free_pages(node) >= 2 * (1u << HUGE_ORDER);
	if (vma_map(t->mm, base, 2 * HUGE_SIZE, PROT_READ | PROT_WRITE, 0) ||
	    vma_map(t->mm, base + 4 * HUGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE, 0) ||
	    user_write_u64(base, 1) || user_write_u64(base + 4 * HUGE_SIZE, 1)) {
		atomic_inc(&t->errors);
		mm_switch(NULL);
		return;
	}
	phys_addr_t pa = as_pa(t->mm, base, &level);
	if (has_huge && (level != PT_LEVEL_PMD || page_node(phys_to_page(pa)) != node))
		atomic_inc(&t->remote_huge);
	pa = as_pa(t->mm, base + 4 * HUGE_SIZE, &level);
	if (page_node(phys_to_page(pa)) != node)
		atomic_inc(&t->remote_small);
	atomic_inc(&t->checked);
	mm_switch(NULL);
}

TEST(fault, numa_node_local)
{
	static struct numa_local t;
	unsigned cpu, nodes_with_cpus = 0;
	bool seen[MAX_NODES] = {false};

	if (nr_nodes < 2) {
		test_skip("one NUMA node");
		return;
	}
	for_each_online_cpu(cpu)
		if (!seen[cpu_to_node(cpu)]) {
			seen[cpu_to_node(cpu)] = true;
			nodes_with_cpus++;
		}
	t = (struct numa_local){0};
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	smp_run_all(numa_local_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.checked), nodes_with_cpus);
	EXPECT_EQ(atomic_read(&t.remote_huge), 0);
	EXPECT_EQ(atomic_read(&t.remote_small), 0);
	mm_destroy(t.mm);
}

/*
 * Page allocator interface selftests: blocks aligned and zeroed, also when reused;
 * bad requests refused; bad frees (double, wrong order, not a block) reported and
 * refused without corrupting the free lists; disjoint blocks from all CPUs at once.
 */
#include <grace/page_alloc.h>
#include <grace/page.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include "mm_test_util.h"

TEST(mm, alloc_aligned_zeroed_reused)
{
	u64 before = mm_test_buddy_free();
	for (unsigned order = 0; order <= 4; order++) {
		u8 *p = alloc_pages(order);
		ASSERT_TRUE(p != NULL);
		EXPECT_TRUE(IS_ALIGNED((uintptr_t)p, PAGE_SIZE << order));
		size_t size = PAGE_SIZE << order;
		bool zero = true;
		for (size_t i = 0; i < size; i++)
			zero &= p[i] == 0;
		EXPECT_TRUE(zero);
		memset(p, 0xab, size);
		free_pages(p, order);
		/* A reused block is zeroed again (order 0 comes back from this CPU's list). */
		u8 *q = alloc_pages(order);
		ASSERT_TRUE(q != NULL);
		if (order == 0)
			EXPECT_TRUE(q == p);
		EXPECT_EQ(q[0], 0);
		EXPECT_EQ(q[size - 1], 0);
		free_pages(q, order);
	}
	EXPECT_EQ(mm_test_buddy_free(), before);
	EXPECT_TRUE(alloc_pages(64) == NULL);
	EXPECT_TRUE(alloc_pages(MAX_ORDER + 1) == NULL);
}

TEST(mm, bad_free_reported_and_refused)
{
	test_expect_message("mm: bad free_pages(");
	u64 before = mm_test_buddy_free(), bad = mm_bad_free_count();
	u8 *p = alloc_pages(2);
	ASSERT_TRUE(p != NULL);
	free_pages(p, 1);	      /* wrong order */
	free_pages(p + PAGE_SIZE, 0); /* not the start of the block */
	free_pages(p + 8, 2);	      /* not even page-aligned */
	EXPECT_EQ(mm_bad_free_count(), bad + 3);
	free_pages(p, 2);
	free_pages(p, 2); /* double free */
	EXPECT_EQ(mm_bad_free_count(), bad + 4);
	/* Refused frees left the lists intact: the count is exact. */
	EXPECT_EQ(mm_test_buddy_free(), before);
	free_pages(NULL, 0);
}

#define MM_PAGES_PER_CPU 8

struct mm_test {
	struct smp_sync start;
	atomic_t overlaps, failures;
};

static void mm_worker(void *arg)
{
	struct mm_test *t = arg;
	u64 *pages[MM_PAGES_PER_CPU];
	u64 tag = 0x6772616365000000ULL | smp_processor_id();

	smp_sync_wait(&t->start, num_online_cpus());
	for (int i = 0; i < MM_PAGES_PER_CPU; i++) {
		pages[i] = alloc_pages(0);
		if (!pages[i]) {
			atomic_inc(&t->failures);
			continue;
		}
		for (size_t j = 0; j < PAGE_SIZE / sizeof(u64); j++)
			pages[i][j] = tag;
	}
	/* If two CPUs got the same page, one finds the other's tag. */
	for (int i = 0; i < MM_PAGES_PER_CPU; i++) {
		if (!pages[i])
			continue;
		for (size_t j = 0; j < PAGE_SIZE / sizeof(u64); j++)
			if (READ_ONCE(pages[i][j]) != tag) {
				atomic_inc(&t->overlaps);
				break;
			}
	}
	for (int i = 0; i < MM_PAGES_PER_CPU; i++)
		free_pages(pages[i], 0);
}

TEST(mm, concurrent_alloc_disjoint)
{
	static struct mm_test t;
	t = (struct mm_test){0};
	smp_run_all(mm_worker, &t);
	EXPECT_EQ(atomic_read(&t.failures), 0);
	EXPECT_EQ(atomic_read(&t.overlaps), 0);
}

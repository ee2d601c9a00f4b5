/*
 * Shrinker selftests: with all of memory allocated (as oom_test.c fills it), an
 * allocation that would fail succeeds because a registered shrinker gave back the
 * pages it held, and once unregistered it is not asked again; a walk that a scan
 * starts on its own CPU gets nothing; and walks on several CPUs racing with register
 * and unregister never reach a shrinker after unregister_shrinker() returned.
 */
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/shrinker.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <asm/cpu.h>
#include "mm_test_util.h"

#define SHRINK_TEST_PAGES 8 /* what the test shrinker holds: a few pages, fine at MEM=96M */

struct page_shrinker {
	struct shrinker s;
	void *pages[SHRINK_TEST_PAGES]; /* claimed by xchg: scans may run on several CPUs */
	u32 armed;			/* 0: count says 0, as if the cache were empty */
	atomic_t count_calls, scan_calls, freed;
	unsigned long last_nr; /* the nr of the latest scan */
};

static unsigned long page_shrinker_count(struct shrinker *s)
{
	struct page_shrinker *ps = container_of(s, struct page_shrinker, s);
	atomic_inc(&ps->count_calls);
	if (!READ_ONCE(ps->armed))
		return 0;
	unsigned long n = 0;
	for (unsigned i = 0; i < SHRINK_TEST_PAGES; i++)
		n += READ_ONCE(ps->pages[i]) != NULL;
	return n;
}

static unsigned long page_shrinker_scan(struct shrinker *s, unsigned long nr)
{
	struct page_shrinker *ps = container_of(s, struct page_shrinker, s);
	unsigned long freed = 0;
	atomic_inc(&ps->scan_calls);
	WRITE_ONCE(ps->last_nr, nr);
	for (unsigned i = 0; i < SHRINK_TEST_PAGES && freed < nr; i++) {
		void *p = xchg(&ps->pages[i], NULL);
		if (p) {
			free_pages(p, 0);
			freed++;
		}
	}
	atomic_add(&ps->freed, (int)freed);
	return freed;
}

struct fill_block {
	struct fill_block *next;
	unsigned order;
};

/* Every free page into a chain, largest blocks first (oom_test.c); returns the pages. */
static u64 fill_memory(struct fill_block **chain)
{
	u64 pages = 0;
	for (int order = MAX_ORDER; order >= 0; order--) {
		struct fill_block *b;
		while ((b = alloc_pages_flags(NUMA_NO_NODE, (unsigned)order, ALLOC_NOZERO))) {
			b->next = *chain;
			b->order = (unsigned)order;
			*chain = b;
			pages += 1ULL << order;
		}
	}
	return pages;
}

static void free_chain(struct fill_block *chain)
{
	while (chain) {
		struct fill_block *next = chain->next;
		free_pages(chain, chain->order);
		chain = next;
	}
}

TEST(shrinker, allocation_that_would_fail_succeeds_with_pages_a_shrinker_gave_back)
{
	static struct page_shrinker ps;
	ps = (struct page_shrinker){
	    .s = {.name = "test-pages", .count = page_shrinker_count, .scan = page_shrinker_scan}};
	for (unsigned i = 0; i < SHRINK_TEST_PAGES; i++) {
		ps.pages[i] = alloc_pages_flags(NUMA_NO_NODE, 0, ALLOC_NOZERO);
		ASSERT_TRUE(ps.pages[i] != NULL);
	}
	register_shrinker(&ps.s); /* unarmed: the fill below must not take its pages */
	mm_test_drop_caches();
	u64 start = mm_test_buddy_free();
	struct fill_block *chain = NULL;
	EXPECT_EQ(fill_memory(&chain), start);
	/* Running out asked the shrinker, which had nothing to give. */
	EXPECT_GT(atomic_read(&ps.count_calls), 0);
	EXPECT_EQ(atomic_read(&ps.scan_calls), 0);
	EXPECT_TRUE(alloc_pages(0) == NULL);

	/* Now it holds SHRINK_TEST_PAGES it can give back. */
	WRITE_ONCE(ps.armed, 1);
	struct fill_block *b = alloc_pages_flags(NUMA_NO_NODE, 0, ALLOC_NOZERO);
	EXPECT_TRUE(b != NULL);
	EXPECT_GE(atomic_read(&ps.scan_calls), 1);
	EXPECT_GT(atomic_read(&ps.freed), 0);
	EXPECT_GT(ps.last_nr, 0);
	u64 more = 0;
	while (b) {
		b->next = chain;
		b->order = 0;
		chain = b;
		more++;
		b = alloc_pages_flags(NUMA_NO_NODE, 0, ALLOC_NOZERO);
	}
	/* Exactly its pages: it gave back all it held and the allocator had no other. */
	EXPECT_EQ(more, SHRINK_TEST_PAGES);
	EXPECT_EQ(atomic_read(&ps.freed), SHRINK_TEST_PAGES);

	/* Unregistered: not even asked for its count any more. */
	unregister_shrinker(&ps.s);
	int counts = atomic_read(&ps.count_calls), scans = atomic_read(&ps.scan_calls);
	EXPECT_TRUE(alloc_pages(0) == NULL);
	EXPECT_EQ(shrink_caches(SHRINK_TEST_PAGES), 0);
	EXPECT_EQ(atomic_read(&ps.count_calls), counts);
	EXPECT_EQ(atomic_read(&ps.scan_calls), scans);

	free_chain(chain);
	/* Everything is back, the shrinker's pages too: they were freed into the pool. */
	EXPECT_EQ(mm_test_buddy_free(), start + SHRINK_TEST_PAGES);
}

struct nested_shrinker {
	struct shrinker s;
	atomic_t scans;
	unsigned long inner; /* what shrink_caches() gave a scan that called it */
};

static unsigned long nested_count(struct shrinker *s)
{
	return 1;
}

static unsigned long nested_scan(struct shrinker *s, unsigned long nr)
{
	struct nested_shrinker *ns = container_of(s, struct nested_shrinker, s);
	/* A scan that runs out of memory itself: its CPU is in reclaim already. */
	if (atomic_inc_return(&ns->scans) == 1)
		ns->inner = shrink_caches(nr);
	return 1;
}

TEST(shrinker, a_scan_that_runs_out_itself_is_not_let_in_again)
{
	static struct nested_shrinker ns;
	ns = (struct nested_shrinker){
	    .s = {.name = "test-nested", .count = nested_count, .scan = nested_scan},
	    .inner = ~0UL};
	register_shrinker(&ns.s);
	EXPECT_GE(shrink_caches(4), 1);
	unregister_shrinker(&ns.s);
	EXPECT_EQ(ns.inner, 0);
	/* One scan from the outer walk; the inner walk never reached it. */
	EXPECT_EQ(atomic_read(&ns.scans), 1);
}

/*
 * Register/unregister rounds while other CPUs walk. Each round waits a grace
 * period, about 50 ms under QEMU at SMP=8; walkers that never sleep would make
 * that far longer at 64 vCPUs on 2 host cores, so a few CPUs walk and the rest idle.
 */
#define SHRINK_RACE_ROUNDS 20
#define SHRINK_RACE_CPUS 4
#define SHRINK_RACE_WINDOW_LOOPS 1000 /* count lingers, widening the race with unregister */
#define SHRINK_RACE_OWN_WALKS 50

struct race_shrinker {
	struct shrinker s;
	u32 gone;	  /* set once unregister_shrinker() returned; cleared before register */
	atomic_t late;	  /* calls that found gone set: must stay 0 */
	atomic_t calls;	  /* calls of count */
	u32 done;	  /* the rounds are over: walkers stop */
	unsigned updater; /* the CPU that registers and unregisters */
	unsigned cpus;	  /* taking part */
	struct smp_sync start;
};

static struct race_shrinker race;

static unsigned long race_count(struct shrinker *s)
{
	struct race_shrinker *r = container_of(s, struct race_shrinker, s);
	atomic_inc(&r->calls);
	if (READ_ONCE(r->gone))
		atomic_inc(&r->late);
	for (int i = 0; i < SHRINK_RACE_WINDOW_LOOPS; i++)
		cpu_relax();
	if (READ_ONCE(r->gone))
		atomic_inc(&r->late);
	return 0; /* never scanned: the walk itself is under test */
}

static unsigned long race_scan(struct shrinker *s, unsigned long nr)
{
	return 0;
}

static void race_worker(void *arg)
{
	struct race_shrinker *r = arg;
	smp_sync_wait(&r->start, r->cpus);
	if (smp_processor_id() != r->updater) {
		while (!smp_load_acquire(&r->done))
			shrink_caches(1);
		return;
	}
	for (unsigned round = 0; round < SHRINK_RACE_ROUNDS; round++) {
		WRITE_ONCE(r->gone, 0);
		register_shrinker(&r->s);
		for (unsigned i = 0; i < SHRINK_RACE_OWN_WALKS; i++)
			shrink_caches(1); /* walks of its own, for SMP=1 */
		unregister_shrinker(&r->s);
		/* Any walk still in count now would see this and count itself late. */
		smp_mb();
		WRITE_ONCE(r->gone, 1);
	}
	/* Pairs with the walkers' smp_load_acquire(). */
	smp_store_release(&r->done, 1);
}

TEST(shrinker, walks_never_reach_a_shrinker_after_unregister_returned)
{
	race = (struct race_shrinker){
	    .s = {.name = "test-race", .count = race_count, .scan = race_scan},
	    .updater = smp_processor_id(),
	    .cpus = MIN(num_online_cpus(), (unsigned)SHRINK_RACE_CPUS)};
	smp_run_on(race.cpus, race_worker, &race);
	EXPECT_GT(atomic_read(&race.calls), 0);
	EXPECT_EQ(atomic_read(&race.late), 0);
}

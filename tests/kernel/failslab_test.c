/*
 * Slab failure injection selftests: at probability 1 every allocation from a
 * SLAB_FAILSLAB cache and every k*alloc_failable() fails while unflagged caches
 * and plain kmalloc never do, and the failures leak nothing; at 0 nothing fails;
 * at 0.25 about a quarter fail, each counted once; interrupt and softirq handlers
 * are never failed; the probability parser takes decimals in [0, 1] only. Each
 * test puts the probability back as it found it.
 */
#include <grace/failslab.h>
#include <grace/percpu.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/test.h>
#include <grace/time.h>

#define FAILSLAB_TEST_TRIES 100
/* The statistical test: 4000 draws at 25%; the bounds are wide enough for any host. */
#define FAILSLAB_STAT_TRIES 4000
#define FAILSLAB_STAT_PPM 250000
#define FAILSLAB_STAT_MIN (FAILSLAB_STAT_TRIES / 10)	 /* 10% */
#define FAILSLAB_STAT_MAX (FAILSLAB_STAT_TRIES * 4 / 10) /* 40% */
#define FAILSLAB_HANDLER_WAIT_NS (5 * NSEC_PER_SEC)

TEST(failslab, probability_one_fails_flagged_caches_and_failable_kmalloc_only)
{
	u32 saved = failslab_get_ppm();
	struct kmem_cache *flagged = kmem_cache_create("test-failslab", 64, 0, SLAB_FAILSLAB, NULL);
	struct kmem_cache *plain = kmem_cache_create("test-nofailslab", 64, 0, 0, NULL);
	ASSERT_TRUE(flagged != NULL);
	ASSERT_TRUE(plain != NULL);
	u64 before = failslab_injected();
	unsigned failed = 0;

	failslab_set_ppm(FAILSLAB_PPM_ALWAYS);
	for (unsigned i = 0; i < FAILSLAB_TEST_TRIES; i++) {
		void *a = kmem_cache_alloc(flagged);
		void *b = kmem_cache_alloc_node(flagged, 0);
		void *c = kmalloc_failable(32 + i);
		void *d = kzalloc_failable(2 * KMALLOC_MAX_CACHE_SIZE); /* a large block too */
		failed += !a + !b + !c + !d;
		kmem_cache_free(flagged, a);
		kmem_cache_free(flagged, b);
		kfree(c);
		kfree(d);

		void *p = kmem_cache_alloc(plain);
		void *q = kmalloc(32 + i);
		void *r = kzalloc(2 * KMALLOC_MAX_CACHE_SIZE);
		EXPECT_TRUE(p != NULL);
		EXPECT_TRUE(q != NULL);
		EXPECT_TRUE(r != NULL);
		kmem_cache_free(plain, p);
		kfree(q);
		kfree(r);
	}
	failslab_set_ppm(saved);

	EXPECT_EQ(failed, 4 * FAILSLAB_TEST_TRIES);
	EXPECT_EQ(failslab_injected() - before, 4 * FAILSLAB_TEST_TRIES);
	/* The failures came before the cache was touched: it never made a slab. */
	struct kmem_cache_stats st;
	kmem_cache_stats(flagged, &st);
	EXPECT_EQ(st.slabs, 0);
	EXPECT_EQ(kmem_cache_destroy(flagged), 0);
	EXPECT_EQ(kmem_cache_destroy(plain), 0);
}

TEST(failslab, probability_zero_never_fails)
{
	u32 saved = failslab_get_ppm();
	struct kmem_cache *flagged = kmem_cache_create("test-failslab", 64, 0, SLAB_FAILSLAB, NULL);
	ASSERT_TRUE(flagged != NULL);
	u64 before = failslab_injected();
	failslab_set_ppm(0);
	EXPECT_EQ(failslab_get_ppm(), 0);
	for (unsigned i = 0; i < 10 * FAILSLAB_TEST_TRIES; i++) {
		void *a = kmem_cache_alloc(flagged);
		void *c = kmalloc_failable(48);
		EXPECT_TRUE(a != NULL);
		EXPECT_TRUE(c != NULL);
		kmem_cache_free(flagged, a);
		kfree(c);
		if (test_failed())
			break;
	}
	failslab_set_ppm(saved);
	EXPECT_EQ(failslab_injected(), before);
	EXPECT_EQ(kmem_cache_destroy(flagged), 0);
}

TEST(failslab, a_quarter_fails_at_probability_one_quarter_each_counted)
{
	u32 saved = failslab_get_ppm();
	struct kmem_cache *flagged = kmem_cache_create("test-failslab", 64, 0, SLAB_FAILSLAB, NULL);
	ASSERT_TRUE(flagged != NULL);
	u64 before = failslab_injected();
	unsigned failed = 0;
	failslab_set_ppm(FAILSLAB_STAT_PPM);
	EXPECT_EQ(failslab_get_ppm(), FAILSLAB_STAT_PPM);
	for (unsigned i = 0; i < FAILSLAB_STAT_TRIES; i++) {
		void *a = kmem_cache_alloc(flagged);
		if (!a)
			failed++;
		kmem_cache_free(flagged, a);
	}
	failslab_set_ppm(saved);
	EXPECT_GE(failed, FAILSLAB_STAT_MIN);
	EXPECT_LE(failed, FAILSLAB_STAT_MAX);
	EXPECT_EQ(failslab_injected() - before, failed);
	EXPECT_EQ(kmem_cache_destroy(flagged), 0);
}

struct failslab_probe {
	u32 ran;   /* set (release) once the handler has asked */
	bool fail; /* what should_failslab() said there */
};

static struct failslab_probe softirq_probe;

static void probe_from_ipi(void *arg)
{
	struct failslab_probe *p = arg;
	p->fail = should_failslab();
	smp_store_release(&p->ran, 1);
}

static void probe_from_softirq(void)
{
	softirq_probe.fail = should_failslab();
	smp_store_release(&softirq_probe.ran, 1);
}

/* Sleeps between looks: softirqd runs on this CPU, and only once we let it. */
static bool probe_wait(struct failslab_probe *p)
{
	u64 end = arch_clock_ns() + FAILSLAB_HANDLER_WAIT_NS;
	/* Pairs with the smp_store_release() of ran. */
	while (!smp_load_acquire(&p->ran))
		if (arch_clock_ns() > end)
			return false;
		else
			msleep(1);
	return true;
}

TEST(failslab, interrupt_and_softirq_handlers_are_never_failed)
{
	u32 saved = failslab_get_ppm();
	failslab_set_ppm(FAILSLAB_PPM_ALWAYS);
	/* The control: this thread would be failed. */
	EXPECT_TRUE(should_failslab());

	/* A hard interrupt: another CPU's IPI handler (at SMP=1 there is none). */
	unsigned cpu, other = MAX_CPUS;
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id() && other == MAX_CPUS)
			other = cpu;
	if (other != MAX_CPUS) {
		struct failslab_probe ipi = {0};
		EXPECT_EQ(smp_call(other, probe_from_ipi, &ipi, true), 0);
		EXPECT_TRUE(probe_wait(&ipi));
		EXPECT_FALSE(ipi.fail);
	}

	/* A softirq handler: softirqd on this CPU. */
	softirq_probe = (struct failslab_probe){0};
	open_softirq(SOFTIRQ_SELFTEST, probe_from_softirq);
	raise_softirq(SOFTIRQ_SELFTEST);
	EXPECT_TRUE(probe_wait(&softirq_probe));
	EXPECT_FALSE(softirq_probe.fail);
	failslab_set_ppm(saved);
}

TEST(failslab, parser_takes_decimals_from_zero_to_one_only)
{
	static const struct {
		const char *s;
		u32 ppm;
	} good[] = {
	    {"0", 0},	      {"1", 1000000},  {"0.01", 10000},	     {"0.25", 250000},
	    {"1.0", 1000000}, {"0.000001", 1}, {"0.999999", 999999}, {"1.000000", 1000000},
	};
	static const char *const bad[] = {
	    "", "2", "-0.5", ".5", "0.", "1.5", "1.000001", "0.0000001", "0x1", "01", "0.1%", "0,5",
	};
	for (unsigned i = 0; i < ARRAY_SIZE(good); i++) {
		u32 ppm = 12345;
		EXPECT_EQ(failslab_parse(good[i].s, &ppm), 0);
		EXPECT_EQ(ppm, good[i].ppm);
	}
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		u32 ppm = 12345;
		if (!EXPECT_NE(failslab_parse(bad[i], &ppm), 0))
			test_fail(__FILE__, __LINE__, "'%s' was taken", bad[i]);
		EXPECT_EQ(ppm, 12345); /* nothing stored */
	}
	EXPECT_NE(failslab_parse(NULL, NULL), 0);
}

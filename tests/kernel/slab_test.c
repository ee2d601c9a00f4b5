/*
 * Slab selftests: alignment, constructors (once per object, not per allocation),
 * kmalloc's size classes and large blocks, SLAB_TYPESAFE_BY_RCU keeping its pages,
 * destroy refusing a busy cache, concurrent alloc/free from every CPU with every
 * object tagged by its owner, and, in DEBUG=1 builds, the reports of a double
 * free, an overflow and a write after free (checked through the report counters,
 * the cache name and the caller the debug code records).
 */
#include <grace/errno.h>
#include <grace/ksyms.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include "mm_test_util.h"

TEST(slab, objects_aligned_and_disjoint)
{
	static const struct {
		size_t size, align;
	} shapes[] = {
	    {8, 0}, {24, 64}, {100, 128}, {200, 0}, {1000, 512}, {4096, 4096},
	};
	/*
	 * Cache descriptors come from the kmem_cache cache, which keeps its slab page:
	 * on a first-ever create (DEBUG=1 descriptors are larger, so boot's page may be
	 * full) that page would count against this test. Create and destroy one first.
	 */
	struct kmem_cache *warm = kmem_cache_create("test-warm", 8, 0, 0, NULL);
	ASSERT_TRUE(warm != NULL);
	EXPECT_EQ(kmem_cache_destroy(warm), 0);
	u64 start = mm_test_buddy_free();
	for (unsigned i = 0; i < ARRAY_SIZE(shapes); i++) {
		enum { N = 40 };
		u8 *objs[N];
		struct kmem_cache *c =
		    kmem_cache_create("test-align", shapes[i].size, shapes[i].align, 0, NULL);
		ASSERT_TRUE(c != NULL);
		size_t align = shapes[i].align ? shapes[i].align : 8;
		for (int k = 0; k < N; k++) {
			objs[k] = kmem_cache_alloc(c);
			ASSERT_TRUE(objs[k] != NULL);
			EXPECT_TRUE(IS_ALIGNED((uintptr_t)objs[k], align));
			memset(objs[k], k, shapes[i].size);
		}
		/* Each object still holds its own pattern: no two overlap. */
		for (int k = 0; k < N; k++)
			EXPECT_TRUE(objs[k][0] == (u8)k && objs[k][shapes[i].size - 1] == (u8)k);
		for (int k = 0; k < N; k++)
			kmem_cache_free(c, objs[k]);
		EXPECT_EQ(kmem_cache_destroy(c), 0);
	}
	EXPECT_TRUE(kmem_cache_create("bad", 0, 0, 0, NULL) == NULL);
	EXPECT_TRUE(kmem_cache_create("bad", 64, 24, 0, NULL) == NULL);
	EXPECT_TRUE(kmem_cache_create("bad", 2 * PAGE_SIZE, 0, 0, NULL) == NULL);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

#define CTOR_MAGIC 0xc0de5eedc0de5eedULL
static atomic_t ctor_calls;

struct ctor_obj {
	u64 magic;
	u64 payload[5];
};

static void test_ctor(void *p)
{
	struct ctor_obj *o = p;
	o->magic = CTOR_MAGIC;
	atomic_inc(&ctor_calls);
}

TEST(slab, constructor_once_per_object)
{
	enum { N = 100 };
	static struct ctor_obj *objs[N];
	atomic_set(&ctor_calls, 0);
	struct kmem_cache *c =
	    kmem_cache_create("test-ctor", sizeof(struct ctor_obj), 0, 0, test_ctor);
	ASSERT_TRUE(c != NULL);
	for (int i = 0; i < N; i++) {
		objs[i] = kmem_cache_alloc(c);
		ASSERT_TRUE(objs[i] != NULL);
		EXPECT_EQ(objs[i]->magic, CTOR_MAGIC);
	}
	struct kmem_cache_stats s;
	kmem_cache_stats(c, &s);
	/* Every slot of every slab was constructed once, when its slab was made. */
	EXPECT_EQ(atomic_read(&ctor_calls), s.objects);
	for (int i = 0; i < N; i++)
		kmem_cache_free(c, objs[i]);
	int calls = atomic_read(&ctor_calls);
	for (int i = 0; i < N; i++) {
		objs[i] = kmem_cache_alloc(c);
		/* A reused object keeps its constructed state (the free pointer is elsewhere). */
		EXPECT_EQ(objs[i]->magic, CTOR_MAGIC);
	}
	EXPECT_EQ(atomic_read(&ctor_calls), calls);
	for (int i = 0; i < N; i++)
		kmem_cache_free(c, objs[i]);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

TEST(slab, kmalloc_sizes)
{
	/* Each size class, its edges, and sizes between classes. */
	static const size_t sizes[] = {0,   1,	 7,   8,    9,	  33,	64,   96,  97,
				       192, 255, 256, 1000, 1024, 2048, 4095, 4096};
	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i];
		u8 *p = kmalloc(n);
		ASSERT_TRUE(p != NULL);
		EXPECT_GE(ksize(p), n);
		EXPECT_TRUE(IS_ALIGNED((uintptr_t)p, 8));
		/* A power-of-two size is aligned to itself. */
		if (n >= 8 && !(n & (n - 1)))
			EXPECT_TRUE(IS_ALIGNED((uintptr_t)p, n));
		memset(p, 0xee, n);
		kfree(p);
		u8 *z = kzalloc(n);
		ASSERT_TRUE(z != NULL);
		bool zero = true;
		for (size_t k = 0; k < n; k++)
			zero &= z[k] == 0;
		EXPECT_TRUE(zero);
		kfree(z);
	}
	kfree(NULL);
}

TEST(slab, kmalloc_large_from_buddy)
{
	static const size_t sizes[] = {4097, 3 * 4096, 100000, 1 << 20,
				       (size_t)PAGE_SIZE << MAX_ORDER};
	u64 start = mm_test_buddy_free();
	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		u8 *p = kmalloc(sizes[i]);
		ASSERT_TRUE(p != NULL);
		EXPECT_TRUE(IS_ALIGNED((uintptr_t)p, PAGE_SIZE));
		EXPECT_GE(ksize(p), sizes[i]);
		p[0] = p[sizes[i] - 1] = 1;
		kfree(p);
	}
	EXPECT_TRUE(kmalloc((size_t)PAGE_SIZE << (MAX_ORDER + 1)) == NULL);
	EXPECT_TRUE(kmalloc((size_t)-1) == NULL);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(slab, typesafe_by_rcu_gives_pages_back_after_a_grace_period)
{
	enum { N = 300 };
	static void *objs[N];
	struct kmem_cache *rcu = kmem_cache_create("test-rcu", 128, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	struct kmem_cache *plain = kmem_cache_create("test-plain", 128, 0, 0, NULL);
	ASSERT_TRUE(rcu && plain);
	struct kmem_cache *caches[2] = {rcu, plain};
	u64 slabs[2];
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < N; i++)
			ASSERT_TRUE((objs[i] = kmem_cache_alloc(caches[k])) != NULL);
		for (int i = 0; i < N; i++)
			kmem_cache_free(caches[k], objs[i]);
		kmem_cache_shrink(caches[k]);
		if (caches[k] == rcu)
			rcu_barrier(); /* its slabs go back after a grace period */
		struct kmem_cache_stats s;
		kmem_cache_stats(caches[k], &s);
		slabs[k] = s.slabs;
		EXPECT_EQ(s.free_objects, s.objects);
		EXPECT_EQ(s.cpu_objects, 0);
	}
	/* Both give everything back; that the RCU cache waits for readers is rcu.typesafe_*. */
	EXPECT_EQ(slabs[0], 0);
	EXPECT_EQ(slabs[1], 0);
	EXPECT_EQ(kmem_cache_destroy(rcu), 0);
	EXPECT_EQ(kmem_cache_destroy(plain), 0);
}

TEST(slab, destroy_refuses_busy_cache)
{
	test_expect_message("slab: destroying cache test-busy");
	struct kmem_cache *c = kmem_cache_create("test-busy", 64, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	void *obj = kmem_cache_alloc(c);
	ASSERT_TRUE(obj != NULL);
	EXPECT_EQ(kmem_cache_destroy(c), -EBUSY);
	kmem_cache_free(c, obj);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

/* Concurrent: a fixed total of alloc/free steps over all CPUs, objects tagged by owner. */
#define SLAB_STORM_TOTAL 20000
#define SLAB_STORM_MIN_PER_CPU 64
#define SLAB_STORM_HELD 48

struct slab_obj {
	u64 owner;
	u64 seq;
	u8 fill[48];
};

struct slab_storm {
	struct smp_sync start;
	struct kmem_cache *c;
	unsigned steps;
	atomic_t failures, corrupt;
};

static void slab_storm_worker(void *arg)
{
	struct slab_storm *t = arg;
	struct slab_obj *held[SLAB_STORM_HELD] = {0};
	u64 me = 0x51ab000000000000ULL | smp_processor_id();

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned step = 0; step < t->steps; step++) {
		unsigned slot = (step * 7) % SLAB_STORM_HELD;
		struct slab_obj *o = held[slot];
		if (o) {
			if (READ_ONCE(o->owner) != me || o->fill[47] != (u8)o->seq)
				atomic_inc(&t->corrupt);
			kmem_cache_free(t->c, o);
		}
		o = held[slot] = kmem_cache_alloc(t->c);
		if (!o) {
			atomic_inc(&t->failures);
			continue;
		}
		WRITE_ONCE(o->owner, me);
		o->seq = step;
		memset(o->fill, (u8)step, sizeof(o->fill));
	}
	for (unsigned slot = 0; slot < SLAB_STORM_HELD; slot++)
		if (held[slot]) {
			if (READ_ONCE(held[slot]->owner) != me)
				atomic_inc(&t->corrupt);
			kmem_cache_free(t->c, held[slot]);
		}
}

TEST(slab, concurrent_every_cpu)
{
	static struct slab_storm t;
	u64 start = mm_test_buddy_free();
	unsigned per_cpu = SLAB_STORM_TOTAL / num_online_cpus();
	t = (struct slab_storm){.steps = MAX(per_cpu, SLAB_STORM_MIN_PER_CPU)};
	t.c = kmem_cache_create("test-storm", sizeof(struct slab_obj), 0, 0, NULL);
	ASSERT_TRUE(t.c != NULL);
	smp_run_all(slab_storm_worker, &t);
	EXPECT_EQ(atomic_read(&t.failures), 0);
	EXPECT_EQ(atomic_read(&t.corrupt), 0);
	struct kmem_cache_stats s;
	kmem_cache_shrink(t.c);
	kmem_cache_stats(t.c, &s);
	EXPECT_EQ(s.slabs, 0);
	EXPECT_EQ(kmem_cache_destroy(t.c), 0);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

/* Any build: a pointer that is no object of the cache is refused and reported. */
TEST(slab, bad_free_reported)
{
	test_expect_message("slab: ");
	struct kmem_cache *c = kmem_cache_create("test-badfree", 64, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	char *obj = kmem_cache_alloc(c);
	ASSERT_TRUE(obj != NULL);
	u64 before = slab_debug_count(SLAB_BUG_BAD_FREE);
	kmem_cache_free(c, obj + 8);
	EXPECT_EQ(slab_debug_count(SLAB_BUG_BAD_FREE), before + 1);
	kmem_cache_free(c, obj);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

/* DEBUG=1: the report names the cache and the function that made the bad call. */
static bool report_is(enum slab_debug_kind kind, const char *cache, const char *caller_fn)
{
	struct slab_debug_report r;
	if (!EXPECT_TRUE(slab_debug_last(&r)))
		return false;
	uintptr_t off;
	const char *fn = ksym_lookup(r.caller, &off, NULL);
	bool ok = EXPECT_EQ(r.kind, kind);
	ok &= EXPECT_TRUE(!strcmp(r.cache, cache));
	ok &= EXPECT_TRUE(fn && !strcmp(fn, caller_fn));
	return ok;
}

static void __noinline buggy_double_free(struct kmem_cache *c, void *obj)
{
	kmem_cache_free(c, obj);
	kmem_cache_free(c, obj);
	barrier(); /* not a tail call: the report must name this function */
}

TEST(slab, debug_double_free_reported)
{
	test_expect_message("slab: ");
	if (!slab_debug_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	struct kmem_cache *c = kmem_cache_create("test-dfree", 48, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	void *obj = kmem_cache_alloc(c);
	ASSERT_TRUE(obj != NULL);
	u64 before = slab_debug_count(SLAB_BUG_DOUBLE_FREE);
	buggy_double_free(c, obj);
	EXPECT_EQ(slab_debug_count(SLAB_BUG_DOUBLE_FREE), before + 1);
	report_is(SLAB_BUG_DOUBLE_FREE, "test-dfree", "buggy_double_free");
	/* The second free was refused: the cache is consistent and empties. */
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

static void __noinline buggy_overflow(struct kmem_cache *c, u8 *obj, size_t size)
{
	obj[size] = 0; /* one byte past the end */
	kmem_cache_free(c, obj);
	barrier();
}

static void __noinline buggy_underflow(u8 *obj)
{
	obj[-1] = 0; /* one byte before the start */
	kfree(obj);
	barrier();
}

TEST(slab, debug_overflow_reported)
{
	test_expect_message("slab: ");
	if (!slab_debug_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	struct kmem_cache *c = kmem_cache_create("test-overflow", 45, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	u8 *obj = kmem_cache_alloc(c);
	ASSERT_TRUE(obj != NULL);
	u64 before = slab_debug_count(SLAB_BUG_REDZONE);
	buggy_overflow(c, obj, 45);
	EXPECT_EQ(slab_debug_count(SLAB_BUG_REDZONE), before + 1);
	report_is(SLAB_BUG_REDZONE, "test-overflow", "buggy_overflow");
	EXPECT_EQ(kmem_cache_destroy(c), 0);

	u8 *k = kmalloc(100);
	ASSERT_TRUE(k != NULL);
	buggy_underflow(k);
	EXPECT_EQ(slab_debug_count(SLAB_BUG_REDZONE), before + 2);
	report_is(SLAB_BUG_REDZONE, "kmalloc-128", "buggy_underflow");
}

TEST(slab, debug_use_after_free_reported)
{
	test_expect_message("slab: ");
	if (!slab_debug_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	struct kmem_cache *c = kmem_cache_create("test-uaf", 64, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	u64 *obj = kmem_cache_alloc(c);
	ASSERT_TRUE(obj != NULL);
	kmem_cache_free(c, obj);
	u64 before = slab_debug_count(SLAB_BUG_POISON);
	WRITE_ONCE(obj[3], 42); /* write after free */
	/* This CPU's array hands the same object out again, and the poison check sees the write. */
	u64 *again = kmem_cache_alloc(c);
	EXPECT_TRUE(again == obj);
	EXPECT_EQ(slab_debug_count(SLAB_BUG_POISON), before + 1);
	kmem_cache_free(c, again);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

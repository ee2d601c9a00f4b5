/*
 * Tree RCU's guarantee to readers: the grace-period guarantee (and an expedited grace
 * period waiting for readers held inside across the call), an rcutorture-like test
 * (and its proof that it catches a broken RCU), kfree_rcu() freeing only after its
 * readers left, and SLAB_TYPESAFE_BY_RCU slabs outliving their readers. How grace
 * periods are run (callbacks, IPIs, stall warnings) is rcu_gp_test.c's; every wait
 * has a deadline (rcu_test_util.h).
 */
#include <grace/arch.h>
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "rcu_test_util.h"

/* Spins inside / outside a reader's section: to overlap an update, and to let IPIs in between. */
#define READER_INSIDE_SPINS 100
#define READER_OUTSIDE_SPINS 100

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		cpu_relax();
}

/* ---- the grace-period guarantee ---- */

static struct {
	u64 entered[MAX_CPUS] __cacheline_aligned; /* sections begun (each CPU its own slot) */
	u64 exited[MAX_CPUS] __cacheline_aligned;  /* sections ended */
	u32 stop;
	u32 updates, violations;
	struct smp_sync start;
	unsigned updater;
	bool expedited;
} gpg;

static void gp_guarantee_fn(void *arg)
{
	unsigned cpu = smp_processor_id();
	smp_sync_wait(&gpg.start, num_online_cpus());
	if (cpu == gpg.updater) {
		u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS / 4;
		unsigned want = 4 + 64 / num_online_cpus();
		static u64 snap[MAX_CPUS];
		unsigned c;
		while (gpg.updates < want && arch_clock_ns() < deadline) {
			smp_mb();
			for_each_online_cpu(c)
				snap[c] = READ_ONCE(gpg.entered[c]);
			if (gpg.expedited)
				synchronize_rcu_expedited();
			else
				synchronize_rcu();
			smp_mb();
			for_each_online_cpu(c)
				if (smp_load_acquire(&gpg.exited[c]) < snap[c])
					gpg.violations++;
			gpg.updates++;
		}
		WRITE_ONCE(gpg.stop, 1);
		return;
	}
	while (!READ_ONCE(gpg.stop)) {
		rcu_read_lock();
		WRITE_ONCE(gpg.entered[cpu], gpg.entered[cpu] + 1);
		smp_mb();
		spin(READER_INSIDE_SPINS);
		smp_store_release(&gpg.exited[cpu], gpg.exited[cpu] + 1);
		rcu_read_unlock();
		spin(READER_OUTSIDE_SPINS);
	}
}

static void gp_guarantee_run(bool expedited)
{
	gpg = (__typeof__(gpg)){0};
	gpg.expedited = expedited;
	preempt_disable();
	gpg.updater = smp_processor_id();
	preempt_enable();
	u64 before = rcu_gp_completed();
	smp_run_all(gp_guarantee_fn, NULL);
	EXPECT_GE(gpg.updates, 2);
	EXPECT_EQ(gpg.violations, 0);
	if (!expedited)
		EXPECT_GE(rcu_gp_completed() - before, gpg.updates);
}

TEST(rcu, synchronize_waits_for_every_earlier_reader)
{
	gp_guarantee_run(false);
}

TEST(rcu, expedited_waits_for_every_earlier_reader)
{
	gp_guarantee_run(true);
}

/*
 * An expedited grace period waits for a reader that was inside when it was asked
 * for. Readers on other CPUs enter rcu_read_lock() and say so; the updater sets
 * `calling` just before synchronize_rcu_expedited(). Each reader waits for the flag
 * inside its section, then stays EXP_HOLD_NS longer or until the call returned
 * (only a broken one returns while it is inside), counts itself in `exited` and
 * leaves; the updater reads `exited` once the call returned. The hold only gives a
 * broken expedited path time to take a reader's IPI for a quiescent state; with a
 * working one the call cannot return before the readers left, however slow the
 * host. Rounds, so that a reader vCPU the host stopped for the whole hold (its IPI
 * not taken yet when it left) cannot let a broken path through.
 *
 * EXP_HOLD_READERS readers at most: more would only add vCPUs for 2 host cores to run.
 */
#define EXP_HOLD_READERS 3
#define EXP_HOLD_ROUNDS 8
#define EXP_HOLD_NS (20 * NSEC_PER_MSEC) /* ten resends of the expedited IPI (2 ms) */

static struct {
	unsigned updater; /* the CPU running the test */
	unsigned readers;
	atomic_t inside;      /* readers in their section */
	u32 calling;	      /* set just before synchronize_rcu_expedited() */
	atomic_t exited;      /* readers about to rcu_read_unlock() */
	u32 exited_at_return; /* what the updater read once the call returned */
	u32 returned;	      /* set after that */
} exh;

static void exp_hold_fn(void *arg)
{
	(void)arg;
	if (smp_processor_id() == exh.updater) {
		while ((unsigned)atomic_read_acquire(&exh.inside) < exh.readers)
			cpu_relax();
		smp_store_release(&exh.calling, 1);
		synchronize_rcu_expedited();
		exh.exited_at_return = atomic_read_acquire(&exh.exited);
		smp_store_release(&exh.returned, 1);
		return;
	}
	rcu_read_lock();
	atomic_fetch_add_release(&exh.inside, 1);
	while (!smp_load_acquire(&exh.calling))
		cpu_relax();
	u64 end = arch_clock_ns() + EXP_HOLD_NS;
	while (!smp_load_acquire(&exh.returned) && arch_clock_ns() < end)
		cpu_relax();
	/* Pairs with the updater's acquire, after the smp_mb() that ends the call. */
	atomic_fetch_add_release(&exh.exited, 1);
	rcu_read_unlock();
}

TEST(rcu, expedited_waits_for_a_reader_inside_when_it_was_called)
{
	u32 left_early = 0;

	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	unsigned readers = MIN(num_online_cpus() - 1, EXP_HOLD_READERS);
	for (unsigned r = 0; r < EXP_HOLD_ROUNDS; r++) {
		exh = (__typeof__(exh)){.readers = readers};
		preempt_disable();
		exh.updater = smp_processor_id();
		preempt_enable();
		smp_run_on(readers + 1, exp_hold_fn, NULL);
		left_early += readers - exh.exited_at_return;
		EXPECT_EQ(atomic_read(&exh.exited), readers);
	}
	/* Readers still inside when the call returned: it did not wait for them. */
	EXPECT_EQ(left_early, 0);
}

/* ---- rcutorture ---- */

#define TORTURE_PIPE_LEN 10 /* ages counted; an element is reused after this many grace periods */
#define TORTURE_ELEMS 64
#define TORTURE_MIN_WRITES 4 /* past the deadline until this many (bounded by hard_deadline) */

struct torture_elem {
	struct rcu_head rh;
	u32 age;     /* grace periods since it was replaced; written by the writer */
	u32 cb_done; /* its call_rcu callback ran */
	u32 retired; /* on the writer's retired list */
	u32 in_use;
};

static struct {
	struct torture_elem elems[TORTURE_ELEMS];
	struct torture_elem *cur; /* readers: rcu_dereference */
	u32 stop;
	u64 deadline, hard_deadline;
	u64 writes;
	struct smp_sync start;
	unsigned writer;
	u64 hist[MAX_CPUS][TORTURE_PIPE_LEN + 1] __cacheline_aligned; /* per reader CPU */
	u64 cb_early[MAX_CPUS];
} tt;

static void torture_cb(struct rcu_head *rh)
{
	WRITE_ONCE(container_of(rh, struct torture_elem, rh)->cb_done, 1);
}

static struct torture_elem *torture_alloc(void)
{
	for (unsigned i = 0; i < TORTURE_ELEMS; i++) {
		struct torture_elem *e = &tt.elems[i];
		if (!e->in_use && !e->retired && READ_ONCE(e->cb_done)) {
			e->in_use = 1;
			return e;
		}
	}
	return NULL;
}

static void torture_writer(void)
{
	for (;;) {
		u64 now = arch_clock_ns();
		if (now >= tt.hard_deadline ||
		    (now >= tt.deadline && tt.writes >= TORTURE_MIN_WRITES))
			break;
		struct torture_elem *e = torture_alloc();
		if (!e) {
			/* Every element still waits for its callback: let grace periods pass. */
			synchronize_rcu();
			continue;
		}
		WRITE_ONCE(e->age, 0);
		WRITE_ONCE(e->cb_done, 0);
		struct torture_elem *old = tt.cur;
		rcu_assign_pointer(tt.cur, e);
		old->in_use = 0;
		old->retired = 1;
		call_rcu(&old->rh, torture_cb);
		tt.writes++;
		/* A grace period, then every retired element is one older. */
		synchronize_rcu();
		for (unsigned i = 0; i < TORTURE_ELEMS; i++) {
			struct torture_elem *r = &tt.elems[i];
			if (!r->retired)
				continue;
			WRITE_ONCE(r->age, r->age + 1);
			if (r->age >= TORTURE_PIPE_LEN)
				r->retired = 0;
		}
		cond_resched();
	}
}

static void torture_reader(unsigned cpu)
{
	u64 *hist = tt.hist[cpu];
	while (!READ_ONCE(tt.stop)) {
		rcu_read_lock();
		struct torture_elem *p = rcu_dereference(tt.cur);
		spin(READER_INSIDE_SPINS);
		u32 age = READ_ONCE(p->age);
		if (READ_ONCE(p->cb_done))
			tt.cb_early[cpu]++;
		rcu_read_unlock();
		hist[MIN(age, TORTURE_PIPE_LEN)]++;
		spin(READER_OUTSIDE_SPINS);
	}
}

static void torture_fn(void *arg)
{
	unsigned cpu = smp_processor_id();
	smp_sync_wait(&tt.start, num_online_cpus());
	if (cpu == tt.writer) {
		torture_writer();
		WRITE_ONCE(tt.stop, 1);
	} else {
		torture_reader(cpu);
	}
}

/* Run the torture test for a time scaled by CPU count; the errors readers saw. */
static u64 torture_run(bool broken, u64 *writes)
{
	unsigned cpu;
	u64 hist[TORTURE_PIPE_LEN + 1] = {0}, errors = 0, early = 0;

	rcu_barrier(); /* no callback of an earlier run is pending on tt */
	tt = (__typeof__(tt)){0};
	for (unsigned i = 0; i < TORTURE_ELEMS; i++)
		tt.elems[i].cb_done = 1;
	tt.elems[0].in_use = 1;
	tt.elems[0].cb_done = 0;
	RCU_INIT_POINTER(tt.cur, &tt.elems[0]);
	preempt_disable();
	tt.writer = smp_processor_id();
	preempt_enable();
	/* 0.5 s plus 20 ms per CPU: at 64 CPUs a grace period waits for 63 spinning readers. */
	tt.deadline = arch_clock_ns() + NSEC_PER_SEC / 2 + num_online_cpus() * 20 * NSEC_PER_MSEC;
	/*
	 * Past it until TORTURE_MIN_WRITES, for at most a quarter of the test's timeout
	 * plus 400 ms per CPU: at 512 vCPUs on two host cores one grace period past 511
	 * spinning readers took up to 30 s.
	 */
	tt.hard_deadline =
	    arch_clock_ns() + RCU_TEST_TIMEOUT_NS / 4 + num_online_cpus() * 400 * NSEC_PER_MSEC;

	if (broken)
		rcu_set_torture_broken(true);
	smp_run_all(torture_fn, NULL);
	if (broken)
		rcu_set_torture_broken(false);
	rcu_barrier();

	for_each_online_cpu(cpu) {
		for (unsigned a = 0; a <= TORTURE_PIPE_LEN; a++)
			hist[a] += tt.hist[cpu][a];
		early += tt.cb_early[cpu];
	}
	for (unsigned a = 2; a <= TORTURE_PIPE_LEN; a++)
		errors += hist[a];
	printk(
	    "# rcu torture%s: %llu writes, pipeline ages: %llu %llu %llu %llu %llu %llu %llu %llu "
	    "%llu %llu %llu, callbacks early: %llu\n",
	    broken ? " (broken on purpose)" : "", (unsigned long long)tt.writes,
	    (unsigned long long)hist[0], (unsigned long long)hist[1], (unsigned long long)hist[2],
	    (unsigned long long)hist[3], (unsigned long long)hist[4], (unsigned long long)hist[5],
	    (unsigned long long)hist[6], (unsigned long long)hist[7], (unsigned long long)hist[8],
	    (unsigned long long)hist[9], (unsigned long long)hist[10], (unsigned long long)early);
	*writes = tt.writes;
	return errors + early;
}

TEST(rcu, torture)
{
	u64 writes;
	u64 errors = torture_run(false, &writes);
	EXPECT_EQ(errors, 0);
	EXPECT_GE(writes, TORTURE_MIN_WRITES);
}

TEST(rcu, torture_catches_broken_rcu)
{
	if (num_online_cpus() < 2) {
		test_skip("readers and the writer need CPUs of their own");
		return;
	}
	u64 writes;
	u64 errors = torture_run(true, &writes);
	EXPECT_FALSE(rcu_torture_broken());
	EXPECT_GT(errors, 0);
}

/* ---- kfree_rcu ---- */

/*
 * Readers on every even-ranked CPU take every object under rcu_read_lock(); then
 * the odd-ranked CPUs unpublish and kfree_rcu() their share and yield, so that a
 * callback ready without a grace period would run right there (softirqd is the
 * first thread a yield picks). With every reader still inside, nothing may have
 * been freed: the cache, which nobody else uses, still counts every object in use,
 * and every object still holds what was written into it (in a DEBUG=1 build a freed
 * object is poisoned with 0x6b at once). After the readers leave, rcu_barrier()
 * and every object is freed.
 */
#define KFREE_RCU_OBJS 64 /* retired in all, whatever the CPU count */
#define KFREE_RCU_WORDS 6
#define KFREE_RCU_POISON 0x6b6b6b6b6b6b6b6bULL /* slab_debug.c's free poison, as words */

struct kfree_rcu_obj {
	u64 words[KFREE_RCU_WORDS]; /* kfree_rcu_word(i, w) for object i */
	struct rcu_head rh;
};

static struct {
	struct kmem_cache *cache;
	struct kfree_rcu_obj *slot[KFREE_RCU_OBJS]; /* readers: rcu_dereference */
	s32 rank[MAX_CPUS];			    /* position among the online CPUs */
	unsigned readers, updaters;
	struct smp_sync holding;
	atomic_t retired;  /* updaters that have retired their share and yielded */
	atomic_t damaged;  /* words a reader found changed under its read lock */
	atomic_t poisoned; /* of them, the debug build's free poison */
	u64 in_use_held;   /* objects in use while every reader held them */
} kr;

static u64 kfree_rcu_word(unsigned i, unsigned w)
{
	return 0x5246524355000000ULL ^ (u64)i << 8 ^ w; /* never the poison word */
}

static u64 kfree_rcu_in_use(void)
{
	struct kmem_cache_stats s;
	kmem_cache_stats(kr.cache, &s);
	return s.objects - s.free_objects - s.cpu_objects;
}

static void kfree_rcu_fn(void *arg)
{
	unsigned cpu = smp_processor_id(), n = num_online_cpus();
	s32 rank = kr.rank[cpu];

	if (rank % 2) {
		/* An updater: its share of the objects, once every reader holds them all. */
		smp_sync_wait(&kr.holding, n);
		for (unsigned i = (unsigned)rank / 2; i < KFREE_RCU_OBJS; i += kr.updaters) {
			struct kfree_rcu_obj *p = rcu_dereference_protected(kr.slot[i]);
			rcu_assign_pointer(kr.slot[i], NULL);
			kfree_rcu(p, rh);
		}
		yield();
		atomic_fetch_add_release(&kr.retired, 1);
		return;
	}
	static struct kfree_rcu_obj *held[MAX_CPUS][KFREE_RCU_OBJS];
	struct kfree_rcu_obj **mine = held[cpu];
	rcu_read_lock();
	for (unsigned i = 0; i < KFREE_RCU_OBJS; i++)
		mine[i] = rcu_dereference(kr.slot[i]);
	smp_sync_wait(&kr.holding, n);
	while ((unsigned)atomic_read_acquire(&kr.retired) < kr.updaters)
		cpu_relax();
	if (rank == 0)
		kr.in_use_held = kfree_rcu_in_use();
	for (unsigned i = 0; i < KFREE_RCU_OBJS; i++)
		for (unsigned w = 0; w < KFREE_RCU_WORDS; w++) {
			u64 v = READ_ONCE(mine[i]->words[w]);
			if (v == kfree_rcu_word(i, w))
				continue;
			atomic_inc(&kr.damaged);
			if (v == KFREE_RCU_POISON)
				atomic_inc(&kr.poisoned);
		}
	rcu_read_unlock();
}

TEST(rcu, kfree_rcu_frees_only_after_every_reader_left)
{
	unsigned cpu;

	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs: a reader and an updater");
		return;
	}
	kr = (__typeof__(kr)){0};
	for_each_online_cpu(cpu) {
		kr.rank[cpu] = (s32)(kr.readers + kr.updaters);
		if (kr.rank[cpu] % 2)
			kr.updaters++;
		else
			kr.readers++;
	}
	kr.cache = kmem_cache_create("test-kfree-rcu", sizeof(struct kfree_rcu_obj), 0, 0, NULL);
	ASSERT_TRUE(kr.cache != NULL);
	for (unsigned i = 0; i < KFREE_RCU_OBJS; i++) {
		struct kfree_rcu_obj *p = kmem_cache_alloc(kr.cache);
		ASSERT_TRUE(p != NULL);
		for (unsigned w = 0; w < KFREE_RCU_WORDS; w++)
			p->words[w] = kfree_rcu_word(i, w);
		rcu_assign_pointer(kr.slot[i], p);
	}
	u64 before = kfree_rcu_in_use();
	smp_run_all(kfree_rcu_fn, NULL);
	/* While the readers held them: none freed, none changed, no poison seen. */
	EXPECT_EQ(kr.in_use_held, before);
	EXPECT_EQ(atomic_read(&kr.damaged), 0);
	EXPECT_EQ(atomic_read(&kr.poisoned), 0);
	rcu_barrier();
	/* Once they left, a grace period and every object is freed. */
	EXPECT_EQ(before, KFREE_RCU_OBJS);
	EXPECT_EQ(kfree_rcu_in_use(), 0);
	EXPECT_EQ(kmem_cache_destroy(kr.cache), 0);
}

/* ---- SLAB_TYPESAFE_BY_RCU ---- */

static struct typesafe_test {
	u32 reading, release;
} tst;

/* A reader on another CPU, held until told: grace periods cannot end meanwhile. */
static int typesafe_reader(void *arg)
{
	(void)arg;
	u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS;
	rcu_read_lock();
	smp_store_release(&tst.reading, 1);
	while (!smp_load_acquire(&tst.release) && arch_clock_ns() < deadline)
		cpu_relax();
	rcu_read_unlock();
	return 0;
}

TEST(rcu, typesafe_by_rcu_slab_pages_wait_for_a_grace_period)
{
	enum { N = 300 };
	static void *objs[N];
	unsigned self, other = 0, cpu;
	if (num_online_cpus() < 2) {
		test_skip("the reader must run on another CPU");
		return;
	}
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	for_each_online_cpu(cpu)
		if (cpu != self)
			other = cpu;
	struct kmem_cache *c = kmem_cache_create("test-rcu-gp", 128, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	ASSERT_TRUE(c != NULL);
	for (int i = 0; i < N; i++)
		ASSERT_TRUE((objs[i] = kmem_cache_alloc(c)) != NULL);

	tst = (struct typesafe_test){0};
	struct task *t = kthread_create(typesafe_reader, NULL, "rcu_reader");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, other);
	wake_up_process(t);
	u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS;
	while (!smp_load_acquire(&tst.reading) && arch_clock_ns() < deadline)
		msleep(1);

	/* Freed and shrunk while the reader reads: the slabs must outlive it. */
	for (int i = 0; i < N; i++)
		kmem_cache_free(c, objs[i]);
	kmem_cache_shrink(c);
	msleep(100); /* ten jiffies: broken RCU would have released them by now */
	struct kmem_cache_stats s;
	kmem_cache_stats(c, &s);
	u64 held = s.slabs;
	smp_store_release(&tst.release, 1);
	kthread_join(t);
	EXPECT_GT(held, 1);
	rcu_barrier();
	kmem_cache_stats(c, &s);
	EXPECT_EQ(s.slabs, 0);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
}

/*
 * Timer and tick selftests: many timers across every CPU fire exactly once, never
 * early, on the CPU they were added on; cancelled timers never fire; timer_modify
 * moves a pending timer; a fn that re-adds its own timer, here or on another CPU;
 * timer_cancel_sync waits for a fn running on another CPU; the tick runs on a busy
 * CPU and is stopped on an idle one.
 *
 * Every wait is bounded (TIMER_TEST_TIMEOUT_NS) and every check is an ordering
 * (fired at or after expires; fired before a later timer on the same CPU), never a
 * speed: 64 vCPUs share 2 host cores.
 */
#include <grace/arch.h>
#include <grace/kthread.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/timer.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define TIMER_TEST_TIMEOUT_NS (20 * NSEC_PER_SEC)
#define MANY_TIMERS 1000

static unsigned online[MAX_CPUS], nr_online;

static void online_list(void)
{
	unsigned cpu;
	nr_online = 0;
	for_each_online_cpu(cpu)
		online[nr_online++] = cpu;
}

static unsigned online_rank(unsigned cpu)
{
	for (unsigned i = 0; i < nr_online; i++)
		if (online[i] == cpu)
			return i;
	return 0;
}

/* Spin until *counter reaches target or the timeout passes; false on timeout. */
static bool wait_count(const atomic_t *counter, u32 target)
{
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	while ((u32)atomic_read_acquire(counter) < target) {
		if (arch_clock_ns() > deadline)
			return false;
		cpu_relax();
	}
	return true;
}

/* One timer and what its fn saw. */
struct probe {
	struct timer timer;
	u64 expires;	/* what it was added for; written before the add */
	u32 target;	/* CPU it was added on */
	atomic_t fired; /* times fn ran */
	u32 fired_cpu;
	u64 fired_at;
	u32 cancelled; /* timer_cancel() returned true */
};

static struct probe probes[MANY_TIMERS];
static atomic_t probes_fired;

static void probe_fn(struct timer *t)
{
	struct probe *p = container_of(t, struct probe, timer);
	p->fired_at = arch_clock_ns();
	p->fired_cpu = smp_processor_id();
	atomic_fetch_add_release(&p->fired, 1);
	atomic_fetch_add_release(&probes_fired, 1);
}

static void probe_add(struct probe *p, u64 expires, unsigned cpu)
{
	timer_init(&p->timer, probe_fn);
	p->expires = expires;
	p->target = cpu;
	timer_add_on(&p->timer, expires, cpu);
}

/*
 * Check probes[first, first + n) whose fn should have run once: not early, on its
 * CPU, not pending. Counts rather than one line per probe, so a failure does not flood.
 */
static void probes_check_fired(unsigned first, unsigned n, unsigned stride)
{
	unsigned not_once = 0, early = 0, wrong_cpu = 0, pending = 0;
	for (unsigned i = first; i < first + n * stride; i += stride) {
		struct probe *p = &probes[i];
		u32 fired = atomic_read_acquire(&p->fired);
		not_once += fired != 1;
		early += fired && p->fired_at < p->expires;
		wrong_cpu += fired && p->fired_cpu != p->target;
		pending += timer_pending(&p->timer);
	}
	EXPECT_EQ(not_once, 0);
	EXPECT_EQ(early, 0);
	EXPECT_EQ(wrong_cpu, 0);
	EXPECT_EQ(pending, 0);
}

/*
 * A timer on every online CPU a little later than anything queued before, and
 * wait for all of them: each CPU's queue fires in deadline order, so once its
 * sentinel ran, every earlier timer there has run (or was really cancelled).
 */
static struct probe sentinels[MAX_CPUS];
static atomic_t sentinels_fired;

static void sentinel_fn(struct timer *t)
{
	atomic_fetch_add_release(&sentinels_fired, 1);
}

static bool flush_all_cpus(u64 after)
{
	u64 when = MAX(after, arch_clock_ns()) + 1;
	atomic_set(&sentinels_fired, 0);
	for (unsigned i = 0; i < nr_online; i++) {
		timer_init(&sentinels[i].timer, sentinel_fn);
		timer_add_on(&sentinels[i].timer, when, online[i]);
	}
	return wait_count(&sentinels_fired, nr_online);
}

/* ---- many timers, added from every CPU onto every CPU ---- */

static void many_worker(void *arg)
{
	unsigned n = nr_online, r = online_rank(smp_processor_id());
	for (unsigned i = r; i < MANY_TIMERS; i += n) {
		/* Onto another CPU (a different one for each of ours), 0-18 ms ahead. */
		unsigned target = online[(r + 1 + i / n) % n];
		u64 delay = (i % 37) * 500 * NSEC_PER_USEC;
		probe_add(&probes[i], arch_clock_ns() + delay, target);
	}
}

TEST(timer, many_fire_once_never_early)
{
	online_list();
	for (unsigned i = 0; i < MANY_TIMERS; i++)
		probes[i] = (struct probe){0};
	atomic_set(&probes_fired, 0);
	smp_run_all(many_worker, NULL);
	EXPECT_TRUE(wait_count(&probes_fired, MANY_TIMERS));
	probes_check_fired(0, MANY_TIMERS, 1);
	/* Not pending any more, so none can fire a second time; recheck after a flush. */
	EXPECT_TRUE(flush_all_cpus(0));
	EXPECT_EQ(atomic_read_acquire(&probes_fired), MANY_TIMERS);
}

/* ---- cancelled timers never fire ---- */

struct cancel_round {
	struct smp_sync added;
	u64 expires;
	unsigned pairs;
};

static void cancel_worker(void *arg)
{
	struct cancel_round *c = arg;
	unsigned n = nr_online, r = online_rank(smp_processor_id());
	/* Pair k: two timers, same CPU (the next one after the adder), same deadline. */
	for (unsigned k = r; k < c->pairs; k += n) {
		unsigned target = online[(r + 1) % n];
		probe_add(&probes[2 * k], c->expires, target);
		probe_add(&probes[2 * k + 1], c->expires, target);
	}
	smp_sync_wait(&c->added, n);
	/* Cancel the odd one of the pairs another CPU added. */
	for (unsigned k = (r + 1) % n; k < c->pairs; k += n)
		probes[2 * k + 1].cancelled = timer_cancel(&probes[2 * k + 1].timer);
}

TEST(timer, cancelled_never_fire)
{
	static struct cancel_round c;
	unsigned cancelled = 0;
	online_list();
	unsigned pairs = MIN(MANY_TIMERS / 2, 8 * nr_online);

	/* A round whose deadline passed before any cancel proves nothing: retry, later. */
	for (u64 delay = 500 * NSEC_PER_MSEC; !cancelled && delay <= 8 * NSEC_PER_SEC; delay *= 2) {
		for (unsigned i = 0; i < 2 * pairs; i++)
			probes[i] = (struct probe){0};
		atomic_set(&probes_fired, 0);
		c = (struct cancel_round){.expires = arch_clock_ns() + delay, .pairs = pairs};
		smp_run_all(cancel_worker, &c);

		unsigned late = 0;
		for (unsigned k = 0; k < pairs; k++) {
			cancelled += probes[2 * k + 1].cancelled;
			late += !probes[2 * k + 1].cancelled;
		}
		/* The even ones, and odd ones whose cancel came too late, fire. */
		ASSERT_TRUE(wait_count(&probes_fired, pairs + late));
		ASSERT_TRUE(flush_all_cpus(c.expires));
		probes_check_fired(0, pairs, 2);
		unsigned bad = 0;
		for (unsigned k = 0; k < pairs; k++) {
			struct probe *p = &probes[2 * k + 1];
			bad += atomic_read(&p->fired) != (p->cancelled ? 0 : 1);
			bad += timer_pending(&p->timer);
		}
		EXPECT_EQ(bad, 0);
		EXPECT_EQ(atomic_read_acquire(&probes_fired), pairs + late);
		if (test_failed())
			return;
	}
	EXPECT_GT(cancelled, 0);
}

/* ---- timer_modify ---- */

struct modify_call {
	struct probe *p;
	u64 expires;
	bool was_pending;
};

static void modify_from_ipi(void *arg)
{
	struct modify_call *m = arg;
	m->p->expires = m->expires;
	m->was_pending = timer_modify(&m->p->timer, m->expires);
}

TEST(timer, modify_moves_pending)
{
	online_list();
	struct probe *p = &probes[0];
	unsigned target = online[1 % nr_online];
	unsigned other = online[2 % nr_online];
	*p = (struct probe){0};
	atomic_set(&probes_fired, 0);

	/* Far away: if it fires within the timeout, the modify moved it. */
	u64 now = arch_clock_ns();
	probe_add(p, now + 3600 * NSEC_PER_SEC, target);
	p->expires = now + 1800 * NSEC_PER_SEC;
	EXPECT_TRUE(timer_modify(&p->timer, p->expires));
	EXPECT_TRUE(timer_pending(&p->timer));

	/* From another CPU's IPI handler (interrupt context), to 1 ms from now. */
	struct modify_call m = {p, arch_clock_ns() + NSEC_PER_MSEC, false};
	if (other == smp_processor_id())
		modify_from_ipi(&m);
	else
		ASSERT_EQ(smp_call(other, modify_from_ipi, &m, true), 0);
	EXPECT_TRUE(m.was_pending);
	ASSERT_TRUE(wait_count(&probes_fired, 1));
	probes_check_fired(0, 1, 1);

	/* Not pending: modify re-arms it on the same CPU and says it was not pending. */
	p->expires = arch_clock_ns() + 100 * NSEC_PER_USEC;
	EXPECT_FALSE(timer_modify(&p->timer, p->expires));
	ASSERT_TRUE(wait_count(&probes_fired, 2));
	EXPECT_EQ(atomic_read(&p->fired), 2);
	EXPECT_GE(p->fired_at, p->expires);
	EXPECT_EQ(p->fired_cpu, target);
	EXPECT_FALSE(timer_cancel(&p->timer));
}

/* ---- a fn re-adding its own timer ---- */

#define READD_COUNT 20
#define READD_DELAY_NS (200 * NSEC_PER_USEC)

struct readd {
	struct timer timer;
	u64 expires;
	atomic_t fired; /* times fn ran; released after the rest */
	u32 early, wrong_cpu;
	u32 cpu;  /* where the next firing must happen */
	u32 hops; /* how many firings to do in all */
	bool hop; /* re-add on the next online CPU instead of this one */
};

static struct readd readds[MAX_CPUS + 1];

static void readd_fn(struct timer *t)
{
	struct readd *r = container_of(t, struct readd, timer);
	u64 now = arch_clock_ns();
	unsigned self = smp_processor_id();
	r->early += now < r->expires;
	r->wrong_cpu += self != r->cpu;
	u32 fired = (u32)atomic_read(&r->fired) + 1;
	if (fired < r->hops) {
		r->expires = now + READD_DELAY_NS;
		if (r->hop) {
			/* From its own fn, onto another CPU: moved once this fn returns. */
			r->cpu = online[(online_rank(self) + 1) % nr_online];
			timer_add_on(t, r->expires, r->cpu);
		} else {
			timer_add(t, r->expires);
		}
	}
	atomic_set_release(&r->fired, fired);
}

static void readd_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	struct readd *r = &readds[cpu];
	*r = (struct readd){.cpu = cpu, .hops = READD_COUNT};
	timer_init(&r->timer, readd_fn);
	r->expires = arch_clock_ns() + READD_DELAY_NS;
	timer_add(&r->timer, r->expires);
	/* Halt until done: each firing must wake this CPU. */
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	arch_irq_disable();
	while (atomic_read_acquire(&r->fired) < READD_COUNT && arch_clock_ns() < deadline)
		arch_idle();
	arch_irq_enable();
	timer_cancel_sync(&r->timer);
}

TEST(timer, fn_readds_itself)
{
	unsigned cpu;
	online_list();
	smp_run_all(readd_worker, NULL);
	for_each_online_cpu(cpu) {
		struct readd *r = &readds[cpu];
		EXPECT_EQ(atomic_read(&r->fired), READD_COUNT);
		EXPECT_EQ(r->early, 0);
		EXPECT_EQ(r->wrong_cpu, 0);
	}
}

TEST(timer, fn_readds_itself_on_next_cpu)
{
	online_list();
	struct readd *r = &readds[MAX_CPUS];
	/* Around the online CPUs three times; idle CPUs must be woken by IPI for each hop. */
	*r = (struct readd){.cpu = smp_processor_id(), .hops = MAX(3 * nr_online, 10), .hop = true};
	timer_init(&r->timer, readd_fn);
	r->expires = arch_clock_ns() + READD_DELAY_NS;
	timer_add(&r->timer, r->expires);
	EXPECT_TRUE(wait_count(&r->fired, r->hops));
	timer_cancel_sync(&r->timer);
	EXPECT_EQ(atomic_read(&r->fired), r->hops);
	EXPECT_EQ(r->early, 0);
	EXPECT_EQ(r->wrong_cpu, 0);
	EXPECT_FALSE(timer_pending(&r->timer));
}

/* A chain of distinct timers, each added by the previous one's fn onto the next CPU. */
static unsigned chain_len;

static void chain_fn(struct timer *t)
{
	struct probe *p = container_of(t, struct probe, timer);
	probe_fn(t);
	unsigned i = p - probes;
	if (i + 1 < chain_len) {
		struct probe *next = &probes[i + 1];
		timer_init(&next->timer, chain_fn);
		next->expires = arch_clock_ns() + READD_DELAY_NS;
		next->target = online[(online_rank(smp_processor_id()) + 1) % nr_online];
		timer_add_on(&next->timer, next->expires, next->target);
	}
}

TEST(timer, fn_adds_timer_on_other_cpu)
{
	online_list();
	chain_len = MIN(MANY_TIMERS, MAX(3 * nr_online, 10));
	for (unsigned i = 0; i < chain_len; i++)
		probes[i] = (struct probe){0};
	atomic_set(&probes_fired, 0);
	timer_init(&probes[0].timer, chain_fn);
	probes[0].expires = arch_clock_ns();
	probes[0].target = smp_processor_id();
	timer_add(&probes[0].timer, probes[0].expires);
	EXPECT_TRUE(wait_count(&probes_fired, chain_len));
	probes_check_fired(0, chain_len, 1);
}

/* ---- timer_cancel_sync against a running fn ---- */

struct sync_test {
	struct timer timer, releaser;
	atomic_t in_fn; /* fn has started (counts to 1) */
	u32 release, done;
	atomic_t fired;
	u64 readd_expires;
};

static struct sync_test sync_t;

static void sync_slow_fn(struct timer *t)
{
	struct sync_test *s = &sync_t;
	atomic_inc(&s->fired);
	/* Pending again while running: cancel_sync must take that back too. */
	s->readd_expires = arch_clock_ns() + 50 * NSEC_PER_MSEC;
	timer_add(t, s->readd_expires);
	atomic_set_release(&s->in_fn, 1);
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	while (!smp_load_acquire(&s->release) && arch_clock_ns() < deadline)
		cpu_relax();
	smp_store_release(&s->done, 1);
}

static void sync_release_fn(struct timer *t)
{
	smp_store_release(&sync_t.release, 1);
}

TEST(timer, cancel_sync_waits_for_running_fn)
{
	struct sync_test *s = &sync_t;
	online_list();
	if (nr_online < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	unsigned self = smp_processor_id();
	unsigned target = online[(online_rank(self) + 1) % nr_online];
	*s = (struct sync_test){0};
	timer_init(&s->timer, sync_slow_fn);
	timer_init(&s->releaser, sync_release_fn);

	timer_add_on(&s->timer, arch_clock_ns(), target);
	if (!EXPECT_TRUE(wait_count(&s->in_fn, 1))) {
		smp_store_release(&s->release, 1);
		timer_cancel_sync(&s->timer);
		return;
	}
	/* fn now spins on target until this CPU's releaser fires, while we are in cancel_sync. */
	timer_add(&s->releaser, arch_clock_ns() + 2 * NSEC_PER_MSEC);
	EXPECT_TRUE(timer_cancel_sync(&s->timer)); /* the re-add was pending */
	EXPECT_EQ(smp_load_acquire(&s->release), 1);
	EXPECT_EQ(smp_load_acquire(&s->done), 1); /* fn had returned */
	EXPECT_FALSE(timer_pending(&s->timer));
	/* Past the re-add's deadline on target: it never fired a second time. */
	ASSERT_TRUE(flush_all_cpus(s->readd_expires));
	EXPECT_EQ(atomic_read(&s->fired), 1);
	EXPECT_FALSE(timer_cancel_sync(&s->timer));
}

/* ---- the tick ---- */

struct tick_test {
	atomic_t started, finished;
	atomic_t ticking, interrupts_seen; /* per sharing thread, counted */
};

/* Two of these share one CPU: its tick must run, and interrupt each of them. */
static int tick_sharer(void *arg)
{
	struct tick_test *t = arg;
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id(); /* bound: stable */
	arch_irq_restore(flags);
	atomic_inc_return(&t->started);
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	while (atomic_read_acquire(&t->started) < 2 && arch_clock_ns() < deadline)
		cpu_relax();
	/* Busy with interrupts on and no timer of ours: the tick alone must interrupt us. */
	u64 before = timer_interrupts(cpu);
	while (timer_interrupts(cpu) < before + 2 && arch_clock_ns() < deadline)
		cpu_relax();
	if (timer_interrupts(cpu) >= before + 2)
		atomic_inc(&t->interrupts_seen);
	if (tick_running())
		atomic_inc(&t->ticking);
	/* Neither leaves (which would stop the tick) before both have looked. */
	atomic_inc_return(&t->finished);
	while (atomic_read_acquire(&t->finished) < 2 && arch_clock_ns() < deadline)
		cpu_relax();
	return 0;
}

static void tick_alone(void *arg)
{
	atomic_t *still_ticking = arg;
	/* One thread per CPU: the tick stops (at the latest at its next tick). */
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	while (tick_running() && arch_clock_ns() < deadline)
		cpu_relax();
	if (tick_running())
		atomic_inc(still_ticking);
}

static void tick_probe(void *arg)
{
	*(bool *)arg = tick_running();
}

TEST(tick, runs_only_while_threads_share_a_cpu)
{
	static struct tick_test t;
	unsigned cpu, self = smp_processor_id(), target = self;
	atomic_t still_ticking = ATOMIC_INIT(0);

	smp_run_all(tick_alone, &still_ticking);
	EXPECT_EQ(atomic_read(&still_ticking), 0);

	for_each_online_cpu(cpu)
		if (cpu != self)
			target = cpu;
	t = (struct tick_test){0};
	struct task *a = kthread_create(tick_sharer, &t, "tick-a");
	struct task *b = kthread_create(tick_sharer, &t, "tick-b");
	ASSERT_TRUE(a && b);
	kthread_bind(a, target);
	kthread_bind(b, target);
	wake_up_process(a);
	wake_up_process(b);
	kthread_join(a);
	kthread_join(b);
	EXPECT_EQ(atomic_read(&t.interrupts_seen), 2);
	EXPECT_EQ(atomic_read(&t.ticking), 2);

	/* Idle CPUs: an IPI that interrupts one finds its tick stopped (once it got there). */
	for_each_online_cpu(cpu) {
		if (cpu == self)
			continue;
		bool running = true;
		u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
		while (running && arch_clock_ns() < deadline)
			ASSERT_EQ(smp_call(cpu, tick_probe, &running, true), 0);
		EXPECT_FALSE(running);
	}
}

TEST(tick, jiffies_follow_the_clock)
{
	u64 j = jiffies;
	EXPECT_LE(jiffies_to_ns(j), arch_clock_ns());
	u64 deadline = arch_clock_ns() + TIMER_TEST_TIMEOUT_NS;
	while (jiffies == j && arch_clock_ns() < deadline)
		cpu_relax();
	EXPECT_GT(jiffies, j);
	EXPECT_EQ(ns_to_jiffies(1), 1);
	EXPECT_EQ(ns_to_jiffies(TICK_NSEC), 1);
	EXPECT_EQ(ns_to_jiffies(TICK_NSEC + 1), 2);
	EXPECT_EQ(jiffies_to_ns(HZ), NSEC_PER_SEC);
}

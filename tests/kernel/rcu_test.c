/*
 * Tree RCU: the grace-period guarantee (and an expedited grace period waiting for
 * readers held inside across the call), an rcutorture-like test (and its proof
 * that it catches a broken RCU), rcu_barrier, per-CPU callback order, call_rcu
 * from a timer, a 100,000-callback flood, no IPIs to idle CPUs, stall warnings,
 * kfree_rcu() freeing only after its readers left, and SLAB_TYPESAFE_BY_RCU slabs
 * outliving their readers.
 *
 * Work is sized by CPU count and every wait has a deadline: 64 vCPUs share two
 * host cores, so a grace period that needs an IPI to a spinning reader can take
 * a good fraction of a second there.
 */
#include <grace/arch.h>
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/rculist.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define RCU_TEST_TIMEOUT_NS (120 * NSEC_PER_SEC)
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

/* ---- callbacks: barrier, order, interrupts, flood ---- */

#define CB_PER_CPU 64

static struct cb_test {
	struct rcu_head heads[MAX_CPUS][CB_PER_CPU];
	u32 next_seq[MAX_CPUS] __cacheline_aligned; /* the owner CPU's callbacks only */
	atomic_t disorder, wrong_cpu;
	atomic_t ran;
} cbt;

static void order_cb(struct rcu_head *rh)
{
	/* heads[cpu][i] is at a fixed place: recover the owner and sequence from it. */
	unsigned idx = (unsigned)(rh - &cbt.heads[0][0]);
	unsigned cpu = idx / CB_PER_CPU, seq = idx % CB_PER_CPU;
	if (cpu != smp_processor_id())
		atomic_inc(&cbt.wrong_cpu);
	if (cbt.next_seq[cpu] != seq)
		atomic_inc(&cbt.disorder);
	cbt.next_seq[cpu] = seq + 1;
	atomic_inc(&cbt.ran);
}

static void order_fn(void *arg)
{
	unsigned cpu = smp_processor_id();
	for (unsigned i = 0; i < CB_PER_CPU; i++) {
		call_rcu(&cbt.heads[cpu][i], order_cb);
		/* Spread over several grace periods, so the list has several segments. */
		if (i % 16 == 15)
			msleep(3);
	}
}

TEST(rcu, callbacks_keep_per_cpu_order_and_barrier_waits_for_all)
{
	cbt = (struct cb_test){0};
	smp_run_all(order_fn, NULL);
	rcu_barrier();
	EXPECT_EQ(atomic_read_acquire(&cbt.ran), num_online_cpus() * CB_PER_CPU);
	EXPECT_EQ(atomic_read(&cbt.disorder), 0);
	EXPECT_EQ(atomic_read(&cbt.wrong_cpu), 0);
}

static atomic_t barrier_ran;
static struct rcu_head barrier_heads[MAX_CPUS];

static void barrier_cb(struct rcu_head *rh)
{
	atomic_fetch_add_release(&barrier_ran, 1);
}

static void barrier_fn(void *arg)
{
	call_rcu(&barrier_heads[smp_processor_id()], barrier_cb);
}

TEST(rcu, barrier_waits_for_callbacks_on_every_cpu)
{
	atomic_set(&barrier_ran, 0);
	smp_run_all(barrier_fn, NULL);
	rcu_barrier();
	EXPECT_EQ(atomic_read_acquire(&barrier_ran), num_online_cpus());
}

#define IRQ_TEST_CPUS 8

static struct irq_test {
	struct timer timers[IRQ_TEST_CPUS];
	struct rcu_head heads[IRQ_TEST_CPUS];
	u64 need[IRQ_TEST_CPUS]; /* gp_seq the callback must not run before */
	atomic_t queued, ran, early, not_irq;
} irt;

static void irq_cb(struct rcu_head *rh)
{
	unsigned i = (unsigned)(rh - irt.heads);
	if (rcu_gp_seq() < irt.need[i])
		atomic_inc(&irt.early);
	atomic_fetch_add_release(&irt.ran, 1);
}

static void irq_timer_fn(struct timer *t)
{
	unsigned i = (unsigned)(t - irt.timers);
	if (!in_interrupt() || !arch_irqs_disabled())
		atomic_inc(&irt.not_irq);
	/* A full grace period must follow: the one after the current (or next) one. */
	u64 s = rcu_gp_seq();
	irt.need[i] = (s + 3) & ~1ULL;
	call_rcu(&irt.heads[i], irq_cb);
	atomic_fetch_add_release(&irt.queued, 1);
}

TEST(rcu, call_rcu_from_a_timer_interrupt)
{
	unsigned cpu, n = 0;
	irt = (struct irq_test){0};
	for_each_online_cpu(cpu) {
		if (n == IRQ_TEST_CPUS)
			break;
		timer_init(&irt.timers[n], irq_timer_fn);
		timer_add_on(&irt.timers[n], arch_clock_ns() + NSEC_PER_MSEC, cpu);
		n++;
	}
	u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS;
	while ((unsigned)atomic_read_acquire(&irt.ran) < n && arch_clock_ns() < deadline)
		msleep(5);
	EXPECT_EQ(atomic_read_acquire(&irt.queued), n);
	EXPECT_EQ(atomic_read_acquire(&irt.ran), n);
	EXPECT_EQ(atomic_read(&irt.early), 0);
	EXPECT_EQ(atomic_read(&irt.not_irq), 0);
	for (unsigned i = 0; i < n; i++)
		timer_cancel_sync(&irt.timers[i]);
}

#define FLOOD_CALLBACKS 100000

static struct flood_cb {
	struct rcu_head rh;
	u64 need;
} flood[FLOOD_CALLBACKS];
static atomic_t flood_ran, flood_early;

static void flood_fn(struct rcu_head *rh)
{
	struct flood_cb *f = container_of(rh, struct flood_cb, rh);
	if (rcu_gp_seq() < f->need)
		atomic_inc(&flood_early);
	atomic_inc(&flood_ran);
}

TEST(rcu, flood_of_100000_callbacks_neither_lost_nor_early)
{
	struct cpumask saved = current->allowed;
	atomic_set(&flood_ran, 0);
	atomic_set(&flood_early, 0);
	/* All from one CPU, bound there: past qhimark, bigger batches. */
	preempt_disable();
	unsigned self = smp_processor_id();
	preempt_enable();
	kthread_bind(current, self);
	for (unsigned i = 0; i < FLOOD_CALLBACKS; i++) {
		flood[i].need = (rcu_gp_seq() + 3) & ~1ULL;
		call_rcu(&flood[i].rh, flood_fn);
	}
	set_cpus_allowed(current, &saved);
	rcu_barrier();
	EXPECT_EQ(atomic_read(&flood_ran), FLOOD_CALLBACKS);
	EXPECT_EQ(atomic_read(&flood_early), 0);
}

/* ---- no IPIs to idle CPUs ---- */

TEST(rcu, grace_periods_send_no_ipi_to_idle_cpus)
{
	unsigned cpu, self;
	static struct rcu_cpu_stats before[MAX_CPUS];
	rcu_barrier(); /* nobody has callbacks left from earlier tests */
	msleep(20);
	for_each_online_cpu(cpu)
		rcu_cpu_stats(cpu, &before[cpu]);
	u64 gp0 = rcu_gp_completed();
	for (unsigned i = 0; i < 10; i++)
		synchronize_rcu();
	u64 gps = rcu_gp_completed() - gp0;
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	u64 idle_ipis = 0, other_cb_ipis = 0, eqs = 0;
	for_each_online_cpu(cpu) {
		struct rcu_cpu_stats s;
		rcu_cpu_stats(cpu, &s);
		/* By the target's state when sent (one may go idle while an IPI is on its way). */
		idle_ipis += s.fqs_ipis_to_idle - before[cpu].fqs_ipis_to_idle;
		if (cpu != self) {
			other_cb_ipis += s.cb_ipis - before[cpu].cb_ipis;
			eqs += s.eqs_reports - before[cpu].eqs_reports;
		}
	}
	printk("# rcu: %llu grace periods, %llu reported from idle counters, %llu IPIs sent to an "
	       "idle CPU\n",
	       (unsigned long long)gps, (unsigned long long)eqs, (unsigned long long)idle_ipis);
	EXPECT_GE(gps, 10);
	EXPECT_EQ(idle_ipis, 0);
	EXPECT_EQ(other_cb_ipis, 0);
	/* The other CPUs sat idle: the kthread reported them from their counters. */
	if (num_online_cpus() > 2)
		EXPECT_GT(eqs, 0);
}

/* ---- quiescent points ---- */

static u32 point_spinner_stop;

/* A long kernel loop, alone on its CPU (so no tick), with cond_resched() in it. */
static int point_spinner(void *arg)
{
	(void)arg;
	while (!READ_ONCE(point_spinner_stop)) {
		for (unsigned i = 0; i < 100; i++)
			cpu_relax();
		cond_resched();
	}
	return 0;
}

/* The forcing IPIs sent to cpu, and the grace periods completed, over 10 synchronize_rcu(). */
static void ten_grace_periods(unsigned cpu, u64 *ipis, u64 *gps, u64 *points)
{
	struct rcu_cpu_stats a, b;
	rcu_cpu_stats(cpu, &a);
	u64 gp0 = rcu_gp_completed();
	for (unsigned i = 0; i < 10; i++)
		synchronize_rcu();
	rcu_cpu_stats(cpu, &b);
	*gps = rcu_gp_completed() - gp0;
	*ipis = b.fqs_ipis - a.fqs_ipis;
	*points = b.qs_points - a.qs_points;
}

/*
 * A CPU busy in a loop that passes cond_resched() ends grace periods from its
 * quiescent points, with no forcing IPI; with the points off the same loop holds
 * each grace period until the kthread IPIs it.
 */
TEST(rcu, a_busy_cpu_passing_quiescent_points_needs_no_ipi)
{
	if (num_online_cpus() < 2) {
		test_skip("one CPU");
		return;
	}
	unsigned self, busy = 0, cpu;
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	for_each_online_cpu(cpu)
		if (cpu != self)
			busy = cpu;
	struct task *gp = rcu_gp_task();
	kthread_bind(gp, self); /* off the busy CPU: it must stay alone there */
	bool was_on = rcu_qs_points();
	point_spinner_stop = 0;
	struct task *t = kthread_create(point_spinner, NULL, "rcu_points");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, busy);
	wake_up_process(t);
	msleep(5);

	u64 ipis_on, gps_on, points_on, ipis_off, gps_off, points_off;
	rcu_set_qs_points(true);
	ten_grace_periods(busy, &ipis_on, &gps_on, &points_on);
	rcu_set_qs_points(false);
	ten_grace_periods(busy, &ipis_off, &gps_off, &points_off);
	rcu_set_qs_points(was_on);
	WRITE_ONCE(point_spinner_stop, 1);
	kthread_join(t);
	set_cpus_allowed(gp, &cpu_online_mask);
	printk("# rcu: points on: %llu grace periods, %llu points, %llu IPIs to the busy CPU; "
	       "off: %llu, %llu, %llu\n",
	       (unsigned long long)gps_on, (unsigned long long)points_on,
	       (unsigned long long)ipis_on, (unsigned long long)gps_off,
	       (unsigned long long)points_off, (unsigned long long)ipis_off);
	EXPECT_GE(gps_on, 10);
	EXPECT_GE(gps_off, 10);
	/* A host that stalls the busy vCPU past the IPI delay may force an odd one. */
	EXPECT_LT(2 * ipis_on, gps_on);
	EXPECT_EQ(points_off, 0);
	EXPECT_GE(2 * ipis_off, gps_off);
}

/* ---- stall warnings ---- */

static u32 holder_inside;
static u64 holder_stalls_before;

/* A stall warning since the test began that names cpu. */
static bool stall_names(unsigned cpu)
{
	struct cpumask named;
	if (rcu_stall_warnings() == holder_stalls_before)
		return false;
	rcu_last_stall_cpus(&named);
	return cpumask_test_cpu(&named, cpu);
}

static u32 holder_irqs_off;

static int stall_holder(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS / 2;
	unsigned long flags = 0;
	rcu_read_lock();
	if (holder_irqs_off)
		flags = arch_irq_save(); /* not even the forcing IPIs get through */
	smp_store_release(&holder_inside, 1);
	/* Until a warning names us: one for an earlier slow grace period does not count. */
	while (!stall_names(cpu) && arch_clock_ns() < deadline)
		cpu_relax();
	if (holder_irqs_off)
		arch_irq_restore(flags);
	rcu_read_unlock();
	return 0;
}

static void stall_test(bool irqs_off)
{
	if (num_online_cpus() < 2) {
		test_skip("the holdout would hold up the only CPU");
		return;
	}
	unsigned self, holder = 0, cpu;
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	for_each_online_cpu(cpu)
		if (cpu != self)
			holder = cpu;
	/* The kthread stays off the holdout's CPU, on ours (we sleep meanwhile). */
	struct task *gp = rcu_gp_task();
	kthread_bind(gp, self);
	u64 saved = rcu_stall_timeout_ms();
	rcu_set_stall_timeout_ms(1000);
	holder_inside = 0;
	holder_irqs_off = irqs_off;
	holder_stalls_before = rcu_stall_warnings();
	struct task *t = kthread_create(stall_holder, (void *)(uintptr_t)holder, "rcu_stall");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, holder);
	wake_up_process(t);
	u64 deadline = arch_clock_ns() + RCU_TEST_TIMEOUT_NS;
	while (!smp_load_acquire(&holder_inside) && arch_clock_ns() < deadline)
		msleep(1);
	synchronize_rcu(); /* a grace period the holder holds up */
	kthread_join(t);
	rcu_set_stall_timeout_ms(saved);
	set_cpus_allowed(gp, &cpu_online_mask);
	EXPECT_GT(rcu_stall_warnings(), holder_stalls_before);
	struct cpumask named;
	rcu_last_stall_cpus(&named);
	EXPECT_TRUE(cpumask_test_cpu(&named, holder));
}

TEST(rcu, stall_warning_names_the_cpu_in_a_long_reader)
{
	test_expect_message("rcu: ");
	stall_test(false);
}

/* Its CPU answers no IPI: the kthread must not wait for it, and still names it. */
TEST(rcu, stall_warning_names_a_reader_with_interrupts_off)
{
	test_expect_message("rcu: ");
	stall_test(true);
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

/*
 * How tree RCU runs its grace periods: rcu_barrier, per-CPU callback order, call_rcu
 * from a timer, a 100,000-callback flood, no IPIs to idle CPUs nor to a busy one
 * passing quiescent points, and stall warnings. What grace periods guarantee readers
 * is rcu_guarantee_test.c's; every wait has a deadline (rcu_test_util.h).
 */
#include <grace/arch.h>
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "rcu_test_util.h"

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
static u64 point_spinner_rounds; /* cond_resched() calls returned */

/* A long kernel loop, alone on its CPU (so no tick), with cond_resched() in it. */
static int point_spinner(void *arg)
{
	(void)arg;
	while (!READ_ONCE(point_spinner_stop)) {
		for (unsigned i = 0; i < 100; i++)
			cpu_relax();
		cond_resched();
		/* Pairs with the acquire in points_settle(): the point's count is written. */
		smp_store_release(&point_spinner_rounds, point_spinner_rounds + 1);
		smp_mb(); /* the round counted before the next point reads the switch */
	}
	return 0;
}

/*
 * After the points are switched off: wait until the spinner has gone round twice,
 * so that a point that read the switch as on before the change (its vCPU then
 * descheduled by the host) has counted, and every later one reads it off.
 */
static void points_settle(void)
{
	smp_mb(); /* the switch written before the rounds are read */
	u64 start = smp_load_acquire(&point_spinner_rounds);
	while (smp_load_acquire(&point_spinner_rounds) < start + 2)
		cpu_relax();
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
	points_settle();
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

/*
 * Deferred work: per-CPU workqueues and the softirq threads. Work raised or
 * queued from a hard interrupt must run on the CPU asked for, in thread context
 * with interrupts on, exactly once per queueing; a softirq must get its CPU
 * even from a thread that never yields.
 */
#include <grace/irq.h>
#include <grace/kthread.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/test.h>
#include <grace/timer.h>
#include <grace/workqueue.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define DEFERRED_TIMEOUT_NS (60 * NSEC_PER_SEC)

struct cpu_work {
	struct work work;
	struct timer timer;
	unsigned want_cpu;
	atomic_t runs; /* released after the other counts */
	u32 wrong_cpu, in_irq, irqs_off;
} __cacheline_aligned;

static struct cpu_work cw[MAX_CPUS];

static void record_work(struct work *w)
{
	struct cpu_work *c = container_of(w, struct cpu_work, work);
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id();
	arch_irq_restore(flags);
	if (cpu != c->want_cpu)
		c->wrong_cpu++;
	if (in_interrupt())
		c->in_irq++;
	if (arch_irqs_disabled())
		c->irqs_off++;
	atomic_fetch_add_release(&c->runs, 1);
}

static bool all_ran(unsigned want)
{
	unsigned cpu;
	for_each_online_cpu(cpu)
		if ((unsigned)atomic_read_acquire(&cw[cpu].runs) < want)
			return false;
	return true;
}

static bool wait_all_ran(unsigned want)
{
	u64 end = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!all_ran(want) && arch_clock_ns() < end)
		msleep(1);
	return all_ran(want);
}

static void check_each_cpu(unsigned want)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		EXPECT_EQ(atomic_read(&cw[cpu].runs), want);
		EXPECT_EQ(cw[cpu].wrong_cpu, 0);
		EXPECT_EQ(cw[cpu].in_irq, 0);
		EXPECT_EQ(cw[cpu].irqs_off, 0);
	}
}

TEST(workqueue, runs_once_on_the_chosen_cpu)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		cw[cpu] = (struct cpu_work){.want_cpu = cpu};
		work_init(&cw[cpu].work, record_work);
		EXPECT_TRUE(queue_work_on(cpu, &cw[cpu].work));
	}
	for_each_online_cpu(cpu)
		flush_workqueue_cpu(cpu);
	check_each_cpu(1);
}

static struct blocker {
	struct work work;
	u32 started, release;
} blk;

static void blocking_work(struct work *w)
{
	(void)w;
	smp_store_release(&blk.started, 1);
	u64 end = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!smp_load_acquire(&blk.release) && arch_clock_ns() < end)
		msleep(1);
}

TEST(workqueue, queueing_a_pending_item_again_does_nothing)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	blk = (struct blocker){0};
	work_init(&blk.work, blocking_work);
	cw[cpu] = (struct cpu_work){.want_cpu = cpu};
	work_init(&cw[cpu].work, record_work);

	/* The worker is busy with the blocker, so the second item stays pending. */
	EXPECT_TRUE(queue_work_on(cpu, &blk.work));
	u64 end = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!smp_load_acquire(&blk.started) && arch_clock_ns() < end)
		msleep(1);
	EXPECT_TRUE(queue_work_on(cpu, &cw[cpu].work));
	EXPECT_FALSE(queue_work_on(cpu, &cw[cpu].work));
	smp_store_release(&blk.release, 1);
	flush_workqueue_cpu(cpu);
	EXPECT_EQ(atomic_read(&cw[cpu].runs), 1);
	/* Not pending any more: it can be queued again. */
	EXPECT_TRUE(queue_work_on(cpu, &cw[cpu].work));
	flush_workqueue_cpu(cpu);
	EXPECT_EQ(atomic_read(&cw[cpu].runs), 2);
}

static void queue_from_timer(struct timer *t)
{
	queue_work(&container_of(t, struct cpu_work, timer)->work);
}

static void arm_timer_here(void *arg)
{
	(void)arg;
	unsigned cpu = smp_processor_id(); /* run/N threads are bound */
	timer_add(&cw[cpu].timer, arch_clock_ns() + NSEC_PER_MSEC);
}

TEST(workqueue, queued_from_a_timer_interrupt_on_every_cpu)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		cw[cpu] = (struct cpu_work){.want_cpu = cpu};
		work_init(&cw[cpu].work, record_work);
		timer_init(&cw[cpu].timer, queue_from_timer);
	}
	smp_run_all(arm_timer_here, NULL);
	EXPECT_TRUE(wait_all_ran(1));
	check_each_cpu(1);
}

/* ---- softirqs ---- */

static void selftest_softirq(void)
{
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id(); /* softirqd/N is bound */
	arch_irq_restore(flags);
	struct cpu_work *c = &cw[cpu];
	if (in_interrupt())
		c->in_irq++;
	if (arch_irqs_disabled())
		c->irqs_off++;
	atomic_fetch_add_release(&c->runs, 1);
}

static void raise_from_timer(struct timer *t)
{
	(void)t;
	raise_softirq(SOFTIRQ_SELFTEST);
}

TEST(softirq, raised_in_interrupt_runs_on_that_cpu_in_thread_context)
{
	unsigned cpu;
	open_softirq(SOFTIRQ_SELFTEST, selftest_softirq);
	for_each_online_cpu(cpu) {
		cw[cpu] = (struct cpu_work){.want_cpu = cpu};
		timer_init(&cw[cpu].timer, raise_from_timer);
	}
	smp_run_all(arm_timer_here, NULL);
	EXPECT_TRUE(wait_all_ran(1));
	/* Each CPU's handler ran on that CPU (it counted in its own slot), once. */
	check_each_cpu(1);
	for_each_online_cpu(cpu)
		EXPECT_GE(softirq_runs(cpu, SOFTIRQ_SELFTEST), 1);
}

static int spin_until_softirq(void *arg)
{
	struct cpu_work *c = arg;
	timer_add(&c->timer, arch_clock_ns() + NSEC_PER_MSEC);
	/* Never yields: the softirq thread can only run by preempting us. */
	u64 end = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!atomic_read_acquire(&c->runs) && arch_clock_ns() < end)
		cpu_relax();
	return atomic_read_acquire(&c->runs) ? 0 : -1;
}

TEST(softirq, preempts_a_thread_that_never_yields)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	open_softirq(SOFTIRQ_SELFTEST, selftest_softirq);
	cw[cpu] = (struct cpu_work){.want_cpu = cpu};
	timer_init(&cw[cpu].timer, raise_from_timer);
	struct task *t = kthread_create(spin_until_softirq, &cw[cpu], "hog");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, cpu);
	wake_up_process(t);
	EXPECT_EQ(kthread_join(t), 0);
	EXPECT_EQ(cw[cpu].in_irq, 0);
}

struct delayed_probe {
	struct delayed_work dw;
	u64 queued_ns, ran_ns; /* ran_ns: the first run */
	atomic_t runs;
};

static void delayed_probe_fn(struct work *w)
{
	struct delayed_probe *p = container_of(to_delayed_work(w), struct delayed_probe, dw);
	if (!p->ran_ns)
		p->ran_ns = arch_clock_ns();
	atomic_inc(&p->runs);
}

static void delayed_probe_start(struct delayed_probe *p, u64 delay)
{
	delayed_work_init(&p->dw, delayed_probe_fn);
	p->ran_ns = 0;
	atomic_set(&p->runs, 0);
	p->queued_ns = arch_clock_ns();
	EXPECT_TRUE(queue_delayed_work(&p->dw, delay));
}

#define DELAYED_TEST_TICKS 5

TEST(workqueue, delayed_work_runs_once_no_earlier_than_its_delay)
{
	static struct delayed_probe p;
	delayed_probe_start(&p, DELAYED_TEST_TICKS);
	/* Pending while the timer waits: a second queueing is refused, the first expiry stands. */
	EXPECT_FALSE(queue_delayed_work(&p.dw, 1));
	msleep(jiffies_to_ns(DELAYED_TEST_TICKS) / NSEC_PER_MSEC / 2);
	EXPECT_EQ(atomic_read(&p.runs), 0);
	u64 deadline = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!atomic_read(&p.runs) && arch_clock_ns() < deadline)
		msleep(5);
	msleep(50);
	EXPECT_EQ(atomic_read(&p.runs), 1);
	EXPECT_GE(p.ran_ns - p.queued_ns, jiffies_to_ns(DELAYED_TEST_TICKS));
	/* Not pending once it ran: it can be queued again. */
	EXPECT_FALSE(cancel_delayed_work_sync(&p.dw));
}

TEST(workqueue, cancel_delayed_work_sync_prevents_the_run)
{
	static struct delayed_probe p;
	delayed_probe_start(&p, DELAYED_TEST_TICKS);
	EXPECT_TRUE(cancel_delayed_work_sync(&p.dw));
	msleep(2 * jiffies_to_ns(DELAYED_TEST_TICKS) / NSEC_PER_MSEC);
	EXPECT_EQ(atomic_read(&p.runs), 0);
	EXPECT_TRUE(queue_delayed_work(&p.dw, 1));
	EXPECT_TRUE(cancel_delayed_work_sync(&p.dw));
}

/* Set by the test once it is about to cancel; the function waits for it. */
static bool delayed_cancel_started;

static void delayed_blocking_fn(struct work *w)
{
	struct delayed_probe *p = container_of(to_delayed_work(w), struct delayed_probe, dw);
	if (atomic_inc_return(&p->runs) > 1)
		return;
	while (!READ_ONCE(delayed_cancel_started))
		msleep(1);
	/* Long enough for the cancel to have begun; then try to come back. */
	msleep(20);
	queue_delayed_work(&p->dw, 1);
}

TEST(workqueue, cancel_delayed_work_sync_stops_one_that_queues_itself)
{
	static struct delayed_probe p;
	delayed_work_init(&p.dw, delayed_blocking_fn);
	atomic_set(&p.runs, 0);
	WRITE_ONCE(delayed_cancel_started, false);
	EXPECT_TRUE(queue_delayed_work(&p.dw, 1));
	u64 deadline = arch_clock_ns() + DEFERRED_TIMEOUT_NS;
	while (!atomic_read(&p.runs) && arch_clock_ns() < deadline)
		msleep(1);
	/* The function is running and will queue itself again while we cancel. */
	WRITE_ONCE(delayed_cancel_started, true);
	cancel_delayed_work_sync(&p.dw);
	EXPECT_EQ(atomic_read(&p.runs), 1);
	msleep(5 * jiffies_to_ns(1) / NSEC_PER_MSEC);
	EXPECT_EQ(atomic_read(&p.runs), 1);
	EXPECT_FALSE(cancel_delayed_work_sync(&p.dw));
}

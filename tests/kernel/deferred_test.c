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

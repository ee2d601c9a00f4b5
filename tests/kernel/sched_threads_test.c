/*
 * Scheduler selftests, where and when threads run: threads, affinity, load
 * balancing, preemption and what the scheduler reports to RCU. Every concurrency test
 * runs threads on all CPUs at once and checks counts and ownership; waits are bounded
 * by generous deadlines (64 vCPUs may share two host cores) and compared as
 * orderings, never as speeds. Sleeping and waking is sched_wait_test.c's.
 */
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include "sched_test_util.h"

/* ---- threads ---- */

static int return_arg(void *arg)
{
	return (int)(uintptr_t)arg;
}

TEST(sched, kthread_exit_code_and_reaping)
{
	unsigned before = kthread_count();
	struct task *t = kthread_run(return_arg, (void *)(uintptr_t)42, "exit42");
	ASSERT_TRUE(t != NULL);
	EXPECT_EQ(kthread_join(t), 42);

	/* Detached threads are freed by the reaper once they are gone. */
	for (int i = 0; i < 8; i++) {
		struct task *d = kthread_run(return_arg, NULL, "detached%d", i);
		ASSERT_TRUE(d != NULL);
		kthread_detach(d);
	}
	EXPECT_TRUE(wait_until(kthread_count() == before));
}

static int sleep_until_stopped(void *arg)
{
	struct wait_queue_head *wq = arg;
	wait_event(*wq, kthread_should_stop());
	return 7;
}

TEST(sched, kthread_stop_wakes_a_thread_in_a_wait_queue)
{
	DEFINE_WAIT_QUEUE_HEAD(wq);
	struct task *t = kthread_run(sleep_until_stopped, &wq, "stopme");
	ASSERT_TRUE(t != NULL);
	/* It blocks in the wait queue: queued on it and asleep. */
	EXPECT_TRUE(wait_until(wait_queue_active(&wq) && READ_ONCE(t->state) == TASK_SLEEPING));
	EXPECT_EQ(kthread_stop(t), 7);
}

struct table_find {
	struct task *want;
	bool found;
};

static void table_find_fn(struct task *p, void *arg)
{
	struct table_find *f = arg;
	if (p == f->want)
		f->found = true;
}

TEST(sched, thread_table_lists_threads)
{
	DEFINE_WAIT_QUEUE_HEAD(wq);
	struct task *t = kthread_run(sleep_until_stopped, &wq, "listed");
	ASSERT_TRUE(t != NULL);
	struct table_find f = {t, false};
	sched_for_each_task(table_find_fn, &f);
	EXPECT_TRUE(f.found);
	struct table_find self = {current, false};
	sched_for_each_task(table_find_fn, &self);
	EXPECT_TRUE(self.found);
	kthread_stop(t);
}

/* ---- affinity ---- */

struct bound_arg {
	unsigned cpu;
	u32 wrong; /* times it found itself elsewhere */
	u32 checks;
};

static int bound_worker(void *arg)
{
	struct bound_arg *b = arg;
	for (unsigned i = 0; i < 64; i++) {
		for (unsigned j = 0; j < 100; j++) {
			if (smp_processor_id() != b->cpu)
				b->wrong++;
			b->checks++;
		}
		if (i % 8 == 0)
			msleep(1); /* sleep and wake: the wake-up must come back here */
		else
			yield();
	}
	return 0;
}

static int spin_a_while(void *arg)
{
	u64 end = arch_clock_ns() + 20 * NSEC_PER_MSEC;
	(void)arg;
	while (arch_clock_ns() < end)
		cpu_relax();
	return 0;
}

TEST(sched, bound_thread_only_runs_on_its_cpu)
{
	unsigned cpus = num_online_cpus(), cpu, n = 0;
	struct bound_arg *b = kzalloc(MAX_CPUS * sizeof(*b));
	struct task **t = threads_alloc(2 * MAX_CPUS);
	ASSERT_TRUE(b && t);
	for_each_online_cpu(cpu) {
		b[n].cpu = cpu;
		t[n] = kthread_create(bound_worker, &b[n], "bound%u", cpu);
		ASSERT_TRUE(t[n] != NULL);
		EXPECT_EQ(kthread_bind(t[n], cpu), 0);
		wake_up_process(t[n]);
		n++;
	}
	/* Unbound threads around them, so that balancing has reasons to move things. */
	for (unsigned i = 0; i < cpus; i++)
		t[n + i] = kthread_run(spin_a_while, NULL, "spinner%u", i);
	join_all(t, n + cpus);
	for (unsigned i = 0; i < n; i++) {
		EXPECT_EQ(b[i].wrong, 0);
		EXPECT_EQ(b[i].checks, 6400);
	}
	kfree(b);
}

/* ---- load balancing ---- */

static struct balance_test {
	u32 stop;
	struct cpumask ran_on; /* CPUs that ran some busy thread */
} lb;

static int busy_worker(void *arg)
{
	(void)arg;
	while (!READ_ONCE(lb.stop)) {
		unsigned cpu = smp_processor_id();
		if (!cpumask_test_cpu(&lb.ran_on, cpu))
			cpumask_set_cpu(&lb.ran_on, cpu);
		cpu_relax();
	}
	return 0;
}

static unsigned cpus_that_ran(void)
{
	return cpumask_weight(&lb.ran_on);
}

TEST(sched, load_balance_spreads_threads_created_on_one_cpu)
{
	unsigned cpus = num_online_cpus(), n = 4 * cpus, first = 0, cpu;
	if (cpus < 2) {
		test_skip("one CPU");
		return;
	}
	/*
	 * Not the CPU this test runs on: round robin among 4 x CPUs busy threads would
	 * give the test one turn in seconds. The busy threads' CPU is the first other.
	 */
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id()) {
			first = cpu;
			break;
		}
	struct task **t = threads_alloc(n);
	ASSERT_TRUE(t != NULL);
	lb.stop = 0;
	cpumask_clear(&lb.ran_on);
	/* All on one CPU: placement at creation cannot spread them. */
	for (unsigned i = 0; i < n; i++) {
		t[i] = kthread_create(busy_worker, NULL, "busy%u", i);
		ASSERT_TRUE(t[i] != NULL);
		kthread_bind(t[i], first);
		wake_up_process(t[i]);
	}
	EXPECT_TRUE(wait_until(cpus_that_ran() >= 1));
	EXPECT_EQ(cpus_that_ran(), 1);
	/* Now free to go anywhere: only stealing and balancing can move them. */
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(set_cpus_allowed(t[i], &cpu_online_mask), 0);
	bool spread = wait_until(cpus_that_ran() == cpus);
	if (!spread)
		printk("# only %u of %u CPUs ran a busy thread\n", cpus_that_ran(), cpus);
	EXPECT_TRUE(spread);
	WRITE_ONCE(lb.stop, 1);
	EXPECT_EQ(join_all(t, n), n);
}

/* ---- preemption ---- */

static struct preempt_test {
	u32 other_ran;
	u32 spinner_started;
	u32 stop;
} pt;

static int set_flag(void *arg)
{
	(void)arg;
	WRITE_ONCE(pt.other_ran, 1);
	return 0;
}

static int spin_without_yielding(void *arg)
{
	(void)arg;
	WRITE_ONCE(pt.spinner_started, 1);
	u64 end = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;
	while (!READ_ONCE(pt.other_ran) && arch_clock_ns() < end)
		cpu_relax();
	return READ_ONCE(pt.other_ran) ? 0 : -1;
}

TEST(sched, spinning_thread_does_not_starve_another)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	pt.other_ran = pt.spinner_started = 0;
	struct task *spinner = kthread_create(spin_without_yielding, NULL, "spinner");
	struct task *other = kthread_create(set_flag, NULL, "other");
	ASSERT_TRUE(spinner && other);
	kthread_bind(spinner, cpu);
	kthread_bind(other, cpu);
	wake_up_process(spinner);
	EXPECT_TRUE(wait_until(READ_ONCE(pt.spinner_started)));
	wake_up_process(other);
	/* The spinner only stops once the other thread ran on its CPU: it was preempted. */
	EXPECT_EQ(kthread_join(spinner), 0);
	kthread_join(other);
}

/* Wakes a thread onto its own CPU, then spins until that thread has run. */
static int wake_local_then_spin(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct task *other = kthread_create(set_flag, NULL, "other");
	if (!other)
		return -2;
	kthread_bind(other, cpu);
	/* Ours is the only thread here: no tick. The wake-up itself must preempt us. */
	wake_up_process(other);
	u64 end = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;
	while (!READ_ONCE(pt.other_ran) && arch_clock_ns() < end)
		cpu_relax();
	kthread_join(other);
	return READ_ONCE(pt.other_ran) ? 0 : -1;
}

TEST(sched, local_wakeup_of_a_second_thread_preempts)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	for (int i = 0; i < 5; i++) {
		pt.other_ran = 0;
		struct task *t =
		    kthread_create(wake_local_then_spin, (void *)(uintptr_t)cpu, "waker");
		ASSERT_TRUE(t != NULL);
		kthread_bind(t, cpu);
		wake_up_process(t);
		EXPECT_EQ(kthread_join(t), 0);
	}
}

static int spin_with_preemption_off(void *arg)
{
	u32 *seen_early = arg;
	preempt_disable();
	WRITE_ONCE(pt.spinner_started, 1);
	/* Several time slices; the other thread is queued here meanwhile. */
	u64 end = arch_clock_ns() + 100 * NSEC_PER_MSEC;
	while (arch_clock_ns() < end)
		cpu_relax();
	*seen_early = READ_ONCE(pt.other_ran);
	preempt_enable();
	end = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;
	while (!READ_ONCE(pt.other_ran) && arch_clock_ns() < end)
		cpu_relax();
	return READ_ONCE(pt.other_ran) ? 0 : -1;
}

TEST(sched, preempt_disable_holds_off_preemption)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	u32 seen_early = 0;
	pt.other_ran = pt.spinner_started = 0;
	struct task *spinner = kthread_create(spin_with_preemption_off, &seen_early, "nopreempt");
	struct task *other = kthread_create(set_flag, NULL, "other");
	ASSERT_TRUE(spinner && other);
	kthread_bind(spinner, cpu);
	kthread_bind(other, cpu);
	wake_up_process(spinner);
	EXPECT_TRUE(wait_until(READ_ONCE(pt.spinner_started)));
	wake_up_process(other);
	EXPECT_EQ(kthread_join(spinner), 0);
	kthread_join(other);
	EXPECT_EQ(seen_early, 0);
}

/* ---- what the scheduler reports to RCU (RCU's own per-CPU statistics) ---- */

/*
 * Sleep ten times on this CPU; each time it wakes, RCU's idle counter must be
 * even (not idle): the idle loop reported leaving idle before this thread ran.
 * Returns how many times it was odd.
 */
static int switch_a_few_times(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct rcu_cpu_stats s;
	int odd = 0;
	for (int i = 0; i < 10; i++) {
		msleep(1);
		rcu_cpu_stats(cpu, &s);
		odd += s.dynticks & 1;
	}
	return odd;
}

static atomic_t tick_spinners_done;

/*
 * Busy until RCU has counted one more tick on this CPU (bounded). Two of these
 * share the CPU, and neither leaves before both are done: one alone would not
 * tick.
 */
static int spin_until_a_tick(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct rcu_cpu_stats s;
	rcu_cpu_stats(cpu, &s);
	u64 start = s.ticks, end = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;
	do {
		cpu_relax();
		rcu_cpu_stats(cpu, &s);
	} while (s.ticks == start && arch_clock_ns() < end);
	atomic_inc_return(&tick_spinners_done);
	while (atomic_read_acquire(&tick_spinners_done) < 2 && arch_clock_ns() < end)
		cpu_relax();
	return s.ticks > start ? 0 : -1;
}

TEST(sched, reports_switches_idle_and_ticks_to_rcu)
{
	unsigned cpu = cpumask_next(&cpu_online_mask, 0);
	struct rcu_cpu_stats before, after;
	rcu_cpu_stats(cpu, &before);
	struct task *t = kthread_create(switch_a_few_times, (void *)(uintptr_t)cpu, "rcu_events");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, cpu);
	wake_up_process(t);
	/* 0: every time it woke, RCU knew the CPU had left idle. */
	EXPECT_EQ(kthread_join(t), 0);
	/* Two busy threads share the CPU, so it ticks (one alone would not need to). */
	atomic_set(&tick_spinners_done, 0);
	struct task *s1 = kthread_create(spin_until_a_tick, (void *)(uintptr_t)cpu, "ticks1");
	struct task *s2 = kthread_create(spin_until_a_tick, (void *)(uintptr_t)cpu, "ticks2");
	ASSERT_TRUE(s1 && s2);
	kthread_bind(s1, cpu);
	kthread_bind(s2, cpu);
	wake_up_process(s1);
	wake_up_process(s2);
	/* 0: RCU counted a tick there. */
	EXPECT_EQ(kthread_join(s1), 0);
	EXPECT_EQ(kthread_join(s2), 0);
	rcu_cpu_stats(cpu, &after);
	/* 10 sleeps: 20 or more passes through the scheduler (to idle or a thread, and back). */
	EXPECT_GE(after.ctxsw - before.ctxsw, 20);
	/* Nothing else runs there while the thread sleeps: the CPU went idle, and came back. */
	EXPECT_GT(after.idle_enters, before.idle_enters);
	EXPECT_GE(after.dynticks - before.dynticks, 2);
}

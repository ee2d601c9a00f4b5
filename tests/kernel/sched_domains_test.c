/*
 * Selftests for the scheduler domains (kernel/sched/topology.c, balance.c): the
 * hierarchy covers every online CPU once at every level; a thread woken on a busy
 * machine lands on an idle CPU of its own group; an overloaded group sheds threads
 * to another; bound threads never move; and a balancing pass reads no more lines
 * than the hierarchy allows. Waits are bounded by generous deadlines and by the
 * balancers' own pass counts, never by speed.
 */
#include <grace/atomic.h>
#include <grace/kthread.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/smp.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <grace/wait.h>
#include <asm/cpu.h>

#define DOMAINS_TIMEOUT_NS (60 * NSEC_PER_SEC)

/* Wait (sleeping) for cond, at most DOMAINS_TIMEOUT_NS; the final value of cond. */
#define wait_until(cond)                                                                           \
	({                                                                                         \
		u64 __end = arch_clock_ns() + DOMAINS_TIMEOUT_NS;                                  \
		while (!(cond) && arch_clock_ns() < __end)                                         \
			msleep(1);                                                                 \
		(cond);                                                                            \
	})

static bool domains_skip(void)
{
	if (!sched_domains_enabled()) {
		test_skip("sched_domains=flat");
		return true;
	}
	return false;
}

/* Groups a scan of level adds to the levels below it, around cpu (0: a level of no use). */
static unsigned new_groups(unsigned cpu, unsigned level)
{
	unsigned first, end, below_first, below_end;
	if (!sched_level_span(cpu, level, &first, &end))
		return 0;
	unsigned below = 0;
	for (unsigned l = level; l-- > 0;)
		if (sched_level_span(cpu, l, &below_first, &below_end)) {
			below = below_end - below_first;
			break;
		}
	return end - first - below;
}

TEST(sched_domains, hierarchy_covers_every_online_cpu_once_at_every_level)
{
	static u16 seen[MAX_CPUS];
	unsigned cpu, other, cpus[SCHED_GROUP_CPUS];

	for_each_online_cpu(cpu) {
		for (unsigned level = 0; level < SCHED_LEVELS; level++) {
			unsigned first, end;
			sched_level_span(cpu, level, &first, &end);
			memset(seen, 0, sizeof(seen));
			for (unsigned g = first; g < end; g++) {
				unsigned n = sched_group_cpus(g, cpus);
				EXPECT_TRUE(n >= 1 && n <= SCHED_GROUP_CPUS);
				for (unsigned i = 0; i < n; i++) {
					seen[cpus[i]]++;
					/* A group is of one node. */
					EXPECT_EQ(cpu_to_node(cpus[i]), cpu_to_node(cpus[0]));
				}
			}
			for_each_online_cpu(other) {
				bool in_level =
				    level == 2 ||
				    (level == 1 && cpu_to_node(other) == cpu_to_node(cpu)) ||
				    (level == 0 && sched_cpu_group(other) == sched_cpu_group(cpu));
				if (seen[other] != (in_level ? 1 : 0))
					printk("# cpu %u level %u: cpu %u seen %u times\n", cpu,
					       level, other, seen[other]);
				EXPECT_EQ(seen[other], in_level ? 1 : 0);
			}
		}
	}
}

/* ---- a thread moving itself ---- */

static struct self_move {
	unsigned to;
	unsigned ran_on;
} sm;

static int move_myself(void *arg)
{
	(void)arg;
	struct cpumask only;
	cpumask_clear(&only);
	cpumask_set_cpu(&only, sm.to);
	set_cpus_allowed(current, &only);
	WRITE_ONCE(sm.ran_on, smp_processor_id());
	return 0;
}

/* Alone on its CPU, nothing else there to switch to: it must still leave. */
TEST(sched_domains, thread_alone_on_its_cpu_leaves_when_it_disallows_that_cpu)
{
	unsigned from = MAX_CPUS, cpu;
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id()) {
			if (from == MAX_CPUS)
				from = cpu;
			else {
				sm.to = cpu;
				break;
			}
		}
	if (from == MAX_CPUS || sm.to == from || num_online_cpus() < 3) {
		test_skip("fewer than three CPUs");
		return;
	}
	sm.ran_on = MAX_CPUS;
	struct task *t = kthread_create(move_myself, NULL, "move_myself");
	ASSERT_TRUE(t != NULL);
	kthread_bind(t, from);
	wake_up_process(t);
	kthread_join(t);
	EXPECT_EQ(sm.ran_on, sm.to);
}

/* ---- busy CPUs ---- */

static struct busy {
	u32 stop;
	atomic_t started;
	atomic_t wrong; /* bound threads found on another CPU */
	struct cpumask ran_on;
} busy;

static int busy_thread(void *arg)
{
	unsigned bound = (unsigned)(uintptr_t)arg; /* MAX_CPUS: not bound */
	atomic_add(&busy.started, 1);
	while (!READ_ONCE(busy.stop)) {
		unsigned cpu = smp_processor_id();
		if (bound < MAX_CPUS && cpu != bound)
			atomic_add(&busy.wrong, 1);
		if (!cpumask_test_cpu(&busy.ran_on, cpu))
			cpumask_set_cpu(&busy.ran_on, cpu);
		cpu_relax();
	}
	return 0;
}

static struct task *start_busy(unsigned bound_cpu, const struct cpumask *allowed)
{
	struct task *t = kthread_create(busy_thread, (void *)(uintptr_t)bound_cpu, "busy");
	if (!t)
		return NULL;
	if (bound_cpu < MAX_CPUS)
		kthread_bind(t, bound_cpu);
	else
		set_cpus_allowed(t, allowed);
	wake_up_process(t);
	return t;
}

static void stop_busy(struct task **t, unsigned n)
{
	WRITE_ONCE(busy.stop, 1);
	for (unsigned i = 0; i < n; i++)
		if (t[i])
			kthread_join(t[i]);
}

static void busy_reset(void)
{
	busy.stop = 0;
	atomic_set(&busy.started, 0);
	atomic_set(&busy.wrong, 0);
	cpumask_clear(&busy.ran_on);
}

/* A group other than the caller's with at least two online CPUs, or ~0u. */
static unsigned other_group(unsigned *cpus, unsigned *n)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		unsigned g = sched_cpu_group(cpu);
		if (g == sched_cpu_group(smp_processor_id()))
			continue;
		*n = sched_group_cpus(g, cpus);
		bool all_online = true;
		for (unsigned i = 0; i < *n; i++)
			all_online &= cpumask_test_cpu(&cpu_online_mask, cpus[i]);
		if (*n >= 2 && all_online)
			return g;
	}
	return ~0u;
}

/* ---- placement ---- */

static struct sleeper {
	struct wait_queue_head wq;
	u32 ready, go, round, stop;
	unsigned last, woke_on;
} sl;

static int sleeper_thread(void *arg)
{
	(void)arg;
	struct cpumask only_last;
	cpumask_clear(&only_last);
	cpumask_set_cpu(&only_last, sl.last);
	for (u32 seen = 0;;) {
		/* Go to the busy CPU and sleep there, free to wake anywhere. */
		set_cpus_allowed(current, &only_last);
		set_cpus_allowed(current, &cpu_online_mask);
		smp_store_release(&sl.ready, seen + 1);
		wait_event(sl.wq, READ_ONCE(sl.round) != seen || READ_ONCE(sl.stop));
		if (READ_ONCE(sl.stop))
			return 0;
		seen = READ_ONCE(sl.round);
		WRITE_ONCE(sl.woke_on, smp_processor_id());
		smp_store_release(&sl.go, seen);
	}
}

/*
 * Its last CPU and all but one of its group busy, the rest of the machine idle:
 * the wake-up must take the group's idle CPU, the next to last. A flat scan from
 * the last CPU on would take the next group's first, idle CPU; a scan of the group
 * that misread the loads would take its first, busy one.
 */
TEST(sched_domains, woken_thread_lands_on_an_idle_cpu_of_its_group)
{
	unsigned cpus[SCHED_GROUP_CPUS], n, landed = 0;
	if (domains_skip())
		return;
	if (other_group(cpus, &n) == ~0u || n < 3) {
		test_skip("no second group of three CPUs");
		return;
	}
	unsigned idle_cpu = cpus[n - 2], last = cpus[n - 1];
	struct task *b[SCHED_GROUP_CPUS] = {0};
	busy_reset();
	wait_queue_init(&sl.wq);
	sl.ready = sl.round = sl.go = sl.stop = 0;
	sl.last = last;
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] != idle_cpu)
			b[i] = start_busy(cpus[i], NULL);
	EXPECT_TRUE(wait_until((unsigned)atomic_read(&busy.started) == n - 1));
	struct task *s = kthread_run(sleeper_thread, NULL, "sleeper");
	ASSERT_TRUE(s != NULL);
	for (u32 round = 1; round <= 5; round++) {
		/* Asleep on its busy last CPU: off its run queue. */
		EXPECT_TRUE(
		    wait_until(smp_load_acquire(&sl.ready) == round && !READ_ONCE(s->on_rq)));
		WRITE_ONCE(sl.round, round);
		wake_up(&sl.wq);
		EXPECT_TRUE(wait_until(smp_load_acquire(&sl.go) == round));
		landed += READ_ONCE(sl.woke_on) == idle_cpu;
		printk("# round %u: woke on cpu %u (group's idle cpu %u)\n", round,
		       READ_ONCE(sl.woke_on), idle_cpu);
	}
	/* A kernel thread may run on the idle CPU for a moment; most rounds must find it idle. */
	EXPECT_GE(landed, 3);
	WRITE_ONCE(sl.stop, 1);
	wake_up(&sl.wq);
	kthread_join(s);
	stop_busy(b, n);
}

/* ---- balancing ---- */

static u64 min_periodic_passes(const unsigned *cpus, unsigned n)
{
	u64 least = ~0ull;
	for (unsigned i = 0; i < n; i++) {
		u64 p = sched_balance_stats(cpus[i]).periodic_passes;
		if (p < least)
			least = p;
	}
	return least;
}

static bool ran_outside(const unsigned *cpus, unsigned n)
{
	unsigned cpu;
	for_each_cpu(cpu, &busy.ran_on) {
		bool inside = false;
		for (unsigned i = 0; i < n; i++)
			inside |= cpus[i] == cpu;
		if (!inside)
			return true;
	}
	return false;
}

/*
 * Two busy threads on each CPU of a group, then free to go anywhere: the group's
 * balancers find no CPU to push to in the group and must look wider, which each
 * does at least every 2^(SCHED_LEVELS-1)-th pass.
 */
TEST(sched_domains, overloaded_group_sheds_threads_to_another_group)
{
	unsigned cpus[SCHED_GROUP_CPUS], n;
	struct task *t[2 * SCHED_GROUP_CPUS] = {0};
	if (domains_skip())
		return;
	unsigned g = other_group(cpus, &n);
	if (g == ~0u) {
		test_skip("no second group of two CPUs");
		return;
	}
	struct cpumask group;
	cpumask_clear(&group);
	for (unsigned i = 0; i < n; i++)
		cpumask_set_cpu(&group, cpus[i]);
	busy_reset();
	for (unsigned i = 0; i < 2 * n; i++)
		t[i] = start_busy(MAX_CPUS, &group);
	EXPECT_TRUE(wait_until((unsigned)atomic_read(&busy.started) == 2 * n));
	EXPECT_FALSE(ran_outside(cpus, n));
	for (unsigned i = 0; i < 2 * n; i++)
		EXPECT_EQ(set_cpus_allowed(t[i], &cpu_online_mask), 0);
	u64 deadline = min_periodic_passes(cpus, n) + (1u << (SCHED_LEVELS - 1)) + 2;
	bool shed = wait_until(ran_outside(cpus, n) || min_periodic_passes(cpus, n) >= deadline);
	EXPECT_TRUE(shed && ran_outside(cpus, n));
	stop_busy(t, 2 * n);
}

/*
 * Every CPU of up to two groups runs two bound busy threads, so their balancers
 * pass and scan but may move nothing. No bound thread moves, and each CPU's
 * passes read no more lines than its levels hold: a line per group at the levels
 * a pass looked at, and the wider levels looked at only on their passes (the
 * periodic ones) or once per interval (the idle pulls).
 */
TEST(sched_domains, bound_threads_stay_and_passes_read_what_the_hierarchy_allows)
{
	static struct sched_balance_stats before[MAX_CPUS];
	static struct task *t[4 * SCHED_GROUP_CPUS];
	unsigned busy_cpus[2 * SCHED_GROUP_CPUS], n = 0, nt = 0, cpu;
	if (domains_skip())
		return;
	unsigned first_group = sched_cpu_group(smp_processor_id());
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id() && sched_cpu_group(cpu) - first_group < 2 &&
		    n < 2 * SCHED_GROUP_CPUS)
			busy_cpus[n++] = cpu;
	if (n == 0) {
		test_skip("one CPU");
		return;
	}
	for_each_online_cpu(cpu)
		before[cpu] = sched_balance_stats(cpu);
	u64 start = arch_clock_ns();
	busy_reset();
	for (unsigned i = 0; i < n; i++) {
		t[nt++] = start_busy(busy_cpus[i], NULL);
		t[nt++] = start_busy(busy_cpus[i], NULL);
	}
	EXPECT_TRUE(wait_until((unsigned)atomic_read(&busy.started) == nt));
	u64 target = min_periodic_passes(busy_cpus, n) + 8;
	EXPECT_TRUE(wait_until(min_periodic_passes(busy_cpus, n) >= target));
	stop_busy(t, nt);
	EXPECT_EQ(atomic_read(&busy.wrong), 0);
	u64 elapsed_ticks = (arch_clock_ns() - start) / TICK_NSEC + 1;

	u64 passes = 0, reads = 0;
	for_each_online_cpu(cpu) {
		struct sched_balance_stats now = sched_balance_stats(cpu), *b = &before[cpu];
		u64 d_passes = now.periodic_passes - b->periodic_passes;
		u64 push_bound = 0, pull_bound = 0;
		for (unsigned l = 0; l < SCHED_LEVELS; l++) {
			u64 pushes = now.wide_pushes[l] - b->wide_pushes[l];
			u64 pulls = now.wide_pulls[l] - b->wide_pulls[l];
			EXPECT_LE(pushes, (d_passes >> l) + 1);
			if (l > 0)
				EXPECT_LE(pulls, elapsed_ticks / ((u64)BALANCE_TICKS << l) + 1);
			push_bound += pushes * new_groups(cpu, l);
			pull_bound += pulls * new_groups(cpu, l);
		}
		EXPECT_LE(now.periodic_reads - b->periodic_reads, push_bound);
		EXPECT_LE(now.pull_reads - b->pull_reads, pull_bound);
		passes += d_passes;
		reads += now.periodic_reads - b->periodic_reads;
	}
	printk("# %u CPUs, %llu periodic passes, %llu.%02llu lines read a pass (a flat scan "
	       "reads %u)\n",
	       num_online_cpus(), (unsigned long long)passes,
	       (unsigned long long)(passes ? reads / passes : 0),
	       (unsigned long long)(passes ? reads * 100 / passes % 100 : 0),
	       num_online_cpus() - 1);
}

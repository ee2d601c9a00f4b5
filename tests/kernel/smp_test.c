/*
 * SMP selftests: every CPU the host runner expects is online, IPI round trips to every CPU,
 * cross-calls, smp_run_all (every CPU, once, in task context, able to send IPIs itself), per-CPU
 * data, and timer interrupts on every CPU.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <asm/irq.h>

#include "host_expect.h"

static atomic_t ran_on[MAX_CPUS];

static void note_cpu(void *arg)
{
	unsigned *where = arg;
	*where = smp_processor_id();
	atomic_inc(&ran_on[smp_processor_id()]);
}

static void clear_ran_on(void)
{
	for (unsigned i = 0; i < MAX_CPUS; i++)
		atomic_set(&ran_on[i], 0);
}

/*
 * The machine's CPUs, as the runner read them from outside (QEMU's -smp, or the
 * harts of the device tree that are "okay"), are all online: a CPU that never
 * came up leaves every other test passing on the ones that did.
 */
TEST(smp, expected_cpus_online)
{
	static struct host_expect e;
	if (!host_expect_get(&e))
		return;
	unsigned expected = MIN(e.cpus, (unsigned)MAX_CPUS), cpu, n = 0;
	EXPECT_EQ(num_online_cpus(), expected);
	/* Each expected hardware id is an online CPU's, each online CPU's one expected. */
	for (unsigned i = 0; i < e.nr_hwids && i < MAX_CPUS; i++) {
		bool online = false;
		for_each_online_cpu(cpu)
			online |= boot_info.cpus[cpu].hwid == e.hwids[i];
		if (!online)
			test_fail(__FILE__, __LINE__, "%s %u is expected, but no online CPU has it",
				  arch_hwid_name, e.hwids[i]);
	}
	for_each_online_cpu(cpu) {
		if (!host_expect_has_hwid(&e, boot_info.cpus[cpu].hwid))
			test_fail(__FILE__, __LINE__, "CPU %u (%s %u) is online but not expected",
				  cpu, arch_hwid_name, boot_info.cpus[cpu].hwid);
		/* And the online-index helpers walk the same mask, holes and all. */
		EXPECT_EQ(smp_online_index(cpu), (int)n);
		EXPECT_EQ(smp_online_cpu(n), cpu);
		n++;
	}
	EXPECT_EQ(smp_online_cpu(n), MAX_CPUS);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (!cpumask_test_cpu(&cpu_online_mask, cpu))
			EXPECT_EQ(smp_online_index(cpu), -1);
	EXPECT_EQ(smp_online_index(MAX_CPUS), -1);
}

/* A mask with holes, across words: places count only the CPUs in it. */
TEST(cpumask, nth_and_index_count_only_the_cpus_in_the_mask)
{
	static const unsigned in[] = {1, 5, 63, 64, 130, MAX_CPUS - 1};
	struct cpumask m;
	cpumask_clear(&m);
	for (unsigned i = 0; i < ARRAY_SIZE(in); i++)
		cpumask_set_cpu(&m, in[i]);
	for (unsigned i = 0; i < ARRAY_SIZE(in); i++) {
		EXPECT_EQ(cpumask_nth(&m, i), in[i]);
		EXPECT_EQ(cpumask_index(&m, in[i]), (int)i);
	}
	EXPECT_EQ(cpumask_nth(&m, ARRAY_SIZE(in)), MAX_CPUS);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (!cpumask_test_cpu(&m, cpu))
			EXPECT_EQ(cpumask_index(&m, cpu), -1);
	EXPECT_EQ(cpumask_index(&m, MAX_CPUS), -1);
}

TEST(smp, ipi_round_trip_every_cpu)
{
	unsigned cpu, self = smp_processor_id();
	clear_ran_on();
	for_each_online_cpu(cpu) {
		if (cpu == self)
			continue;
		u64 before = smp_ipis_received(cpu);
		unsigned where = MAX_CPUS;
		ASSERT_EQ(smp_call(cpu, note_cpu, &where, true), 0);
		EXPECT_EQ(where, cpu);
		/* The call went by IPI: the target counted one more. */
		EXPECT_GT(smp_ipis_received(cpu), before);
	}
	for_each_online_cpu(cpu)
		EXPECT_EQ(atomic_read(&ran_on[cpu]), cpu == self ? 0 : 1);
}

TEST(smp, call_rejects_bad_cpu)
{
	unsigned where;
	EXPECT_EQ(smp_call(MAX_CPUS, note_cpu, &where, true), -EINVAL);
	EXPECT_EQ(smp_call(MAX_CPUS + 100, note_cpu, &where, true), -EINVAL);
}

static void count_call(void *arg)
{
	atomic_inc(&ran_on[smp_processor_id()]);
}

TEST(smp, call_others_runs_once_each)
{
	unsigned cpu, self = smp_processor_id();
	for (int round = 0; round < 10; round++) {
		clear_ran_on();
		smp_call_others(count_call, NULL, true);
		for_each_online_cpu(cpu)
			EXPECT_EQ(atomic_read(&ran_on[cpu]), cpu == self ? 0 : 1);
	}
}

struct run_all_test {
	atomic_t calls[MAX_CPUS];
	atomic_t in_irq, irqs_off;
	atomic_t neighbour_calls;
};

static void neighbour_ping(void *arg)
{
	struct run_all_test *t = arg;
	atomic_inc(&t->neighbour_calls);
}

static void run_all_worker(void *arg)
{
	struct run_all_test *t = arg;
	unsigned cpu = smp_processor_id();
	atomic_inc(&t->calls[cpu]);
	if (in_interrupt())
		atomic_inc(&t->in_irq);
	if (arch_irqs_disabled())
		atomic_inc(&t->irqs_off);
	/* Not in interrupt context, so waiting for another CPU's IPI handler is allowed. */
	unsigned next = cpumask_next(&cpu_online_mask, cpu + 1);
	if (next == MAX_CPUS)
		next = cpumask_next(&cpu_online_mask, 0);
	smp_call(next, neighbour_ping, t, true);
}

TEST(smp, run_all_every_cpu_in_task_context)
{
	static struct run_all_test t;
	unsigned cpu;
	t = (struct run_all_test){0};
	smp_run_all(run_all_worker, &t);
	for_each_online_cpu(cpu)
		EXPECT_EQ(atomic_read(&t.calls[cpu]), 1);
	EXPECT_EQ(atomic_read(&t.in_irq), 0);
	EXPECT_EQ(atomic_read(&t.irqs_off), 0);
	EXPECT_EQ(atomic_read(&t.neighbour_calls), num_online_cpus());
}

static DEFINE_PER_CPU(unsigned, percpu_probe);
static uintptr_t probe_addr[MAX_CPUS];

static void percpu_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	this_cpu(percpu_probe) = cpu + 1000;
	probe_addr[cpu] = (uintptr_t)this_cpu_ptr(&percpu_probe);
}

TEST(percpu, distinct_per_cpu)
{
	unsigned a, b;
	smp_run_all(percpu_worker, NULL);
	for_each_online_cpu(a) {
		EXPECT_EQ(per_cpu(percpu_probe, a), a + 1000);
		EXPECT_EQ(probe_addr[a], (uintptr_t)per_cpu_ptr(&percpu_probe, a));
		EXPECT_EQ(per_cpu(cpu_number, a), a);
		for_each_online_cpu(b)
			/* Distinct copies, never on one cache line. */
			if (a < b && !EXPECT_GE((probe_addr[a] > probe_addr[b]
						     ? probe_addr[a] - probe_addr[b]
						     : probe_addr[b] - probe_addr[a]),
						CACHE_LINE_SIZE))
				return;
	}
}

#define TIMER_TEST_DELAY_NS (2 * NSEC_PER_MSEC)
#define TIMER_TEST_TIMEOUT_NS (20 * NSEC_PER_SEC)

struct timer_test {
	struct timer timer[MAX_CPUS];
	u64 armed_at[MAX_CPUS], fired_at[MAX_CPUS];
	u32 fired_on[MAX_CPUS];
};

static struct timer_test timer_test;

static void timer_fired(struct timer *timer)
{
	struct timer_test *t = &timer_test;
	unsigned cpu = smp_processor_id();
	t->fired_at[cpu] = arch_clock_ns();
	smp_store_release(&t->fired_on[cpu], cpu + 1);
}

static void timer_worker(void *arg)
{
	struct timer_test *t = arg;
	unsigned cpu = smp_processor_id();
	t->armed_at[cpu] = arch_clock_ns();
	timer_init(&t->timer[cpu], timer_fired);
	timer_add(&t->timer[cpu], t->armed_at[cpu] + TIMER_TEST_DELAY_NS);
	/* Sleep until it fires: the interrupt must wake a halted CPU. */
	arch_irq_disable();
	while (!smp_load_acquire(&t->fired_on[cpu]) &&
	       arch_clock_ns() < t->armed_at[cpu] + TIMER_TEST_TIMEOUT_NS)
		arch_idle();
	arch_irq_enable();
	timer_cancel_sync(&t->timer[cpu]);
}

TEST(time, timer_interrupt_every_cpu)
{
	struct timer_test *t = &timer_test;
	unsigned cpu;
	*t = (struct timer_test){0};
	smp_run_all(timer_worker, t);
	for_each_online_cpu(cpu) {
		/* Fired once, on the CPU that armed it, never early. */
		EXPECT_EQ(t->fired_on[cpu], cpu + 1);
		if (t->fired_on[cpu])
			EXPECT_GE(t->fired_at[cpu], t->armed_at[cpu] + TIMER_TEST_DELAY_NS);
	}
}

struct clock_test {
	struct smp_sync start;
	atomic_t backwards;
	u64 handoff; /* clock value published by the previous CPU in the chain */
	u32 turn;
};

static void clock_worker(void *arg)
{
	struct clock_test *t = arg;
	unsigned n = num_online_cpus(), cpu = smp_processor_id();
	smp_sync_wait(&t->start, n);
	u64 prev = arch_clock_ns();
	for (int i = 0; i < 1000; i++) {
		u64 now = arch_clock_ns();
		if (now < prev)
			atomic_inc(&t->backwards);
		prev = now;
	}
	/*
	 * Across CPUs: in online order, each CPU reads the clock after seeing its
	 * predecessor's reading, so its own must not be smaller.
	 */
	unsigned rank = (unsigned)smp_online_index(cpu);
	while (smp_load_acquire(&t->turn) != rank)
		cpu_relax();
	u64 now = arch_clock_ns();
	if (now < t->handoff)
		atomic_inc(&t->backwards);
	t->handoff = now;
	smp_store_release(&t->turn, rank + 1);
}

TEST(time, clock_monotonic_across_cpus)
{
	static struct clock_test t;
	t = (struct clock_test){0};
	smp_run_all(clock_worker, &t);
	EXPECT_EQ(atomic_read(&t.backwards), 0);
	EXPECT_EQ(t.turn, num_online_cpus());
	u64 a = arch_clock_ns();
	delay_ns(NSEC_PER_MSEC);
	EXPECT_GE(arch_clock_ns() - a, NSEC_PER_MSEC);
}

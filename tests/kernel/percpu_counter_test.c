/* Selftests for per-CPU event counters (grace/percpu_counter.h). */
#include <grace/boot_info.h>
#include <grace/cpumask.h>
#include <grace/percpu_counter.h>
#include <grace/smp.h>
#include <grace/test.h>

#define PCPU_TEST_ADDS 20000

struct pcpu_test_counts {
	u64 events, weight;
};
static DEFINE_PER_CPU(struct pcpu_test_counts, pcpu_test_counts);

/* Every CPU at once: PCPU_TEST_ADDS incs and as many adds of cpu + 1. */
static void pcpu_test_adder(void *arg)
{
	unsigned weight = smp_processor_id() + 1;
	(void)arg;
	for (unsigned i = 0; i < PCPU_TEST_ADDS; i++) {
		pcpu_counter_inc(pcpu_test_counts, events);
		pcpu_counter_add(pcpu_test_counts, weight, weight);
	}
}

/* From the IPI handler: interrupt context adds into the same fields. */
static void pcpu_test_irq_adder(void *arg)
{
	(void)arg;
	pcpu_counter_add(pcpu_test_counts, events, 1000);
}

TEST(percpu_counter, concurrent_adds_on_every_cpu_sum_exactly)
{
	struct pcpu_test_counts before, after, d;
	unsigned online = num_online_cpus(), cpu;
	u64 weights = 0;

	pcpu_counters_sum(&before, &pcpu_test_counts, sizeof(before));
	smp_run_all(pcpu_test_adder, NULL);
	for_each_online_cpu(cpu)
		weights += cpu + 1;
	smp_call_others(pcpu_test_irq_adder, NULL, true);
	pcpu_counters_sum(&after, &pcpu_test_counts, sizeof(after));
	pcpu_counters_delta(&d, &after, &before, sizeof(d));

	EXPECT_EQ(d.events, (u64)online * PCPU_TEST_ADDS + (u64)(online - 1) * 1000);
	EXPECT_EQ(d.weight, weights * PCPU_TEST_ADDS);
}

TEST(percpu_counter, each_cpu_counts_only_into_its_own_copy)
{
	static struct pcpu_test_counts before[MAX_CPUS];
	struct pcpu_test_counts one;
	unsigned cpu;

	for_each_online_cpu(cpu)
		pcpu_counters_read_cpu(&before[cpu], &pcpu_test_counts, sizeof(one), cpu);
	smp_run_all(pcpu_test_adder, NULL);
	for_each_online_cpu(cpu) {
		pcpu_counters_read_cpu(&one, &pcpu_test_counts, sizeof(one), cpu);
		EXPECT_EQ(one.events - before[cpu].events, (u64)PCPU_TEST_ADDS);
		EXPECT_EQ(one.weight - before[cpu].weight, (u64)(cpu + 1) * PCPU_TEST_ADDS);
	}
}

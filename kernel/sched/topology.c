/*
 * Scheduler domains: the levels that placement and balancing look through, so
 * that neither reads every CPU's run queue.
 *
 * Level 0 is a group of up to SCHED_GROUP_CPUS CPUs of one NUMA node, level 1
 * the groups of the CPU's node, level 2 every group of the machine. A level that
 * spans the same groups as the one below it (one node; a node of one group) is
 * skipped. Each group publishes its CPUs' loads in one cache line, a byte per
 * CPU (nr_running, capped at 255), rewritten by a CPU under its run-queue lock
 * only when its byte changes. A scan of a level thus reads a line per group, not
 * one per CPU, and a wider level is scanned less often (balance.c).
 *
 * Built once in sched_init() from the NUMA topology and read-only afterwards;
 * CPUs are grouped in id order within their node, which on the machines Grace
 * boots is the order of the firmware's CPU list: threads, then cores, then
 * packages. sched_domains=flat keeps the old scans of every online CPU.
 */
#include <grace/cmdline.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <asm/irq.h>
#include "sched_internal.h"

bool sched_domains_on = true;

struct sched_group sched_groups[MAX_CPUS];
struct sched_group_load sched_group_loads[MAX_CPUS];
unsigned sched_nr_groups;
static unsigned node_first_group[MAX_NODES], node_end_group[MAX_NODES];

static void add_cpu(unsigned cpu, unsigned node, unsigned *open_group)
{
	struct sched_group *g = &sched_groups[*open_group];
	if (*open_group == sched_nr_groups || g->nr_cpus == SCHED_GROUP_CPUS) {
		*open_group = sched_nr_groups++;
		g = &sched_groups[*open_group];
		g->node = node;
	}
	struct rq *rq = cpu_rq(cpu);
	rq->group = *open_group;
	rq->group_slot = g->nr_cpus;
	g->cpus[g->nr_cpus++] = cpu;
}

void sched_topology_init(unsigned nr_cpus)
{
	static const char *const modes[] = {"domains", "flat"};
	sched_domains_on = cmdline_get_choice("sched_domains", modes, 2, 0) == 0;

	for (unsigned node = 0; node < MAX_NODES; node++) {
		unsigned open_group = sched_nr_groups;
		node_first_group[node] = sched_nr_groups;
		for (unsigned cpu = 0; cpu < nr_cpus; cpu++)
			if ((unsigned)cpu_to_node(cpu) == node)
				add_cpu(cpu, node, &open_group);
		node_end_group[node] = sched_nr_groups;
	}
	printk("sched: %s, %u CPUs in %u groups of up to %u\n",
	       sched_domains_on ? "domains" : "flat scans", nr_cpus, sched_nr_groups,
	       SCHED_GROUP_CPUS);
}

void sched_set_domains(bool on)
{
	unsigned cpu;
	/*
	 * On first, then publish every load under its queue's lock: a change after
	 * a CPU's republish is published by that CPU itself, so no summary is stale
	 * once this returns. Flat scans read the queues, and no summary is written.
	 */
	WRITE_ONCE(sched_domains_on, on);
	if (!on)
		return;
	for_each_online_cpu(cpu) {
		struct rq *rq = cpu_rq(cpu);
		unsigned long flags = arch_irq_save();
		spin_lock(&rq->lock);
		sched_publish_load(rq);
		spin_unlock(&rq->lock);
		arch_irq_restore(flags);
	}
}

bool sched_domains_enabled(void)
{
	return READ_ONCE(sched_domains_on);
}

bool sched_level_span(unsigned cpu, unsigned level, unsigned *first, unsigned *end)
{
	const struct rq *rq = cpu_rq(cpu);
	unsigned node = sched_groups[rq->group].node;
	unsigned lo[SCHED_LEVELS] = {rq->group, node_first_group[node], 0};
	unsigned hi[SCHED_LEVELS] = {rq->group + 1, node_end_group[node], sched_nr_groups};

	*first = lo[level];
	*end = hi[level];
	/* Only a level wider than the one below it is one of its own. */
	return level == 0 || hi[level] - lo[level] > hi[level - 1] - lo[level - 1];
}

void sched_publish_load(struct rq *rq)
{
	lockdep_assert_held(&rq->lock);
	u8 load = rq->nr_running > 255 ? 255 : (u8)rq->nr_running;
	u8 *slot = &sched_group_loads[rq->group].nr_running[rq->group_slot];
	/* Written only on a change: the line moves only when a load does. */
	if (READ_ONCE(*slot) != load)
		WRITE_ONCE(*slot, load);
}

unsigned sched_cpu_group(unsigned cpu)
{
	return cpu_rq(cpu)->group;
}

unsigned sched_group_cpus(unsigned g, unsigned *cpus)
{
	for (unsigned i = 0; i < sched_groups[g].nr_cpus; i++)
		cpus[i] = sched_groups[g].cpus[i];
	return sched_groups[g].nr_cpus;
}

struct sched_balance_stats sched_balance_stats(unsigned cpu)
{
	struct sched_balance_stats s;
	/* Written by its CPU alone, with no lock: each field is read whole, the set may be mixed.
	 */
	const struct sched_balance_stats *live = &cpu_rq(cpu)->stats;
	s.periodic_passes = READ_ONCE(live->periodic_passes);
	s.periodic_reads = READ_ONCE(live->periodic_reads);
	s.pull_passes = READ_ONCE(live->pull_passes);
	s.pull_reads = READ_ONCE(live->pull_reads);
	for (unsigned l = 0; l < SCHED_LEVELS; l++) {
		s.wide_pulls[l] = READ_ONCE(live->wide_pulls[l]);
		s.wide_pushes[l] = READ_ONCE(live->wide_pushes[l]);
	}
	return s;
}

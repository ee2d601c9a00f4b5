/*
 * Load balancing between the per-CPU run queues. Three mechanisms:
 *
 *  - placement: a thread waking up (or starting) goes back to its last CPU if
 *    that CPU is idle, else to an idle CPU it may use, else stays where it was;
 *  - idle balance: a CPU about to halt pulls one queued thread from the busiest
 *    queue (threads queued, not running, so their registers are saved); after a
 *    pull that found nothing it may take, it waits BALANCE_TICKS ticks to try again;
 *  - periodic balance from the tick (every BALANCE_TICKS): only CPUs with more
 *    than one runnable thread tick, so it is the overloaded CPU that acts: it
 *    pushes queued threads to the least loaded CPUs while that evens things out.
 *    Halted CPUs and CPUs running one thread have no tick to pull with.
 *
 * Where they look. With sched_domains=domains (topology.c) each looks through
 * levels: the CPU's group, its node, the machine, reading one summary line per
 * group. Placement looks for an idle CPU level by level around the thread's last
 * CPU. The balancers scan their group on every pass, level 1 on every second
 * periodic pass, level 2 on every fourth, and an idle CPU pulls from level L at
 * most once in BALANCE_TICKS << L ticks: wider scans cost more lines and matter
 * less often. With sched_domains=flat each reads every online CPU's queue.
 *
 * All of them read loads without locks (a stale count costs one wasted pass) and
 * take the two queue locks only to move a thread. Each CPU counts its passes and
 * the lines they read (struct sched_balance_stats).
 */
#include <grace/arch.h>
#include <grace/smp.h>
#include <grace/timer.h>
#include <asm/irq.h>
#include "sched_internal.h"

/* A usable idle CPU of group g, looking from slot start on, or MAX_CPUS. */
static unsigned idle_in_group(unsigned g, const struct cpumask *usable, unsigned start)
{
	const struct sched_group *grp = &sched_groups[g];
	for (unsigned i = 0; i < grp->nr_cpus; i++) {
		unsigned slot = (start + i) % grp->nr_cpus, cpu = grp->cpus[slot];
		if (cpumask_test_cpu(usable, cpu) && group_load(g, slot) == 0)
			return cpu;
	}
	return MAX_CPUS;
}

/* An idle usable CPU, level by level around prev_cpu, or MAX_CPUS. */
static unsigned idle_cpu_by_level(const struct cpumask *usable, unsigned prev_cpu)
{
	const struct rq *prev = cpu_rq(prev_cpu);
	unsigned done_first = prev->group, done_end = prev->group;

	for (unsigned level = 0; level < SCHED_LEVELS; level++) {
		unsigned first, end;
		if (!sched_level_span(prev_cpu, level, &first, &end))
			continue;
		/* From the group after prev's, so that wake-ups spread out. */
		for (unsigned i = 0; i < end - first; i++) {
			unsigned g = first + (prev->group - first + i) % (end - first);
			if (g >= done_first && g < done_end)
				continue;
			unsigned cpu =
			    idle_in_group(g, usable, g == prev->group ? prev->group_slot + 1 : 0);
			if (cpu < MAX_CPUS)
				return cpu;
		}
		done_first = first;
		done_end = end;
	}
	return MAX_CPUS;
}

/* An idle usable CPU from a scan of every one, from prev_cpu + 1 round, or MAX_CPUS. */
static unsigned idle_cpu_flat(const struct cpumask *usable, unsigned prev_cpu)
{
	unsigned cpu;
	for (cpu = cpumask_next(usable, prev_cpu + 1); cpu < MAX_CPUS;
	     cpu = cpumask_next(usable, cpu + 1))
		if (sched_nr_running(cpu) == 0)
			return cpu;
	for (cpu = cpumask_next(usable, 0); cpu < prev_cpu; cpu = cpumask_next(usable, cpu + 1))
		if (sched_nr_running(cpu) == 0)
			return cpu;
	return MAX_CPUS;
}

unsigned select_cpu(const struct cpumask *allowed, unsigned prev_cpu)
{
	struct cpumask usable;

	cpumask_and(&usable, allowed, &cpu_online_mask);
	bool prev_ok = cpumask_test_cpu(&usable, prev_cpu);
	if (prev_ok && sched_nr_running(prev_cpu) == 0)
		return prev_cpu;
	unsigned cpu = READ_ONCE(sched_domains_on) ? idle_cpu_by_level(&usable, prev_cpu)
						   : idle_cpu_flat(&usable, prev_cpu);
	if (cpu < MAX_CPUS)
		return cpu;
	if (prev_ok)
		return prev_cpu;
	cpu = cpumask_next(&usable, 0);
	return cpu < MAX_CPUS ? cpu : prev_cpu;
}

/* The first thread queued on from that may run on to_cpu, or NULL. from->lock held. */
static struct task *pick_movable(struct rq *from, unsigned to_cpu)
{
	struct task *p;
	lockdep_assert_held(&from->lock);
	list_for_each_entry(p, &from->queue, run_node)
		if (cpumask_test_cpu(&p->allowed, to_cpu) && !p->on_cpu)
			return p;
	return NULL;
}

static void count(u64 *counter, u64 n)
{
	WRITE_ONCE(*counter, *counter + n); /* this CPU's own; read by others without a lock */
}

/* The online CPU other than rq's with the most threads queued beyond its running one. */
static struct rq *find_busiest(struct rq *rq)
{
	unsigned cpu, best = 0;
	struct rq *busiest = NULL;

	for_each_online_cpu(cpu) {
		if (cpu == rq->cpu)
			continue;
		unsigned n = sched_nr_running(cpu);
		if (n >= 2 && n > best) {
			best = n;
			busiest = cpu_rq(cpu);
		}
	}
	count(&rq->stats.pull_reads, num_online_cpus() - 1);
	return busiest;
}

/* The online CPU other than rq's with the fewest threads, or NULL. */
static struct rq *find_idlest(struct rq *rq)
{
	unsigned cpu, best = ~0u;
	struct rq *idlest = NULL;

	for_each_online_cpu(cpu) {
		if (cpu == rq->cpu)
			continue;
		unsigned n = sched_nr_running(cpu);
		if (n < best) {
			best = n;
			idlest = cpu_rq(cpu);
		}
	}
	count(&rq->stats.periodic_reads, num_online_cpus() - 1);
	return idlest;
}

/*
 * The online CPU other than rq's in groups [first, end) but not [skip_first,
 * skip_end) whose published load is the highest (busiest) or the lowest (not
 * busiest), or NULL; a busiest one must have a thread queued. Counts a line a group.
 */
static struct rq *scan_groups(struct rq *rq, unsigned first, unsigned end, unsigned skip_first,
			      unsigned skip_end, bool busiest, u64 *reads)
{
	unsigned best = busiest ? 1 : ~0u;
	struct rq *found = NULL;

	for (unsigned g = first; g < end; g++) {
		if (g >= skip_first && g < skip_end)
			continue;
		count(reads, 1);
		for (unsigned slot = 0; slot < sched_groups[g].nr_cpus; slot++) {
			unsigned cpu = sched_groups[g].cpus[slot], n = group_load(g, slot);
			if (cpu == rq->cpu || !cpumask_test_cpu(&cpu_online_mask, cpu))
				continue;
			if (busiest ? n > best : n < best) {
				best = n;
				found = cpu_rq(cpu);
			}
		}
	}
	return found;
}

/*
 * Move one queued thread from from to to if that evens the two out (from has at
 * least two more), and let to reschedule if the thread should run there now.
 */
static bool move_one(struct rq *from, struct rq *to)
{
	bool moved = false;
	unsigned long flags = arch_irq_save();

	double_rq_lock(from, to);
	if (from->nr_running >= to->nr_running + 2) {
		struct task *p = pick_movable(from, to->cpu);
		if (p) {
			move_queued_task(from, to, p);
			check_preempt(to, p);
			moved = true;
		}
	}
	double_rq_unlock(from, to);
	arch_irq_restore(flags);
	return moved;
}

static bool pull_from(struct rq *rq, struct rq *busiest, u64 now)
{
	/* One waiting thread is enough reason: we are idle (and check_preempt wakes us). */
	if (move_one(busiest, rq))
		return true;
	/*
	 * Its queued threads may not run here (bound, or still switching out). Asking
	 * again on every wake-up would queue this CPU, and every idle one, on the lock
	 * that CPU needs to schedule: with paravirtual waits each ask ends in a kick,
	 * which is one more wake-up. Wait as long as the overloaded CPU takes to push
	 * threads itself (periodic_balance).
	 */
	rq->idle_pull_after = now + BALANCE_TICKS * TICK_NSEC;
	return false;
}

/* The busiest queue level by level, each level at most once in BALANCE_TICKS << level. */
static struct rq *find_busiest_by_level(struct rq *rq, u64 now)
{
	unsigned done_first = 0, done_end = 0;

	for (unsigned level = 0; level < SCHED_LEVELS; level++) {
		unsigned first, end;
		if (!sched_level_span(rq->cpu, level, &first, &end))
			continue;
		if (level > 0) {
			if (now < rq->pull_after[level])
				continue;
			rq->pull_after[level] = now + ((u64)BALANCE_TICKS << level) * TICK_NSEC;
		}
		count(&rq->stats.wide_pulls[level], 1);
		struct rq *busiest =
		    scan_groups(rq, first, end, done_first, done_end, true, &rq->stats.pull_reads);
		if (busiest)
			return busiest;
		done_first = first;
		done_end = end;
	}
	return NULL;
}

bool idle_balance(struct rq *rq)
{
	u64 now = arch_clock_ns();
	if (now < rq->idle_pull_after)
		return false;
	count(&rq->stats.pull_passes, 1);
	struct rq *busiest =
	    READ_ONCE(sched_domains_on) ? find_busiest_by_level(rq, now) : find_busiest(rq);
	return busiest && pull_from(rq, busiest, now);
}

/*
 * Push to the least loaded CPU of each level due on this pass (the group on
 * every pass, level L on every 2^L-th), while that evens things out: one scan
 * per level, so a pass reads a bounded number of lines whatever it moves.
 */
static void periodic_balance_by_level(struct rq *rq)
{
	u64 pass = rq->stats.periodic_passes;
	unsigned done_first = 0, done_end = 0;

	for (unsigned level = 0; level < SCHED_LEVELS; level++) {
		unsigned first, end;
		if (!sched_level_span(rq->cpu, level, &first, &end))
			continue;
		if (pass % (1u << level) || READ_ONCE(rq->nr_running) < 2)
			continue;
		count(&rq->stats.wide_pushes[level], 1);
		struct rq *target = scan_groups(rq, first, end, done_first, done_end, false,
						&rq->stats.periodic_reads);
		while (target && move_one(rq, target))
			;
		done_first = first;
		done_end = end;
	}
}

void periodic_balance(struct rq *rq)
{
	count(&rq->stats.periodic_passes, 1);
	if (READ_ONCE(sched_domains_on)) {
		periodic_balance_by_level(rq);
		return;
	}
	/* Bounded: each push lowers our count by one. */
	for (unsigned i = 0; i < MAX_CPUS; i++) {
		struct rq *target = find_idlest(rq);
		if (!target || !move_one(rq, target))
			break;
	}
}

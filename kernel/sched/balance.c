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
 * All three read other queues' nr_running without their locks (a stale count
 * costs one wasted pass) and take the two queue locks only to move a thread.
 */
#include <grace/arch.h>
#include <grace/smp.h>
#include <grace/timer.h>
#include <asm/irq.h>
#include "sched_internal.h"

unsigned select_cpu(const struct cpumask *allowed, unsigned prev_cpu)
{
	struct cpumask usable;
	unsigned cpu;

	cpumask_and(&usable, allowed, &cpu_online_mask);
	bool prev_ok = cpumask_test_cpu(&usable, prev_cpu);
	if (prev_ok && sched_nr_running(prev_cpu) == 0)
		return prev_cpu;
	/* An idle CPU it may use, scanning from the next one so that wake-ups spread out. */
	for (cpu = cpumask_next(&usable, prev_cpu + 1); cpu < MAX_CPUS;
	     cpu = cpumask_next(&usable, cpu + 1))
		if (sched_nr_running(cpu) == 0)
			return cpu;
	for (cpu = cpumask_next(&usable, 0); cpu < prev_cpu; cpu = cpumask_next(&usable, cpu + 1))
		if (sched_nr_running(cpu) == 0)
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

/* The online CPU other than rq's with the most threads queued beyond its running one. */
static struct rq *find_busiest(struct rq *rq)
{
	unsigned cpu, best = 0;
	struct rq *busiest = NULL;

	for_each_online_cpu(cpu) {
		unsigned n = sched_nr_running(cpu);
		if (cpu != rq->cpu && n >= 2 && n > best) {
			best = n;
			busiest = cpu_rq(cpu);
		}
	}
	return busiest;
}

bool idle_balance(struct rq *rq)
{
	u64 now = arch_clock_ns();
	if (now < rq->idle_pull_after)
		return false;
	struct rq *busiest = find_busiest(rq);
	if (!busiest)
		return false;
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

/* The online CPU other than rq's with the fewest threads, or NULL. */
static struct rq *find_idlest(struct rq *rq)
{
	unsigned cpu, best = ~0u;
	struct rq *idlest = NULL;

	for_each_online_cpu(cpu) {
		unsigned n = sched_nr_running(cpu);
		if (cpu != rq->cpu && n < best) {
			best = n;
			idlest = cpu_rq(cpu);
		}
	}
	return idlest;
}

void periodic_balance(struct rq *rq)
{
	/* Bounded: each push lowers our count by one. */
	for (unsigned i = 0; i < MAX_CPUS; i++) {
		struct rq *target = find_idlest(rq);
		if (!target || !move_one(rq, target))
			break;
	}
}

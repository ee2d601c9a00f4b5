/*
 * The RCU hooks (grace/rcu_hooks.h): per-CPU counts of the events, each written
 * only by its own CPU with interrupts off, then the event handed to tree RCU.
 */
#include <grace/percpu.h>
#include <grace/rcu_hooks.h>
#include <grace/atomic.h>

static DEFINE_PER_CPU_ALIGNED(struct sched_hook_counts, hook_counts);

void rcu_note_context_switch(unsigned cpu)
{
	(void)cpu;
	this_cpu(hook_counts).context_switches++;
	rcu_qs_context_switch();
}

void rcu_idle_enter(void)
{
	this_cpu(hook_counts).idle_enters++;
	rcu_eqs_enter();
}

void rcu_idle_exit(void)
{
	this_cpu(hook_counts).idle_exits++;
	rcu_eqs_exit();
}

void rcu_sched_tick(bool idle)
{
	this_cpu(hook_counts).ticks++;
	if (idle)
		this_cpu(hook_counts).idle_ticks++;
	rcu_qs_tick(idle);
}

void sched_hook_counts(unsigned cpu, struct sched_hook_counts *out)
{
	struct sched_hook_counts *c = &per_cpu(hook_counts, cpu);
	out->context_switches = READ_ONCE(c->context_switches);
	out->idle_enters = READ_ONCE(c->idle_enters);
	out->idle_exits = READ_ONCE(c->idle_exits);
	out->ticks = READ_ONCE(c->ticks);
	out->idle_ticks = READ_ONCE(c->idle_ticks);
}

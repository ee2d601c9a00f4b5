/*
 * The periodic events of a CPU, each an ordinary per-CPU struct timer on that
 * CPU's own queue: the tick (HZ while the scheduler wants it, calling
 * sched_tick()) and the profiler's sampling interrupt (timer_sampling). Both are
 * touched only by their own CPU with interrupts off, so the per-CPU state here
 * needs no lock.
 *
 * Tickless: tick_stop() cancels the tick timer, so the hardware is armed for the
 * CPU's next real timer (or disarmed: nothing pending); with 64 vCPUs on 2 host
 * cores, idle CPUs ticking at HZ would cost the host thousands of wake-ups a
 * second for nothing. tick_start() restarts it. A CPU's ticks are
 * TICK_NSEC apart, so jiffies (the clock divided by TICK_NSEC) advances by one
 * between two of them; ticks a CPU slept or was descheduled through are skipped,
 * never replayed in a burst.
 */
#include <grace/arch.h>
#include <grace/percpu.h>
#include <grace/profile.h>
#include <grace/timer.h>
#include <asm/irq.h>
#include "timer_internal.h"

/* kernel/sched/core.c; also declared in grace/sched.h. */
void sched_tick(void);

static void tick_fn(struct timer *t);
static void sample_fn(struct timer *t);

static DEFINE_PER_CPU(struct timer, tick_timer) = TIMER_INITIALIZER(tick_fn);
static DEFINE_PER_CPU(bool, tick_on); /* the tick should run */
static DEFINE_PER_CPU(struct timer, sample_timer) = TIMER_INITIALIZER(sample_fn);
static DEFINE_PER_CPU(u64, sample_period); /* 0: not sampling */

/* The first tick boundary after now. */
static u64 tick_next(u64 now)
{
	return (now / TICK_NSEC + 1) * TICK_NSEC;
}

static void tick_fn(struct timer *t)
{
	sched_tick();
	/* sched_tick() may have stopped the tick; otherwise on to the next boundary. */
	if (this_cpu(tick_on) && !timer_pending(t))
		timer_add(t, tick_next(arch_clock_ns()));
}

bool tick_running(void)
{
	return this_cpu(tick_on);
}

void tick_stop(void)
{
	if (!this_cpu(tick_on))
		return;
	this_cpu(tick_on) = false;
	/* A local cancel re-arms the hardware for the next timer left, or disarms it. */
	timer_cancel(this_cpu_ptr(&tick_timer));
}

void tick_start(void)
{
	unsigned long flags = arch_irq_save();
	if (!this_cpu(tick_on)) {
		this_cpu(tick_on) = true;
		timer_add(this_cpu_ptr(&tick_timer), tick_next(arch_clock_ns()));
	}
	arch_irq_restore(flags);
}

static void sample_fn(struct timer *t)
{
	u64 period = this_cpu(sample_period), now = arch_clock_ns();
	if (!period)
		return;
	profile_sample(timer_irq_regs());
	/* Skip periods we slept through rather than firing a burst. */
	u64 next = t->expires + period;
	while (next <= now)
		next += period;
	timer_add(t, next);
}

void timer_sampling(u64 period_ns)
{
	unsigned long flags = arch_irq_save();
	this_cpu(sample_period) = period_ns;
	if (period_ns)
		timer_add(this_cpu_ptr(&sample_timer), arch_clock_ns() + period_ns);
	else
		timer_cancel(this_cpu_ptr(&sample_timer));
	arch_irq_restore(flags);
}

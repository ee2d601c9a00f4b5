/*
 * Per-CPU timer events on the one hardware timer: the one-shot slot behind
 * timer_oneshot(), and the sampling profiler's periodic tick (kernel/profile.c).
 * The hardware is always programmed for the earlier of the two. Both are touched
 * only by their own CPU with interrupts off, so they need no lock. The scheduler
 * issue replaces this with a timer wheel and a tick.
 */
#include <grace/arch.h>
#include <grace/percpu.h>
#include <grace/profile.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define NO_DEADLINE UINT64_MAX

struct cpu_timers {
	u64 oneshot_deadline;	/* NO_DEADLINE when idle */
	timer_fn_t fn;
	void *arg;
	u64 sample_deadline;	/* next profiler sample, NO_DEADLINE when off */
	u64 sample_period;
	u64 fired;		/* timer interrupts taken */
	struct regs *irq_regs;	/* the interrupted context, during timer_interrupt() */
};

static DEFINE_PER_CPU(struct cpu_timers, cpu_timers) = { NO_DEADLINE, NULL, NULL, NO_DEADLINE, 0, 0, NULL };

void delay_ns(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	while (arch_clock_ns() < end)
		cpu_relax();
}

static void timer_program_locked(struct cpu_timers *t)
{
	arch_timer_arm(MIN(t->oneshot_deadline, t->sample_deadline));
}

void timer_oneshot(u64 deadline_ns, timer_fn_t fn, void *arg)
{
	unsigned long flags = arch_irq_save();
	struct cpu_timers *t = &this_cpu(cpu_timers);
	t->oneshot_deadline = deadline_ns;
	t->fn = fn;
	t->arg = arg;
	timer_program_locked(t);
	arch_irq_restore(flags);
}

void timer_cancel(void)
{
	unsigned long flags = arch_irq_save();
	struct cpu_timers *t = &this_cpu(cpu_timers);
	t->oneshot_deadline = NO_DEADLINE;
	t->fn = NULL;
	timer_program_locked(t);
	arch_irq_restore(flags);
}

void timer_sampling(u64 period_ns)
{
	unsigned long flags = arch_irq_save();
	struct cpu_timers *t = &this_cpu(cpu_timers);
	t->sample_period = period_ns;
	t->sample_deadline = period_ns ? arch_clock_ns() + period_ns : NO_DEADLINE;
	timer_program_locked(t);
	arch_irq_restore(flags);
}

u64 timer_interrupts(unsigned cpu)
{
	return READ_ONCE(per_cpu(cpu_timers, cpu).fired);
}

void timer_interrupt(struct regs *regs)
{
	struct cpu_timers *t = &this_cpu(cpu_timers);
	u64 now = arch_clock_ns();

	WRITE_ONCE(t->fired, t->fired + 1);
	if (now >= t->sample_deadline) {
		profile_sample(regs);
		/* Skip periods we slept through rather than firing a burst. */
		while (t->sample_deadline <= now)
			t->sample_deadline += t->sample_period;
	}
	if (now >= t->oneshot_deadline) {
		timer_fn_t fn = t->fn;
		void *arg = t->arg;
		t->oneshot_deadline = NO_DEADLINE;
		t->fn = NULL;
		if (fn)
			fn(arg);
	}
	/* Early interrupts (a timer that cannot be programmed exactly) just re-arm. */
	timer_program_locked(t);
}

/*
 * The one-shot per-CPU timer behind timer_oneshot(). The slot is only touched by
 * its own CPU, with interrupts off, so it needs no lock.
 */
#include <grace/arch.h>
#include <grace/percpu.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/irq.h>

struct oneshot {
	u64 deadline;
	timer_fn_t fn;
	void *arg;
	u64 fired;	/* timer interrupts taken */
};

static DEFINE_PER_CPU(struct oneshot, oneshot);

void delay_ns(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	while (arch_clock_ns() < end)
		cpu_relax();
}

void timer_oneshot(u64 deadline_ns, timer_fn_t fn, void *arg)
{
	unsigned long flags = arch_irq_save();
	struct oneshot *t = &this_cpu(oneshot);
	t->deadline = deadline_ns;
	t->fn = fn;
	t->arg = arg;
	arch_timer_arm(deadline_ns);
	arch_irq_restore(flags);
}

void timer_cancel(void)
{
	unsigned long flags = arch_irq_save();
	this_cpu(oneshot).fn = NULL;
	arch_timer_arm(UINT64_MAX);
	arch_irq_restore(flags);
}

u64 timer_interrupts(unsigned cpu)
{
	return READ_ONCE(per_cpu(oneshot, cpu).fired);
}

void timer_interrupt(struct regs *regs)
{
	struct oneshot *t = &this_cpu(oneshot);
	WRITE_ONCE(t->fired, t->fired + 1);
	if (!t->fn) {
		arch_timer_arm(UINT64_MAX);
		return;
	}
	if (arch_clock_ns() < t->deadline) {
		/* Early (a timer that cannot be programmed exactly): wait for the rest. */
		arch_timer_arm(t->deadline);
		return;
	}
	timer_fn_t fn = t->fn;
	t->fn = NULL;
	arch_timer_arm(UINT64_MAX);
	fn(t->arg);
}

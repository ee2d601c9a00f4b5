/*
 * Interrupt bookkeeping shared by every arch: nesting depth (in_interrupt()), the
 * per-CPU interrupt count, and the table of external-line handlers.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/smp.h>
#include <grace/spinlock.h>

static DEFINE_PER_CPU(unsigned, irq_depth);
static DEFINE_PER_CPU(u64, irq_total);

struct irq_line {
	irq_handler_t handler;
	void *arg;
	u64 count;
};

static struct irq_line irq_lines[NR_IRQ_LINES]; /* handler/arg set once, under irq_table_lock */
static DEFINE_SPINLOCK(irq_table_lock); /* protects registration: irq_lines[].handler and .arg */

void irq_enter(void)
{
	this_cpu(irq_depth)++;
	this_cpu(irq_total)++;
	lockdep_hardirq_enter();
	/* An interrupt that woke the idle loop leaves RCU's idle state for its length. */
	rcu_irq_enter();
}

void irq_exit(void)
{
	rcu_irq_exit();
	lockdep_hardirq_exit(); /* the handler left no lock held */
	this_cpu(irq_depth)--;
}

bool in_interrupt(void)
{
	return this_cpu(irq_depth) != 0;
}

u64 irq_count(unsigned cpu)
{
	return READ_ONCE(per_cpu(irq_total, cpu));
}

int irq_register(unsigned irq, irq_handler_t handler, void *arg)
{
	if (irq == 0 || irq >= NR_IRQ_LINES || !handler)
		return -EINVAL;
	unsigned long flags = spin_lock_irqsave(&irq_table_lock);
	if (irq_lines[irq].handler) {
		spin_unlock_irqrestore(&irq_table_lock, flags);
		return -EBUSY;
	}
	irq_lines[irq].arg = arg;
	/* Publish arg before handler: pairs with the smp_load_acquire() in irq_dispatch(). */
	smp_store_release(&irq_lines[irq].handler, handler);
	spin_unlock_irqrestore(&irq_table_lock, flags);

	int err = arch_irq_unmask(irq);
	if (err)
		pr_err("irq: cannot unmask line %u: %s\n", irq, errno_name(err));
	return err;
}

void irq_dispatch(unsigned irq)
{
	if (irq >= NR_IRQ_LINES) {
		pr_warn("irq: line %u out of range\n", irq);
		return;
	}
	/* Pairs with the release in irq_register(): arg is set. */
	irq_handler_t handler = smp_load_acquire(&irq_lines[irq].handler);
	if (!handler) {
		pr_warn("irq: spurious interrupt on line %u\n", irq);
		return;
	}
	irq_lines[irq].count++;
	handler(irq_lines[irq].arg);
}

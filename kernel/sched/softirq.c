/*
 * Soft interrupts as per-CPU urgent threads (grace/softirq.h). The pending mask
 * is per CPU and set with an atomic OR, so raising from an interrupt that
 * arrives while softirqd is taking the mask loses nothing; softirqd takes the
 * whole mask with one exchange and sleeps only when it finds it empty.
 */
#include <grace/kthread.h>
#include <grace/lockdep.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <asm/irq.h>

struct softirq_cpu {
	unsigned long pending;
	struct task *thread;
	u64 runs[NR_SOFTIRQS];
};

static DEFINE_PER_CPU_ALIGNED(struct softirq_cpu, softirq_cpu);
static softirq_fn_t softirq_handlers[NR_SOFTIRQS];

void open_softirq(enum softirq_nr nr, softirq_fn_t fn)
{
	/* Pairs with the smp_load_acquire() in softirqd(): what fn uses is set up. */
	smp_store_release(&softirq_handlers[nr], fn);
}

void raise_softirq(enum softirq_nr nr)
{
	unsigned long flags = arch_irq_save();
	struct softirq_cpu *s = &this_cpu(softirq_cpu);
	/* Release: pairs with the xchg_acquire() in softirqd(). */
	fetch_or_release(&s->pending, 1UL << nr);
	if (s->thread)
		wake_up_process(s->thread);
	arch_irq_restore(flags);
}

u64 softirq_runs(unsigned cpu, enum softirq_nr nr)
{
	return READ_ONCE(per_cpu(softirq_cpu, cpu).runs[nr]);
}

static int softirqd(void *arg)
{
	struct softirq_cpu *s = arg; /* ours: the thread is bound to this CPU */

	for (;;) {
		set_current_state(TASK_SLEEPING);
		/* Pairs with the release in raise_softirq(). */
		unsigned long pending = xchg_acquire(&s->pending, 0);
		if (!pending) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		for (unsigned nr = 0; nr < NR_SOFTIRQS; nr++) {
			if (!(pending & (1UL << nr)))
				continue;
			/* Pairs with the release in open_softirq(). */
			softirq_fn_t fn = smp_load_acquire(&softirq_handlers[nr]);
			if (fn) {
				/* Counted as it begins: a reader ordered after fn sees it. */
				WRITE_ONCE(s->runs[nr], s->runs[nr] + 1);
				lockdep_softirq_enter(); /* softirq context: see docs/locking.md */
				fn();
				lockdep_softirq_exit();
			}
		}
	}
	return 0;
}

void softirq_start(void)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct softirq_cpu *s = &per_cpu(softirq_cpu, cpu);
		struct task *t = kthread_create_on_cpu(softirqd, s, cpu, "softirqd/%u", cpu);
		if (!t)
			panic("softirq: cannot create softirqd/%u", cpu);
		t->flags |= TASK_URGENT;
		/* The task set up first: pairs with the read of s->thread in raise_softirq(). */
		smp_store_release(&s->thread, t);
		wake_up_process(t);
	}
}

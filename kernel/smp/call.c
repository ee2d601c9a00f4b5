/*
 * Cross-CPU calls (smp_call and friends) and the IPI handler that runs them.
 *
 * Each CPU has one call slot per target CPU (struct call), in an array of its own
 * sized for the CPUs present, so no caller shares a line with another. A caller
 * fills its slot, pushes it onto the target's lock-free list and sends an IPI only
 * when that list was empty; the target's IPI handler takes the whole list at once
 * and runs it.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/timer.h>
#include <asm/cpu.h>
#include <asm/irq.h>

struct call {
	struct call *next;
	smp_fn_t fn;
	void *arg;
	u32 busy; /* set by the caller; cleared by the target after fn returns */
};

static DEFINE_PER_CPU(struct call *, call_slots); /* this CPU's slot for each target */
static DEFINE_PER_CPU(struct call *, call_queue); /* calls waiting to run on this CPU */
static DEFINE_PER_CPU(u64, ipis_received);

void smp_call_init(void)
{
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		per_cpu(call_slots, cpu) = kzalloc(boot_info.nr_cpus * sizeof(struct call));
		if (!per_cpu(call_slots, cpu))
			panic("smp: no memory for CPU %u's call slots", cpu);
	}
}

u64 smp_ipis_received(unsigned cpu)
{
	return READ_ONCE(per_cpu(ipis_received, cpu));
}

static void call_queue_push(unsigned cpu, struct call *c)
{
	struct call **head = &per_cpu(call_queue, cpu);
	struct call *old = READ_ONCE(*head);
	do {
		c->next = old;
		/*
		 * Release: the target must see fn/arg/busy once it sees c. Pairs with the
		 * xchg_acquire() in ipi_interrupt().
		 */
	} while (!try_cmpxchg_release(head, &old, c));
	if (!old) {
		struct cpumask m;
		cpumask_clear(&m);
		cpumask_set_cpu(&m, cpu);
		arch_send_ipi(&m);
	}
}

static void call_wait(struct call *c)
{
	/* Pairs with the smp_store_release() in ipi_interrupt(). */
	while (smp_load_acquire(&c->busy))
		cpu_relax();
}

/*
 * smp_call and smp_call_try. block: wait for our previous call to cpu to have run
 * before reusing its slot; otherwise give up with -EBUSY while it is queued.
 */
static int call_on(unsigned cpu, smp_fn_t fn, void *arg, bool wait, bool block)
{
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, cpu))
		return -EINVAL;
	/*
	 * Not from interrupt context: an interrupt that arrived while this CPU was
	 * filling its slot for the same target would wait on it forever, or queue it twice.
	 */
	if (in_interrupt()) {
		pr_warn("smp: smp_call() from interrupt context refused\n");
		return -EINVAL;
	}
	int err = 0;
	preempt_disable();
	if (cpu == smp_processor_id()) {
		unsigned long flags = arch_irq_save();
		fn(arg);
		arch_irq_restore(flags);
	} else {
		struct call *c = &this_cpu(call_slots)[cpu];
		if (block)
			call_wait(c); /* our previous call to this CPU may still be queued */
		else if (smp_load_acquire(&c->busy)) /* pairs with ipi_interrupt() */
			err = -EBUSY; /* it is: the target has had interrupts off since */
		if (!err) {
			c->fn = fn;
			c->arg = arg;
			c->busy = 1;
			call_queue_push(cpu, c);
			if (wait)
				call_wait(c);
		}
	}
	preempt_enable();
	return err;
}

int smp_call(unsigned cpu, smp_fn_t fn, void *arg, bool wait)
{
	return call_on(cpu, fn, arg, wait, true);
}

int smp_call_try(unsigned cpu, smp_fn_t fn, void *arg)
{
	return call_on(cpu, fn, arg, false, false);
}

void smp_call_others(smp_fn_t fn, void *arg, bool wait)
{
	unsigned cpu;
	preempt_disable();
	unsigned self = smp_processor_id();
	for_each_online_cpu(cpu)
		if (cpu != self)
			smp_call(cpu, fn, arg, false);
	if (wait)
		for_each_online_cpu(cpu)
			if (cpu != self)
				call_wait(&this_cpu(call_slots)[cpu]);
	preempt_enable();
}

static bool smp_stopping; /* set once, by a panic */

void __noreturn smp_park_self(void)
{
	arch_irq_disable();
	for (;;)
		cpu_relax();
}

void smp_stop_others(void)
{
	struct cpumask others = cpu_online_mask;
	WRITE_ONCE(smp_stopping, true);
	cpumask_clear_cpu(&others, smp_processor_id());
	/* A CPU spinning with interrupts off will not stop; power-off follows regardless. */
	arch_send_ipi(&others);
}

void ipi_interrupt(void)
{
	if (READ_ONCE(smp_stopping))
		smp_park_self();
	this_cpu(ipis_received)++;
	timer_ipi(); /* another CPU changed our earliest timer */
	/* Take the whole list; acquire pairs with the release in call_queue_push(). */
	struct call *c = xchg_acquire(&this_cpu(call_queue), NULL);
	while (c) {
		/* Read next before releasing c: the caller may reuse it at once. */
		struct call *next = c->next;
		c->fn(c->arg);
		/* fn has run: pairs with the acquires of busy in call_wait() and call_on(). */
		smp_store_release(&c->busy, 0);
		c = next;
	}
}

/*
 * SMP: starting the secondary CPUs, cross-CPU calls and smp_run_all().
 *
 * Cross-calls: each CPU has one call slot per target CPU (struct call, in its
 * per-CPU area, so no caller shares a line with another). A caller fills its slot,
 * pushes it onto the target's lock-free list and sends an IPI only when that list
 * was empty; the target's IPI handler takes the whole list at once and runs it.
 *
 * smp_run_all(): the work is handed to a thread bound to each CPU (run/N), so it
 * runs in thread context with interrupts on and may itself sleep or use IPIs.
 */
#include <grace/arch.h>
#include <grace/completion.h>
#include <grace/irq.h>
#include <grace/kthread.h>
#include <grace/mutex.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <grace/vmap.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define CPU_START_TIMEOUT_NS (20ULL * 1000 * 1000 * 1000)	/* 64 vCPUs on 2 host cores are slow to start */
#define RUN_ALL_WARN_NS (30ULL * 1000 * 1000 * 1000)

struct cpumask cpu_online_mask;

struct call {
	struct call *next;
	smp_fn_t fn;
	void *arg;
	u32 busy;		/* set by the caller; cleared by the target after fn returns */
};

struct run_work {
	smp_fn_t fn;
	void *arg;
	u32 remaining;		/* participants still running fn */
	struct completion done;	/* when remaining reaches 0 */
};

static DEFINE_PER_CPU(struct call [MAX_CPUS], call_slots);	/* this CPU's slot for each target */
static DEFINE_PER_CPU(struct call *, call_queue);		/* calls waiting to run on this CPU */
static DEFINE_PER_CPU(u64, ipis_received);

/* Secondary start handshake: BOOTING -> ONLINE by the CPU, BOOTING -> ABANDONED by the boot CPU. */
enum { CPU_OFF, CPU_BOOTING, CPU_ONLINE, CPU_ABANDONED };
static u32 cpu_state[MAX_CPUS];

u64 smp_ipis_received(unsigned cpu)
{
	return READ_ONCE(per_cpu(ipis_received, cpu));
}

static void call_queue_push(unsigned cpu, struct call *c)
{
	struct call **head = &per_cpu(call_queue, cpu);
	struct call *old = __atomic_load_n(head, __ATOMIC_RELAXED);
	do {
		c->next = old;
		/* Release: the target must see fn/arg/busy once it sees c. */
	} while (!__atomic_compare_exchange_n(head, &old, c, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	if (!old) {
		struct cpumask m;
		cpumask_clear(&m);
		cpumask_set(&m, cpu);
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
	if (cpu >= MAX_CPUS || !cpumask_test(&cpu_online_mask, cpu))
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
			call_wait(c);	/* our previous call to this CPU may still be queued */
		else if (smp_load_acquire(&c->busy))
			err = -EBUSY;	/* it is: the target has had interrupts off since */
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

static bool smp_stopping;	/* set once, by a panic */

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
	timer_ipi();		/* another CPU changed our earliest timer */
	/* Take the whole list; acquire pairs with the release in call_queue_push(). */
	struct call *c = __atomic_exchange_n(&this_cpu(call_queue), NULL, __ATOMIC_ACQUIRE);
	while (c) {
		/* Read next before releasing c: the caller may reuse it at once. */
		struct call *next = c->next;
		c->fn(c->arg);
		smp_store_release(&c->busy, 0);
		c = next;
	}
}

unsigned smp_pick_cpus(unsigned ncpus, struct cpumask *mask)
{
	unsigned self = smp_processor_id(), cpu, n = 1;

	cpumask_clear(mask);
	cpumask_set(mask, self);
	for_each_online_cpu(cpu) {
		if (cpu == self || n >= ncpus)
			continue;
		cpumask_set(mask, cpu);
		n++;
	}
	return n;
}

/*
 * smp_run_on(): each CPU has a bound thread, run/N, that sleeps until handed a
 * struct run_work in its slot. One smp_run_on at a time (run_on_lock): each CPU
 * has one slot. A function it runs calling smp_run_on again would wait for
 * itself, so that is refused.
 */
static DEFINE_PER_CPU(struct run_work *, run_slot);
static DEFINE_PER_CPU(struct task *, run_thread);
static DEFINE_MUTEX(run_on_lock);

static void run_work_done(struct run_work *w)
{
	if (__atomic_sub_fetch(&w->remaining, 1, __ATOMIC_ACQ_REL) == 0)
		complete(&w->done);
}

static int run_thread_fn(void *arg)
{
	struct run_work **slot = arg;	/* this CPU's: the thread is bound here */
	for (;;) {
		set_current_state(TASK_SLEEPING);
		struct run_work *w = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQUIRE);
		if (!w) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		w->fn(w->arg);
		run_work_done(w);
	}
	return 0;
}

void smp_run_on(unsigned ncpus, smp_fn_t fn, void *arg)
{
	struct run_work w = { fn, arg, 0, COMPLETION_INIT(w.done) };
	struct cpumask targets, saved = current->allowed;
	unsigned self, cpu;

	if (current->fn == run_thread_fn)
		panic("smp_run_on() called from a function it runs (%p)", (void *)fn);
	mutex_lock(&run_on_lock);
	/* The caller takes part on the CPU it is on: stay there until all are done. */
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	kthread_bind(current, self);

	w.remaining = smp_pick_cpus(ncpus, &targets);
	cpumask_clear_cpu(&targets, self);
	for_each_cpu(cpu, &targets) {
		smp_store_release(&per_cpu(run_slot, cpu), &w);
		wake_up_process(per_cpu(run_thread, cpu));
	}

	fn(arg);
	run_work_done(&w);

	if (!wait_for_completion_timeout(&w.done, RUN_ALL_WARN_NS)) {
		pr_warn("smp: %u CPUs still running work after 30 s, waiting\n",
			__atomic_load_n(&w.remaining, __ATOMIC_RELAXED));
		wait_for_completion(&w.done);
	}
	set_cpus_allowed(current, &saved);
	mutex_unlock(&run_on_lock);
}

void smp_run_all(smp_fn_t fn, void *arg)
{
	smp_run_on(MAX_CPUS, fn, arg);
}

void smp_start_run_threads(void)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct task *t = kthread_create_on_cpu(run_thread_fn, &per_cpu(run_slot, cpu), cpu, "run/%u", cpu);
		if (!t)
			panic("smp: cannot create run/%u", cpu);
		per_cpu(run_thread, cpu) = t;
		wake_up_process(t);
	}
}

void __noreturn secondary_main(void)
{
	unsigned cpu = smp_processor_id();
	u32 expected = CPU_BOOTING;
	if (!__atomic_compare_exchange_n(&cpu_state[cpu], &expected, CPU_ONLINE, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/*
		 * The boot CPU gave up on us: stay out of the way. Not online, so no work
		 * or IPI is sent here; arch_idle() may still take a stray interrupt.
		 */
		arch_irq_disable();
		for (;;)
			arch_idle();
	}
	this_cpu(idle_task).last_switch_ns = arch_clock_ns();
	cpumask_set(&cpu_online_mask, cpu);
	arch_irq_enable();
	cpu_idle_loop();
}

void smp_boot(void)
{
	unsigned self = smp_processor_id();
	unsigned started = 0;

	cpu_state[self] = CPU_ONLINE;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		if (cpu == self)
			continue;
		/* A stack with a guard page below it (mm/vmap.c), in the CPU's own node. */
		char *stack = stack_alloc_node(cpu_to_node(cpu));
		if (!stack) {
			pr_err("smp: no memory for CPU %u's stack\n", cpu);
			continue;
		}
		WRITE_ONCE(cpu_state[cpu], CPU_BOOTING);
		int err = arch_cpu_start(cpu, (uintptr_t)stack + KERNEL_STACK_SIZE);
		if (err) {
			pr_err("smp: CPU %u (hwid %u) failed to start: %s\n", cpu, boot_info.cpus[cpu].hwid,
			       errno_name(err));
			WRITE_ONCE(cpu_state[cpu], CPU_ABANDONED);
			/* The stack stays: a start that reported an error may still have begun. */
			continue;
		}
		started++;
	}

	u64 deadline = arch_clock_ns() + CPU_START_TIMEOUT_NS;
	while (num_online_cpus() < started + 1 && arch_clock_ns() < deadline)
		cpu_relax();

	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		u32 expected = CPU_BOOTING;
		if (__atomic_compare_exchange_n(&cpu_state[cpu], &expected, CPU_ABANDONED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			pr_err("smp: CPU %u (hwid %u) did not come online within %llu s\n", cpu,
			       boot_info.cpus[cpu].hwid, CPU_START_TIMEOUT_NS / 1000000000ULL);
	}
	if (boot_info.nr_cpus_found > boot_info.nr_cpus)
		pr_warn("smp: the firmware describes %u CPUs; Grace supports %u\n",
			boot_info.nr_cpus_found, MAX_CPUS);
	printk("smp: %u CPUs online\n", num_online_cpus());
}

SHELL_CMD(cpus, "", "online CPUs: hardware id, node, interrupts, IPIs, timer interrupts")
{
	unsigned cpu;
	if (argc != 1)
		return SHELL_USAGE;
	printk("%u CPUs online of %u described; boot CPU %u\n", num_online_cpus(), boot_info.nr_cpus,
	       boot_info.boot_cpu);
	printk("  %-5s %5s %4s %12s %12s %12s %12s\n", "cpu", arch_hwid_name, "node", "interrupts", "ipis",
	       "timer", "switches");
	for_each_online_cpu(cpu)
		printk("  cpu%-2u %5u %4d %12llu %12llu %12llu %12llu\n", cpu, boot_info.cpus[cpu].hwid,
		       boot_info.cpus[cpu].node, (unsigned long long)irq_count(cpu),
		       (unsigned long long)smp_ipis_received(cpu), (unsigned long long)timer_interrupts(cpu),
		       (unsigned long long)sched_nr_switches(cpu));
	return 0;
}

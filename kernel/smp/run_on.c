/*
 * smp_run_on() and smp_run_all(): the work is handed to a thread bound to each
 * CPU (run/N), so it runs in thread context with interrupts on and may itself
 * sleep or use IPIs.
 */
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/mutex.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <asm/cpu.h>

#define RUN_ALL_WARN_NS (30ULL * 1000 * 1000 * 1000)

struct run_work {
	smp_fn_t fn;
	void *arg;
	atomic_t remaining;	/* participants still running fn */
	struct completion done; /* when remaining reaches 0 */
};

unsigned smp_pick_cpus(unsigned ncpus, struct cpumask *mask)
{
	unsigned self = smp_processor_id(), cpu, n = 1;

	cpumask_clear(mask);
	cpumask_set_cpu(mask, self);
	for_each_online_cpu(cpu) {
		if (cpu == self || n >= ncpus)
			continue;
		cpumask_set_cpu(mask, cpu);
		n++;
	}
	return n;
}

int smp_online_index(unsigned cpu)
{
	return cpumask_index(&cpu_online_mask, cpu);
}

unsigned smp_online_cpu(unsigned index)
{
	return cpumask_nth(&cpu_online_mask, index);
}

/*
 * smp_run_on(): each CPU has a bound thread, run/N, that sleeps until handed a
 * struct run_work in its slot. One smp_run_on at a time (run_on_lock): each CPU
 * has one slot. A function it runs calling smp_run_on again would wait for
 * itself, so that is refused.
 */
static DEFINE_PER_CPU(struct run_work *, run_slot);
static DEFINE_PER_CPU(struct task *, run_thread);
static DEFINE_MUTEX(run_on_lock); /* one smp_run_on() at a time: protects the run slots */

static void run_work_done(struct run_work *w)
{
	/* Fully ordered: each participant's fn before the last one's complete(). */
	if (atomic_dec_return(&w->remaining) == 0)
		complete(&w->done);
}

static int run_thread_fn(void *arg)
{
	struct run_work **slot = arg; /* this CPU's: the thread is bound here */
	for (;;) {
		set_current_state(TASK_SLEEPING);
		/* Pairs with the smp_store_release() of the slot in smp_run_on(). */
		struct run_work *w = xchg_acquire(slot, NULL);
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
	struct run_work w = {fn, arg, ATOMIC_INIT(0), COMPLETION_INIT(w.done)};
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

	atomic_set(&w.remaining, smp_pick_cpus(ncpus, &targets));
	cpumask_clear_cpu(&targets, self);
	for_each_cpu(cpu, &targets) {
		/* w filled in before it is handed over: pairs with run_thread_fn(). */
		smp_store_release(&per_cpu(run_slot, cpu), &w);
		wake_up_process(per_cpu(run_thread, cpu));
	}

	fn(arg);
	run_work_done(&w);

	if (!wait_for_completion_timeout(&w.done, RUN_ALL_WARN_NS)) {
		pr_warn("smp: %d CPUs still running work after 30 s, waiting\n",
			atomic_read(&w.remaining));
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
		struct task *t = kthread_create_on_cpu(run_thread_fn, &per_cpu(run_slot, cpu), cpu,
						       "run/%u", cpu);
		if (!t)
			panic("smp: cannot create run/%u", cpu);
		per_cpu(run_thread, cpu) = t;
		wake_up_process(t);
	}
}

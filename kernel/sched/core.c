/*
 * The scheduler: one run queue per CPU, round robin with time slices.
 *
 * Policy: round robin, SCHED_SLICE_TICKS ticks per turn, plus one urgent class
 * (TASK_URGENT: the deferred-work threads) queued at the head. Grace runs only
 * kernel threads, with no priorities to honour, so equal turns are the fairness
 * wanted; a FIFO list makes every operation O(1) and easy to follow, and
 * leaves the interesting part, the per-CPU queues and their balancing, in view.
 *
 * Locking: each run queue has its own ticket spinlock, always taken with
 * interrupts off. It protects the queue, rq->curr and the fields of its threads
 * marked so in struct task. A thread's cpu changes only with its run queue
 * locked, so task_rq_lock() locks "the queue p is on" by retrying until p->cpu
 * agrees. The lock is held from the moment schedule() puts the previous thread
 * back (or takes it off) until the switch has finished; whoever holds a queue's
 * lock therefore never sees a thread half switched out. Two queues are locked
 * lower CPU first. Lock order: docs/locking.md.
 *
 * Preemption: a thread is preempted when its preempt count falls to zero with a
 * reschedule pending (preempt_enable), or on the return from an interrupt
 * (sched_irq_return). A preempted thread stays runnable even if it had set
 * TASK_SLEEPING: it was about to check its condition, not to sleep.
 */
#include <grace/arch.h>
#include <grace/irq.h>
#include <grace/address_space.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/timer.h>
#include <grace/workqueue.h>
#include <grace/time.h>
#include <asm/irq.h>
#include "sched_internal.h"

BUILD_BUG_ON(offsetof(struct task, preempt) != 0);

DEFINE_PER_CPU(struct task, idle_task);
DEFINE_PER_CPU_ALIGNED(struct rq, runqueue);

/* The boot CPU before per-CPU areas exist: not preemptible, never switched. */
struct task boot_task = {.preempt = {1, 0}, .state = TASK_RUNNING, .name = "boot"};

static bool sched_ready; /* set once every CPU's run queue exists */

void double_rq_lock(struct rq *a, struct rq *b)
{
	/* Two locks of one class, in the order of their CPUs: nested, for the validator. */
	if (a == b) {
		spin_lock(&a->lock);
	} else if (a->cpu < b->cpu) {
		spin_lock(&a->lock);
		spin_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
	} else {
		spin_lock(&b->lock);
		spin_lock_nested(&a->lock, SINGLE_DEPTH_NESTING);
	}
}

void double_rq_unlock(struct rq *a, struct rq *b)
{
	spin_unlock(&a->lock);
	if (a != b)
		spin_unlock(&b->lock);
}

/* Lock the run queue p is on; interrupts off until task_rq_unlock(). */
static struct rq *task_rq_lock(struct task *p, unsigned long *flags)
{
	for (;;) {
		*flags = arch_irq_save();
		struct rq *rq = cpu_rq(READ_ONCE(p->cpu));
		spin_lock(&rq->lock);
		if (rq->cpu == READ_ONCE(p->cpu))
			return rq;
		spin_unlock(&rq->lock);
		arch_irq_restore(*flags);
	}
}

static void task_rq_unlock(struct rq *rq, unsigned long flags)
{
	spin_unlock_irqrestore(&rq->lock, flags);
}

void enqueue_task(struct rq *rq, struct task *p, bool head)
{
	lockdep_assert_held(&rq->lock);
	if (head)
		list_add(&p->run_node, &rq->queue);
	else
		list_add_tail(&p->run_node, &rq->queue);
	if (!p->on_rq) {
		p->on_rq = 1;
		rq_set_nr_running(rq, rq->nr_running + 1);
	}
}

void dequeue_task(struct rq *rq, struct task *p)
{
	lockdep_assert_held(&rq->lock);
	list_del_init(&p->run_node);
}

void move_queued_task(struct rq *from, struct rq *to, struct task *p)
{
	lockdep_assert_held(&from->lock);
	lockdep_assert_held(&to->lock);
	dequeue_task(from, p);
	p->on_rq = 0;
	rq_set_nr_running(from, from->nr_running - 1);
	WRITE_ONCE(p->cpu, to->cpu);
	enqueue_task(to, p, p->flags & TASK_URGENT);
}

void sched_kick(unsigned cpu)
{
	struct cpumask m;
	cpumask_clear(&m);
	cpumask_set_cpu(&m, cpu);
	atomic64_inc(&cpu_rq(cpu)->resched_ipis);
	arch_send_ipi(&m);
}

void resched_curr(struct rq *rq)
{
	lockdep_assert_held(&rq->lock);
	struct task *curr = rq->curr;
	if (READ_ONCE(curr->preempt.need_resched))
		return;
	WRITE_ONCE(curr->preempt.need_resched, 1);
	/* Our own CPU notices at its next preemption point; another needs the IPI. */
	if (rq->cpu != smp_processor_id())
		sched_kick(rq->cpu);
}

/*
 * p was just queued on rq: should rq reschedule now? When it was idle, or p is
 * urgent; and when p is the second thread there, because a CPU running one
 * thread has no tick (tick_if_shared) and must start one to share its time.
 */
void check_preempt(struct rq *rq, struct task *p)
{
	lockdep_assert_held(&rq->lock);
	struct task *curr = rq->curr;
	if ((curr->flags & TASK_IDLE) || rq->nr_running == 2 ||
	    ((p->flags & TASK_URGENT) && !(curr->flags & TASK_URGENT)))
		resched_curr(rq);
}

/*
 * The tick runs only while this CPU has threads to share it between: time slices
 * and balancing are all it is for (and an x86 timer interrupt under TCG costs
 * QEMU's global lock). It starts as soon as a second thread is runnable here and
 * stops lazily, at a tick that finds fewer (sched_tick) or in the idle loop, so a
 * ping-pong between two threads does not start and stop it at every switch.
 * Interrupts off, no run-queue lock held, which keeps the timer base lock out of
 * the run-queue locks' nesting.
 */
static void tick_if_shared(struct rq *rq)
{
	if (READ_ONCE(rq->nr_running) >= 2)
		tick_start();
}

bool wake_up_process(struct task *p)
{
	/*
	 * Preemption off around the interrupts-off section: a wake-up onto this CPU
	 * sets our need_resched, and the preempt_enable() after interrupts are back on
	 * is what acts on it (the one in the unlock cannot, interrupts being off).
	 */
	preempt_disable();
	unsigned long flags = arch_irq_save();
	struct rq *from, *to;
	/*
	 * The caller's condition store before the p->state read below. Pairs with the
	 * smp_mb() in set_current_state(): either p sees the condition or we see it
	 * sleeping. The run-queue lock cannot give this order: its acquire keeps later
	 * accesses after it, not earlier stores before later loads.
	 */
	smp_mb();

	for (;;) {
		unsigned cpu = READ_ONCE(p->cpu);
		from = cpu_rq(cpu);
		/* A hint chosen without locks; checked against p->allowed once they are held. */
		to = cpu_rq(select_cpu(&p->allowed, cpu));
		double_rq_lock(from, to);
		if (READ_ONCE(p->cpu) == cpu)
			break;
		double_rq_unlock(from, to);
	}

	bool woke = false;
	if (p->state == TASK_SLEEPING) {
		WRITE_ONCE(p->state, TASK_RUNNING);
		woke = true;
		/*
		 * Still on_rq: it has not switched out yet (it may be just before schedule(),
		 * or preempted there), and schedule() will now keep it. Otherwise its switch
		 * away finished under from->lock, which we hold, so it may go anywhere.
		 */
		if (!p->on_rq) {
			struct rq *rq = cpumask_test_cpu(&p->allowed, to->cpu) ? to : from;
			WRITE_ONCE(p->cpu, rq->cpu);
			enqueue_task(rq, p, p->flags & TASK_URGENT);
			check_preempt(rq, p);
		}
	}
	double_rq_unlock(from, to);
	arch_irq_restore(flags);
	preempt_enable();
	return woke;
}

static void account_switch(struct task *prev, struct task *next, u64 now)
{
	prev->runtime_ns += now - prev->last_switch_ns;
	next->last_switch_ns = now;
	next->nr_switches++;
}

/* The second half of every switch, run by the thread switched to (on its own stack). */
static void finish_switch(void)
{
	struct rq *rq = this_rq();
	/* The validator: rq->lock is now ours (the thread switched away from took it). */
	lock_switch_in(&rq->lock.dep_map);
	struct task *prev = rq->prev;
	bool dead = prev->state == TASK_DEAD;
	bool misplaced = prev->on_rq && !cpumask_test_cpu(&prev->allowed, rq->cpu);

	/*
	 * prev's registers are saved: from here another CPU may run it. Pairs with the
	 * reads of on_cpu under the run-queue lock in pick_movable() and set_cpus_allowed().
	 */
	smp_store_release(&prev->on_cpu, 0);
	spin_unlock(&rq->lock);
	tick_if_shared(rq);

	if (dead && atomic_dec_return(&prev->refs) == 0)
		task_reap_later(prev);
	if (misplaced) {
		/* Its affinity changed while it ran here: move it to a CPU it may use. */
		struct cpumask m = prev->allowed;
		set_cpus_allowed(prev, &m);
	}
}

/*
 * Pick the next thread and switch to it. Interrupts off; returns with them off,
 * possibly much later and on another CPU. preempt: prev is being preempted, so it
 * stays runnable whatever its state says.
 */
static void __schedule(bool preempt)
{
	struct task *prev = current;
	struct rq *rq = this_rq();

	spin_lock(&rq->lock);
	WRITE_ONCE(prev->preempt.need_resched, 0);
	if (!(prev->flags & TASK_IDLE)) {
		if (prev->state == TASK_RUNNING || preempt) {
			enqueue_task(rq, prev, (prev->flags & TASK_URGENT) && preempt);
		} else {
			prev->on_rq = 0;
			rq_set_nr_running(rq, rq->nr_running - 1);
		}
	}

	struct task *next = rq->idle;
	if (!list_empty(&rq->queue)) {
		next = list_first_entry(&rq->queue, struct task, run_node);
		if (next == prev && !cpumask_test_cpu(&prev->allowed, rq->cpu))
			/*
			 * Alone here and no longer allowed here (set_cpus_allowed on itself):
			 * switch to idle with prev left queued, and finish_switch moves it.
			 */
			next = rq->idle;
		else
			dequeue_task(rq, next);
	}
	/* A quiescent state even without a switch: no reader runs across schedule(). */
	rcu_note_context_switch();
	if (next == prev) {
		spin_unlock(&rq->lock);
		tick_if_shared(rq);
		return;
	}
	if (next->slice <= 0)
		next->slice = SCHED_SLICE_TICKS;

	account_switch(prev, next, arch_clock_ns());
	rq->nr_switches++;
	rq->curr = next;
	rq->prev = prev;
	next->on_cpu = 1;
	/*
	 * For the validator, rq->lock goes with the switch: next releases it
	 * (finish_switch). Here, while current is still prev.
	 */
	lock_switch_out(&rq->lock.dep_map);
	this_cpu(current_task) = next; /* one CPU's slot; we are not preemptible here */
	if (next->mm)
		mm_load(next->mm);

	arch_switch_to(&prev->ctx, &next->ctx);

	/* prev again, resumed by some CPU's schedule() (maybe not this one's). */
	finish_switch();
}

void schedule(void)
{
	struct task *p = current;
	lockdep_sched_check(); /* a report naming the locks held, before the panic below */
	if (unlikely(p->preempt.count != ((p->flags & TASK_IDLE) ? 1 : 0) || in_interrupt() ||
		     arch_irqs_disabled()))
		panic("schedule() while atomic: thread '%s', preempt count %d, %s, interrupts %s",
		      p->name, p->preempt.count,
		      in_interrupt() ? "in an interrupt" : "not in an interrupt",
		      arch_irqs_disabled() ? "off" : "on");
	arch_irq_disable();
	__schedule(false);
	/* Woken, and already asked to give way again (the unlock in finish_switch could not). */
	while (need_resched())
		__schedule(true);
	arch_irq_enable();
}

void yield(void)
{
	schedule(); /* we are TASK_RUNNING: back to the tail of our queue */
}

void cond_resched(void)
{
	rcu_quiescent_point();
	if (need_resched() && preempt_count() == 0 && !arch_irqs_disabled())
		schedule();
}

void preempt_schedule(void)
{
	/* With interrupts off the switch waits for their return (sched_irq_return). */
	if (!sched_ready || arch_irqs_disabled() || in_interrupt())
		return;
	arch_irq_disable();
	do
		__schedule(true);
	while (need_resched());
	arch_irq_enable();
}

void sched_irq_return(void)
{
	struct task *p = current;
	if (!sched_ready || p->preempt.count != 0)
		return;
	while (READ_ONCE(current->preempt.need_resched))
		__schedule(true);
}

void __noreturn sched_exit_current(void)
{
	arch_irq_disable();
	__schedule(false);
	panic("a dead thread was scheduled again");
}

/* Where every new thread starts (arch_context_init's entry), interrupts off. */
void __noreturn sched_thread_entry(void);
void __noreturn kthread_main(void);

void __noreturn sched_thread_entry(void)
{
	finish_switch();
	arch_irq_enable();
	cond_resched(); /* a reschedule that came due while interrupts were off */
	kthread_main();
}

int set_cpus_allowed(struct task *p, const struct cpumask *mask)
{
	struct cpumask usable;
	unsigned cpu;

	cpumask_and(&usable, mask, &cpu_online_mask);
	if (!cpumask_weight(&usable))
		return -1;

	unsigned long flags;
	struct rq *rq = task_rq_lock(p, &flags);
	p->allowed = *mask;
	if (cpumask_test_cpu(&usable, rq->cpu) || !p->on_rq) {
		/* Fine where it is, or asleep: its next wake-up honours the mask. */
		task_rq_unlock(rq, flags);
		return 0;
	}
	if (rq->curr == p || p->on_cpu) {
		/* Running here: it moves when it is next switched out (finish_switch). */
		resched_curr(rq);
		task_rq_unlock(rq, flags);
		if (p == current)
			schedule();
		return 0;
	}
	/* Queued here but no longer allowed: move it now (preempt_enable acts on a local resched).
	 */
	preempt_disable();
	unsigned to_cpu = cpumask_next(&usable, 0);
	for_each_cpu(cpu, &usable)
		if (sched_nr_running(cpu) < sched_nr_running(to_cpu))
			to_cpu = cpu;
	spin_unlock(&rq->lock);
	struct rq *to = cpu_rq(to_cpu);
	double_rq_lock(rq, to);
	if (p->cpu == rq->cpu && p->on_rq && rq->curr != p && !p->on_cpu) {
		move_queued_task(rq, to, p);
		check_preempt(to, p);
	}
	double_rq_unlock(rq, to);
	arch_irq_restore(flags);
	preempt_enable();
	return 0;
}

void sched_tick(void)
{
	if (!sched_ready)
		return;
	struct rq *rq = this_rq();
	struct task *curr = current;
	bool idle = curr->flags & TASK_IDLE;

	rcu_sched_tick(idle);
	spin_lock(&rq->lock);
	if (!idle && --curr->slice <= 0 && !list_empty(&rq->queue))
		resched_curr(rq);
	spin_unlock(&rq->lock);
	if (--rq->balance_ticks == 0) {
		rq->balance_ticks = BALANCE_TICKS;
		periodic_balance(rq);
	}
	if (READ_ONCE(rq->nr_running) < 2)
		tick_stop(); /* alone again (or idle): no slices to cut */
}

void __noreturn cpu_idle_loop(void)
{
	struct rq *rq = this_rq(); /* the idle thread never migrates */

	for (;;) {
		arch_irq_disable();
		if (!READ_ONCE(rq->nr_running))
			idle_balance(rq);
		if (READ_ONCE(rq->nr_running) || need_resched()) {
			__schedule(false);
			arch_irq_enable();
			continue;
		}
		rcu_idle_enter();
		tick_stop();
		/* Sleeps until an interrupt; one that arrived since the checks above still wakes
		 * us. */
		arch_idle();
		rcu_idle_exit();
		arch_irq_enable();
	}
}

static void rq_init(unsigned cpu)
{
	struct rq *rq = cpu_rq(cpu);
	struct task *idle = &per_cpu(idle_task, cpu);

	spin_lock_init(&rq->lock);
	rq->cpu = cpu;
	list_init(&rq->queue);
	rq->idle = idle;
	rq->curr = idle;
	/* Stagger the CPUs' balancing so they do not all scan at the same tick. */
	rq->balance_ticks = 1 + cpu % BALANCE_TICKS;

	/* preempt.count is already 1 (percpu_setup): the boot code runs non-preemptible. */
	idle->state = TASK_RUNNING;
	idle->flags = TASK_IDLE;
	idle->cpu = cpu;
	idle->on_cpu = 1;
	list_init(&idle->run_node);
	cpumask_clear(&idle->allowed);
	cpumask_set_cpu(&idle->allowed, cpu);
	snprintf(idle->name, sizeof(idle->name), "idle/%u", cpu);
	wait_queue_init(&idle->exited);
	atomic_set(&idle->refs, 1);
	task_table_add(idle);
}

void sched_init(void)
{
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		rq_init(cpu);
	sched_topology_init(boot_info.nr_cpus);
	this_rq()->idle->last_switch_ns = arch_clock_ns();
	/*
	 * The run queues before sched_ready. Its readers (preempt_schedule(),
	 * sched_irq_return(), sched_tick()) run on this CPU until smp_boot(), whose
	 * start of each other CPU orders all of this before that CPU runs them.
	 */
	smp_wmb();
	sched_ready = true;
}

unsigned sched_nr_running(unsigned cpu)
{
	return READ_ONCE(cpu_rq(cpu)->nr_running);
}

u64 sched_nr_switches(unsigned cpu)
{
	return READ_ONCE(cpu_rq(cpu)->nr_switches);
}

u64 sched_resched_ipis(unsigned cpu)
{
	return atomic64_read(&cpu_rq(cpu)->resched_ipis);
}

u64 task_runtime_ns(struct task *p)
{
	unsigned long flags;
	struct rq *rq = task_rq_lock(p, &flags);
	u64 t = p->runtime_ns;
	if (rq->curr == p)
		t += arch_clock_ns() - p->last_switch_ns;
	task_rq_unlock(rq, flags);
	return t;
}

u64 sched_idle_ns(unsigned cpu)
{
	return task_runtime_ns(&per_cpu(idle_task, cpu));
}

void sched_start_reaper(void);

void sched_start(void)
{
	sched_start_reaper();
	softirq_start();
	workqueue_start();
	smp_start_run_threads();
}

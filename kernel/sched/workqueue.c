/*
 * Per-CPU workqueues (grace/workqueue.h): a list under a spinlock per CPU and a
 * bound worker thread that sleeps on a wait queue while the list is empty.
 *
 * A work's pending flag is owned by whoever set it (xchg from 0): the queuer
 * until the worker takes the item off the list, then no one. A delayed work's
 * queuer keeps it through the timer's wait, and cancel_delayed_work_sync() takes
 * it by stopping the timer or taking the item off the list; while cancel holds
 * it, queueing fails.
 */
#include <grace/completion.h>
#include <grace/errno.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/time.h>
#include <grace/workqueue.h>
#include <asm/cpu.h>

struct worker {
	spinlock_t lock;	   /* protects items (the works' node links); taken irqsave */
	struct list_head items;	   /* queued works, oldest first */
	struct wait_queue_head wq; /* the worker sleeps here while items is empty */
	u64 runs;		   /* works run; written by the worker only */
	bool started;
};

static DEFINE_PER_CPU_ALIGNED(struct worker, workers);

void work_init(struct work *w, void (*fn)(struct work *w))
{
	list_init(&w->node);
	w->fn = fn;
	w->pending = 0;
}

static void worker_check_cpu(unsigned cpu)
{
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, cpu))
		panic("workqueue: CPU %u is not online", cpu);
}

/* w's pending flag is the caller's: put w on cpu's list. */
static void worker_insert(unsigned cpu, struct work *w)
{
	struct worker *k = &per_cpu(workers, cpu);
	unsigned long flags = spin_lock_irqsave(&k->lock);
	list_add_tail(&w->node, &k->items);
	spin_unlock_irqrestore(&k->lock, flags);
	wake_up(&k->wq);
}

bool queue_work_on(unsigned cpu, struct work *w)
{
	worker_check_cpu(cpu);
	/* Fully ordered: pairs with the release that clears pending in worker_thread(). */
	if (xchg(&w->pending, 1))
		return false;
	worker_insert(cpu, w);
	return true;
}

static void delayed_work_timer_fn(struct timer *t)
{
	struct delayed_work *dw = container_of(t, struct delayed_work, timer);
	worker_insert(READ_ONCE(dw->cpu), &dw->work);
}

void delayed_work_init(struct delayed_work *dw, void (*fn)(struct work *w))
{
	work_init(&dw->work, fn);
	timer_init(&dw->timer, delayed_work_timer_fn);
	dw->cpu = TIMER_NO_CPU;
}

bool queue_delayed_work_on(unsigned cpu, struct delayed_work *dw, u64 delay)
{
	worker_check_cpu(cpu);
	if (xchg(&dw->work.pending, 1))
		return false;
	WRITE_ONCE(dw->cpu, cpu);
	if (!delay) {
		worker_insert(cpu, &dw->work);
		return true;
	}
	/* Whole ticks from now: at least delay * TICK_NSEC, never less. */
	timer_add_on(&dw->timer, arch_clock_ns() + jiffies_to_ns(delay), cpu);
	return true;
}

bool queue_delayed_work(struct delayed_work *dw, u64 delay)
{
	preempt_disable();
	unsigned cpu = smp_processor_id();
	preempt_enable();
	return queue_delayed_work_on(cpu, dw, delay);
}

/* Take dw off cpu's list if it is there; true if it was. */
static bool worker_remove(unsigned cpu, struct work *w)
{
	struct worker *k = &per_cpu(workers, cpu);
	bool was_queued = false;
	unsigned long flags = spin_lock_irqsave(&k->lock);
	if (!list_empty(&w->node)) {
		list_del_init(&w->node);
		was_queued = true;
	}
	spin_unlock_irqrestore(&k->lock, flags);
	return was_queued;
}

bool cancel_delayed_work_sync(struct delayed_work *dw)
{
	bool was_pending = true;

	/* Take the pending flag: unqueued (ours at once), armed, or listed. */
	for (;;) {
		if (!xchg(&dw->work.pending, 1)) {
			was_pending = false;
			break;
		}
		if (timer_cancel(&dw->timer))
			break;
		unsigned cpu = READ_ONCE(dw->cpu);
		if (cpu != TIMER_NO_CPU && worker_remove(cpu, &dw->work))
			break;
		/*
		 * Between the two: the timer's function is on its way to the list (on
		 * another CPU; on this one it would have finished), or the worker has
		 * taken the item and is about to clear pending. Either ends soon.
		 */
		cpu_relax();
	}
	/* A running function cannot queue dw again now; wait for it to end. */
	unsigned cpu = READ_ONCE(dw->cpu);
	if (cpu != TIMER_NO_CPU)
		flush_workqueue_cpu(cpu);
	/* Pairs with the xchg() of the next queuer. */
	smp_store_release(&dw->work.pending, 0);
	return was_pending;
}

bool queue_work(struct work *w)
{
	preempt_disable();
	unsigned cpu = smp_processor_id();
	preempt_enable();
	return queue_work_on(cpu, w);
}

u64 work_runs(unsigned cpu)
{
	return READ_ONCE(per_cpu(workers, cpu).runs);
}

static struct work *worker_take(struct worker *k)
{
	struct work *w = NULL;
	unsigned long flags = spin_lock_irqsave(&k->lock);
	if (!list_empty(&k->items)) {
		w = list_first_entry(&k->items, struct work, node);
		list_del_init(&w->node);
	}
	spin_unlock_irqrestore(&k->lock, flags);
	return w;
}

static int worker_thread(void *arg)
{
	struct worker *k = arg;
	for (;;) {
		struct work *w;
		wait_event(k->wq, (w = worker_take(k)) != NULL);
		/*
		 * Not pending from here: the function may queue it again. Release: off the
		 * list first; pairs with the xchg() in queue_work_on().
		 */
		smp_store_release(&w->pending, 0);
		w->fn(w);
		WRITE_ONCE(k->runs, k->runs + 1);
	}
	return 0;
}

struct flush_work {
	struct work work;
	struct completion done;
};

static void flush_fn(struct work *w)
{
	complete(&container_of(w, struct flush_work, work)->done);
}

void flush_workqueue_cpu(unsigned cpu)
{
	struct flush_work f;
	work_init(&f.work, flush_fn);
	completion_init(&f.done);
	queue_work_on(cpu, &f.work);
	wait_for_completion(&f.done);
}

void workqueue_start(void)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct worker *k = &per_cpu(workers, cpu);
		spin_lock_init(&k->lock);
		list_init(&k->items);
		wait_queue_init(&k->wq);
		struct task *t = kthread_create_on_cpu(worker_thread, k, cpu, "kworker/%u", cpu);
		if (!t)
			panic("workqueue: cannot create kworker/%u", cpu);
		wake_up_process(t);
		kthread_detach(t);
	}
}

/*
 * Per-CPU workqueues (grace/workqueue.h): a list under a spinlock per CPU and a
 * bound worker thread that sleeps on a wait queue while the list is empty.
 */
#include <grace/completion.h>
#include <grace/errno.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/workqueue.h>

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

bool queue_work_on(unsigned cpu, struct work *w)
{
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, cpu))
		panic("workqueue: CPU %u is not online", cpu);
	struct worker *k = &per_cpu(workers, cpu);
	/* Fully ordered: pairs with the release that clears pending in worker_thread(). */
	if (xchg(&w->pending, 1))
		return false;
	unsigned long flags = spin_lock_irqsave(&k->lock);
	list_add_tail(&w->node, &k->items);
	spin_unlock_irqrestore(&k->lock, flags);
	wake_up(&k->wq);
	return true;
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

/*
 * Kernel threads: creation (a struct task from a slab cache and a guard-paged
 * stack from the vmap area, on the node of the CPU it is placed on), the thread
 * table, exit, and reaping.
 *
 * Reaping: a dead thread is still running on its stack until the switch away
 * finishes, so its own reference is dropped in finish_switch(). If that was the
 * last one it cannot be freed there (interrupts are off, and freeing a stack may
 * flush TLBs by IPI), so it goes on a lock-free list for the reaper thread.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/vmap.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "sched_internal.h"

static struct kmem_cache *task_cache;
static LIST_HEAD(task_table);
/* task_table_lock protects task_table (each task's all_node), task_count and next_task_id. */
static DEFINE_SPINLOCK(task_table_lock);
static unsigned task_count; /* kthread_count() reads it without the lock */
static u32 next_task_id;

static struct task *reap_list; /* pushed with CAS, taken whole by the reaper */
static DEFINE_WAIT_QUEUE_HEAD(reap_wq);

void sched_thread_entry(void);

void task_table_add(struct task *p)
{
	unsigned long flags = spin_lock_irqsave(&task_table_lock);
	p->id = next_task_id++;
	list_add_tail(&p->all_node, &task_table);
	task_count++;
	spin_unlock_irqrestore(&task_table_lock, flags);
}

static void task_free(struct task *p)
{
	unsigned long flags = spin_lock_irqsave(&task_table_lock);
	list_del_init(&p->all_node);
	task_count--;
	spin_unlock_irqrestore(&task_table_lock, flags);
	stack_free(p->stack);
	kmem_cache_free(task_cache, p);
}

void task_get(struct task *p)
{
	atomic_inc(&p->refs);
}

void task_put(struct task *p)
{
	if (atomic_dec_return(&p->refs) == 0)
		task_free(p);
}

void task_reap_later(struct task *p)
{
	struct task *old = READ_ONCE(reap_list);
	/* Release: reap_next before p is on the list; pairs with the xchg_acquire() in reaper(). */
	do
		p->reap_next = old;
	while (!try_cmpxchg_release(&reap_list, &old, p));
	wake_up(&reap_wq);
}

static int reaper(void *arg)
{
	(void)arg;
	for (;;) {
		wait_event(reap_wq, READ_ONCE(reap_list) != NULL);
		/* Pairs with the release in task_reap_later(). */
		struct task *p = xchg_acquire(&reap_list, NULL);
		while (p) {
			struct task *next = p->reap_next;
			task_free(p);
			p = next;
		}
	}
	return 0;
}

void sched_for_each_task(void (*fn)(struct task *p, void *arg), void *arg)
{
	unsigned long flags = spin_lock_irqsave(&task_table_lock);
	struct task *p;
	list_for_each_entry(p, &task_table, all_node)
		fn(p, arg);
	spin_unlock_irqrestore(&task_table_lock, flags);
}

unsigned kthread_count(void)
{
	return READ_ONCE(task_count);
}

/* Every thread begins here (sched_thread_entry, after its first switch). */
void __noreturn kthread_main(void);
void __noreturn kthread_main(void)
{
	struct task *self = current;
	kthread_exit(self->fn(self->arg));
}

void __noreturn kthread_exit(int code)
{
	struct task *self = current;
	fs_task_exit(self);
	lockdep_exit_check();
	self->exit_code = code;
	/*
	 * Not preemptible from here on: a preemption now would keep a dead thread
	 * queued. kthread_stop/join may see TASK_DEAD before we have switched away;
	 * that is fine, our own reference keeps the stack until finish_switch().
	 */
	preempt_disable();
	/* exit_code before TASK_DEAD: pairs with the smp_load_acquire() in kthread_join(). */
	smp_store_release(&self->state, TASK_DEAD);
	wake_up_all(&self->exited);
	sched_exit_current();
}

/* A new thread, asleep; bound to cpu, or free to run anywhere with KTHREAD_ANY_CPU. */
#define KTHREAD_ANY_CPU (-1)
static struct task *kthread_vcreate(int (*fn)(void *), void *arg, int bind_cpu, const char *fmt,
				    va_list ap)
{
	if (bind_cpu != KTHREAD_ANY_CPU &&
	    (bind_cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, (unsigned)bind_cpu)))
		return NULL;
	if (!task_cache)
		task_cache = kmem_cache_create("task", sizeof(struct task), 64, 0, NULL);
	struct task *p = task_cache ? kmem_cache_alloc(task_cache) : NULL;
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));

	/* New threads spread over the CPUs; the stack comes from that CPU's node. */
	unsigned cpu = bind_cpu != KTHREAD_ANY_CPU
			   ? (unsigned)bind_cpu
			   : select_cpu(&cpu_online_mask, smp_processor_id());
	p->stack = stack_alloc_node(cpu_to_node(cpu));
	if (!p->stack) {
		kmem_cache_free(task_cache, p);
		return NULL;
	}
	vsnprintf(p->name, sizeof(p->name), fmt, ap);
	p->fn = fn;
	p->arg = arg;
	p->cpu = cpu;
	p->state = TASK_SLEEPING; /* until the first wake_up_process() */
	if (bind_cpu != KTHREAD_ANY_CPU) {
		cpumask_clear(&p->allowed);
		cpumask_set_cpu(&p->allowed, cpu);
	} else {
		p->allowed = cpu_online_mask;
	}
	/* Its first switch-in ends in finish_switch(), which drops the run-queue lock. */
	p->preempt.count = 1;
	list_init(&p->run_node);
	wait_queue_init(&p->exited);
	atomic_set(&p->refs, 2);
	arch_context_init(&p->ctx, (uintptr_t)p->stack + KERNEL_STACK_SIZE, sched_thread_entry);
	task_table_add(p);
	return p;
}

struct task *kthread_create(int (*fn)(void *), void *arg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct task *p = kthread_vcreate(fn, arg, KTHREAD_ANY_CPU, fmt, ap);
	va_end(ap);
	return p;
}

struct task *kthread_create_on_cpu(int (*fn)(void *), void *arg, unsigned cpu, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct task *p = kthread_vcreate(fn, arg, (int)cpu, fmt, ap);
	va_end(ap);
	return p;
}

struct task *kthread_run(int (*fn)(void *), void *arg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct task *p = kthread_vcreate(fn, arg, KTHREAD_ANY_CPU, fmt, ap);
	va_end(ap);
	if (p)
		wake_up_process(p);
	return p;
}

int kthread_bind(struct task *p, unsigned cpu)
{
	struct cpumask m;
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, cpu))
		return -EINVAL;
	cpumask_clear(&m);
	cpumask_set_cpu(&m, cpu);
	return set_cpus_allowed(p, &m) ? -EINVAL : 0;
}

bool kthread_should_stop(void)
{
	return READ_ONCE(current->should_stop);
}

int kthread_join(struct task *p)
{
	/* Pairs with the release in kthread_exit(): exit_code is set. */
	wait_event(p->exited, smp_load_acquire(&p->state) == TASK_DEAD);
	int code = p->exit_code;
	/*
	 * Its last switch away drops its own reference within a few instructions
	 * (it runs non-preemptible from TASK_DEAD on). Wait for that, so that the
	 * stack is freed here and now, not later by the reaper: a caller that joins
	 * its threads finds memory as it was before them.
	 */
	while (atomic_read(&p->refs) > 1)
		cpu_relax();
	task_put(p);
	return code;
}

int kthread_stop(struct task *p)
{
	/* wake_up_process()'s barrier orders this before its read of p's state. */
	WRITE_ONCE(p->should_stop, 1);
	wake_up_process(p);
	return kthread_join(p);
}

void kthread_detach(struct task *p)
{
	task_put(p);
}

void sched_start_reaper(void);
void sched_start_reaper(void)
{
	struct task *p = kthread_run(reaper, NULL, "reaper");
	if (!p)
		panic("sched: cannot start the reaper thread");
	kthread_detach(p);
}

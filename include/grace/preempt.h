/*
 * Preemption count, per thread (struct task): nonzero means the thread must not be
 * switched out involuntarily, so per-CPU data it is using stays this CPU's.
 * Spinlocks and interrupts-off sections raise it. When preempt_enable() brings it
 * back to zero and a reschedule is pending, the switch happens right there; the
 * other preemption point is the return from an interrupt (sched_irq_return()).
 *
 * The count lives in the thread, not the CPU: on riscv64 an increment is a load
 * and a store through tp, and a thread preempted between the two would store into
 * the CPU it left.
 */
#ifndef GRACE_PREEMPT_H
#define GRACE_PREEMPT_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/percpu.h>

/* The part of struct task this header needs; the rest is in grace/sched.h. */
struct task_preempt {
	int count;
	u32 need_resched; /* set by anyone under the run queue lock; read here */
};

static inline struct task_preempt *current_preempt(void)
{
	return (struct task_preempt *)arch_current();
}

void preempt_schedule(void);

static inline void preempt_disable(void)
{
	current_preempt()->count++;
	barrier();
}

static inline void preempt_enable_no_resched(void)
{
	barrier();
	current_preempt()->count--;
}

static inline void preempt_enable(void)
{
	struct task_preempt *p = current_preempt();
	barrier();
	if (--p->count == 0 && unlikely(READ_ONCE(p->need_resched)))
		preempt_schedule();
}

static inline int preempt_count(void)
{
	return current_preempt()->count;
}

/*
 * this_cpu(var).field++ from code that may be preempted: with preemption on, a
 * switch between the load and the store would lose the increment of the thread
 * that ran meanwhile on this CPU, or, after a migration, write into the CPU the
 * thread left. For per-CPU statistics that only their CPU writes.
 */
#define this_cpu_inc_preemptible(var, field)                                                       \
	do {                                                                                       \
		preempt_disable();                                                                 \
		this_cpu(var).field++;                                                             \
		preempt_enable();                                                                  \
	} while (0)

#endif

/*
 * Expedited grace periods: instead of waiting for quiescent states to happen,
 * IPI every CPU that is not idle; the handler reports at once when it
 * interrupted code outside a read-side section, and otherwise has the reader's
 * rcu_read_unlock() report (rcu_urgent_qs). Idle CPUs, and CPUs that switch or
 * go idle meanwhile, need no answer. One at a time (exp_mutex).
 */
#include <grace/arch.h>
#include <grace/mutex.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/wait.h>
#include "rcu_internal.h"

/* Poll the holdouts this often, IPI them again this often. */
#define RCU_EXP_POLL_NS (100 * 1000)
#define RCU_EXP_RESEND_NS (2 * 1000 * 1000)

/* One expedited grace period at a time: protects rcu_state's exp_seq and exp_* arrays. */
static DEFINE_MUTEX(exp_mutex);

static void rcu_exp_handler(void *arg)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	if (rcu_outside_reader()) {
		/*
		 * Pairs with the smp_load_acquire() in synchronize_rcu_expedited(): the
		 * read-side sections this CPU ended are before the answer. Only what comes
		 * before the store needs ordering, which is what a release orders: no
		 * smp_mb() as well.
		 */
		smp_store_release(&rdp->exp_qs_seq, (u64)(uintptr_t)arg);
	} else {
		/* Answer at the reader's end, with the sequence this IPI delivered. */
		WRITE_ONCE(rdp->exp_want, (u64)(uintptr_t)arg);
		WRITE_ONCE(this_cpu(rcu_urgent_qs), 1);
	}
}

void synchronize_rcu_expedited(void)
{
	if (READ_ONCE(rcu_broken) || !rcu_ready)
		return;
	struct cpumask pending;
	unsigned cpu, self;

	mutex_lock(&exp_mutex);
	u64 seq = rcu_state.exp_seq + 1;
	WRITE_ONCE(rcu_state.exp_seq, seq);
	cpumask_clear(&pending);
	/*
	 * The caller's removal before the samples. Pairs with the smp_mb() in
	 * rcu_idle_exit() and rcu_irq_enter(): a CPU sampled idle sees the removal once
	 * it leaves idle. One barrier: exp_seq is read only here, under exp_mutex.
	 */
	smp_mb();
	preempt_disable();
	self = smp_processor_id();
	for_each_online_cpu(cpu) {
		struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
		rdp->exp_dynticks_snap = READ_ONCE(rdp->dynticks);
		rdp->exp_ctxsw_snap = READ_ONCE(rdp->ctxsw);
		/* Idle CPUs are in a quiescent state already: no IPI. We are in one too. */
		if (cpu != self && !(rdp->exp_dynticks_snap & 1))
			cpumask_set_cpu(&pending, cpu);
	}
	preempt_enable();
	u64 resend = 0;
	while (!cpumask_empty(&pending)) {
		u64 now = arch_clock_ns();
		for_each_cpu(cpu, &pending) {
			struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
			/* The acquire pairs with rcu_exp_handler(), rcu_read_unlock_special(). */
			if (READ_ONCE(rdp->dynticks) != rdp->exp_dynticks_snap ||
			    READ_ONCE(rdp->ctxsw) != rdp->exp_ctxsw_snap ||
			    smp_load_acquire(&rdp->exp_qs_seq) == seq) {
				cpumask_clear_cpu(&pending, cpu);
				continue;
			}
			/* Never wait for the slot: a CPU with interrupts off must not stop us. */
			if (now >= resend &&
			    !smp_call_try(cpu, rcu_exp_handler, (void *)(uintptr_t)seq))
				rdp->exp_ipis++;
		}
		if (now >= resend)
			resend = now + RCU_EXP_RESEND_NS;
		if (!cpumask_empty(&pending))
			schedule_timeout_until(arch_clock_ns() + RCU_EXP_POLL_NS);
	}
	/*
	 * The samples before the caller's free. Pairs with the smp_mb() before the
	 * dynticks and ctxsw updates in rcu_idle_enter(), rcu_irq_exit() and
	 * rcu_note_context_switch(): a changed sample means the readers before it are done.
	 */
	smp_mb();
	mutex_unlock(&exp_mutex);
}

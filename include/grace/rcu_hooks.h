/*
 * The scheduler's hooks for RCU, named for the events they report. The scheduler
 * calls them; tree RCU (kernel/rcu/tree.c) gives them their meaning:
 *
 *   rcu_note_context_switch(cpu)  every pass through the scheduler on cpu (a
 *                                 switch or not): a quiescent state. Runs under
 *                                 cpu's run-queue lock, interrupts off.
 *   rcu_idle_enter/exit()         the idle loop is about to halt / has woken: an
 *                                 extended quiescent state, interrupts off.
 *   rcu_sched_tick(idle)          every tick (a CPU ticks while it has more than
 *                                 one runnable thread); idle says whether it
 *                                 interrupted the idle thread. Hard-interrupt context.
 *
 * kernel/sched/hooks.c counts what they see, so that a selftest can check the
 * scheduler calls them, and passes each event to tree RCU (kernel/rcu/tree.c)
 * through the rcu_qs_* / rcu_eqs_* functions below.
 */
#ifndef GRACE_RCU_HOOKS_H
#define GRACE_RCU_HOOKS_H

#include <grace/types.h>

void rcu_note_context_switch(unsigned cpu);
void rcu_idle_enter(void);
void rcu_idle_exit(void);
void rcu_sched_tick(bool idle);

/* RCU's side of the hooks (kernel/rcu/tree.c), same contexts as above. */
void rcu_qs_context_switch(void);
void rcu_eqs_enter(void);
void rcu_eqs_exit(void);
void rcu_qs_tick(bool idle);
/*
 * From irq_enter()/irq_exit() (kernel/irq.c): an interrupt that arrives in the
 * idle loop's halt leaves the extended quiescent state for its length, so its
 * handler may use RCU readers.
 */
void rcu_irq_enter(void);
void rcu_irq_exit(void);

struct sched_hook_counts {
	u64 context_switches, idle_enters, idle_exits, ticks, idle_ticks;
};
void sched_hook_counts(unsigned cpu, struct sched_hook_counts *out);

#endif

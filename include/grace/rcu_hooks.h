/*
 * The scheduler's hooks for RCU, named for the events they report. The scheduler
 * calls them; RCU (the tree-RCU issue) gives them their meaning:
 *
 *   rcu_note_context_switch(cpu)  a context switch on cpu: a quiescent state.
 *                                 Runs under cpu's run-queue lock, interrupts off.
 *   rcu_idle_enter/exit()         the idle loop is about to halt / has woken: an
 *                                 extended quiescent state, interrupts off.
 *   rcu_sched_tick(idle)          every tick on a busy CPU; idle says whether it
 *                                 interrupted the idle thread. Hard-interrupt context.
 *
 * Until RCU exists they count what they see (kernel/sched/hooks.c) so that a
 * selftest can check the scheduler calls them.
 */
#ifndef GRACE_RCU_HOOKS_H
#define GRACE_RCU_HOOKS_H

#include <grace/types.h>

void rcu_note_context_switch(unsigned cpu);
void rcu_idle_enter(void);
void rcu_idle_exit(void);
void rcu_sched_tick(bool idle);

struct sched_hook_counts {
	u64 context_switches, idle_enters, idle_exits, ticks, idle_ticks;
};
void sched_hook_counts(unsigned cpu, struct sched_hook_counts *out);

#endif

/*
 * SMP: bringing CPUs online, cross-CPU function calls, and smp_run_all().
 *
 * smp_call(cpu, fn, arg, wait) runs fn(arg) on cpu in IPI context (interrupts off).
 * smp_run_all(fn, arg) runs fn(arg) on every online CPU at once, each in a thread
 * bound to that CPU with interrupts enabled (not in interrupt context, so fn may
 * sleep, send and wait for IPIs), and returns when all have returned; the caller
 * takes part on its own CPU and stays there meanwhile. One smp_run_all at a time.
 */
#ifndef GRACE_SMP_H
#define GRACE_SMP_H

#include <grace/compiler.h>
#include <grace/cpumask.h>

typedef void (*smp_fn_t)(void *arg);

/* Run fn(arg) on cpu from its IPI handler; with wait, return after it ran. */
int smp_call(unsigned cpu, smp_fn_t fn, void *arg, bool wait);
/*
 * Like smp_call without waiting, but never blocks: -EBUSY when this CPU's previous
 * call to cpu has not run yet (cpu has had interrupts off since). For senders that
 * must keep going whatever the target does, like RCU's forcing and stall reports.
 */
int smp_call_try(unsigned cpu, smp_fn_t fn, void *arg);
/* Run fn(arg) on every online CPU but this one, from the IPI handler; with wait, wait for all. */
void smp_call_others(smp_fn_t fn, void *arg, bool wait);
/* Run fn(arg) on every online CPU, this one included, in task context; wait for all. */
void smp_run_all(smp_fn_t fn, void *arg);
/* This CPU and the first ncpus - 1 other online CPUs, in mask; returns how many. */
unsigned smp_pick_cpus(unsigned ncpus, struct cpumask *mask);
/*
 * The online mask may have holes (a CPU that did not come online), so a CPU's id
 * is no index into an array of num_online_cpus() entries. smp_online_index(cpu):
 * cpu's place among the online CPUs (0 for the lowest), or -1 if it is not online;
 * smp_online_cpu(i): the online CPU of place i, or MAX_CPUS past the last. The
 * mask is fixed once smp_boot() returns, so each is the other's inverse for good.
 */
int smp_online_index(unsigned cpu);
unsigned smp_online_cpu(unsigned index);
/* Like smp_run_all on the CPUs smp_pick_cpus(ncpus) picks (the others stay idle). */
void smp_run_on(unsigned ncpus, smp_fn_t fn, void *arg);

void smp_boot(void);
/* Give every present CPU its call slots (smp_boot, before a second CPU runs). */
void smp_call_init(void);
/* Make every other online CPU park with interrupts off (panic). */
void smp_stop_others(void);
void __noreturn smp_park_self(void);
/* IPIs taken by cpu since boot. */
u64 smp_ipis_received(unsigned cpu);
/* Create the run/N threads behind smp_run_on (from sched_start). */
void smp_start_run_threads(void);

/* Interrupt nesting depth of this CPU: nonzero inside a hard interrupt handler. */
bool in_interrupt(void);

#endif

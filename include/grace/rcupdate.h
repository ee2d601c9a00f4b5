/*
 * Read-copy update (kernel/rcu/tree.c). Non-preemptible RCU: a read-side critical
 * section is a stretch with preemption disabled, so it never sleeps, and a CPU
 * that context-switches, idles, or is found outside any such stretch has passed
 * a quiescent state. A grace period ends once every CPU online at its start has
 * passed one; then every reader that began before it has ended.
 *
 *	rcu_read_lock();
 *	p = rcu_dereference(gp);	(pairs with rcu_assign_pointer)
 *	... use *p ...
 *	rcu_read_unlock();
 *
 * Updaters publish with rcu_assign_pointer() and free what they unpublished with
 * call_rcu()/kfree_rcu() (callback after a grace period) or after
 * synchronize_rcu() (sleeps until one has passed).
 */
#ifndef GRACE_RCUPDATE_H
#define GRACE_RCUPDATE_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/cpumask.h>
#include <grace/lockdep.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/types.h>

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

typedef void (*rcu_callback_t)(struct rcu_head *head);

/*
 * Set on a CPU by RCU's IPI when it found the CPU inside a read-side section with
 * a grace period waiting on it; the outermost rcu_read_unlock() then reports the
 * quiescent state at once instead of leaving it to the next IPI. Only this CPU
 * writes it (from its IPI handler or here): reading it moves no cache line.
 */
DECLARE_PER_CPU(u32, rcu_urgent_qs);
void rcu_read_unlock_special(void);

static inline void rcu_read_lock(void)
{
	preempt_disable();
	lockdep_rcu_read_lock(); /* LOCKDEP: sleeping inside is reported */
}

static inline void rcu_read_unlock(void)
{
	lockdep_rcu_read_unlock();
	preempt_enable();
	if (unlikely(READ_ONCE(this_cpu(rcu_urgent_qs))))
		rcu_read_unlock_special();
}

/*
 * The pointer loaded, with the dependency ordering readers rely on: every CPU
 * Grace runs on orders a load before loads through its result, so a relaxed
 * atomic load (no tearing, no re-load) is enough.
 */
#define rcu_dereference(p) READ_ONCE(p)
/* For updaters that hold the lock that serializes them. */
#define rcu_dereference_protected(p) READ_ONCE(p)
/*
 * Initialisation of the pointee is ordered before the pointer's publication. Pairs
 * with the address dependency of rcu_dereference().
 */
#define rcu_assign_pointer(p, v) smp_store_release(&(p), (v))
/* No ordering: NULL, or a pointee readers cannot reach yet. */
#define RCU_INIT_POINTER(p, v) WRITE_ONCE(p, v)

/*
 * Queue func(head) to run after a grace period, on this CPU, from the RCU
 * soft interrupt. Any context (interrupts too). O(1): interrupts off, this CPU's
 * list only; it never starts a grace period or forces quiescent states itself.
 */
void call_rcu(struct rcu_head *head, rcu_callback_t func);
/* Sleep until a grace period has passed. Thread context, not in a read-side section. */
void synchronize_rcu(void);
/* The same, by IPIs to every CPU that is not idle: fast, and disturbs every busy CPU. */
void synchronize_rcu_expedited(void);
/* Wait until every callback queued before the call has run. */
void rcu_barrier(void);

/* kfree(p) after a grace period; field is p's struct rcu_head member. */
void __kfree_rcu(struct rcu_head *head, uintptr_t offset);
#define KFREE_RCU_MAX_OFFSET 4096 /* an offset in place of a callback: below any code address */
#define kfree_rcu(p, field)                                                                        \
	do {                                                                                       \
		BUILD_BUG_ON(offsetof(__typeof__(*(p)), field) >= KFREE_RCU_MAX_OFFSET);           \
		__kfree_rcu(&(p)->field, offsetof(__typeof__(*(p)), field));                       \
	} while (0)

/*
 * ---- called by the scheduler and the interrupt code ----
 *
 * The events that are quiescent states, reported as they happen; tree RCU
 * (kernel/rcu/tree.c) counts them in the CPU's statistics below (ctxsw,
 * idle_enters, dynticks, ticks).
 *
 *   rcu_note_context_switch()  every pass through the scheduler (a switch or
 *                              not): a quiescent state. Runs under this CPU's
 *                              run-queue lock, interrupts off, so it only records
 *                              the fact: it wakes no thread and takes no lock.
 *   rcu_idle_enter/exit()      the idle loop is about to halt / has woken: an
 *                              extended quiescent state. Interrupts off.
 *   rcu_sched_tick(idle)       every tick (a CPU ticks while it has more than one
 *                              runnable thread); idle says whether it interrupted
 *                              the idle thread. Hard-interrupt context.
 *   rcu_irq_enter/exit()       from irq_enter()/irq_exit() (kernel/irq.c): an
 *                              interrupt that arrives in the idle loop's halt
 *                              leaves the extended quiescent state for its
 *                              length, so its handler may use RCU readers.
 */
void rcu_note_context_switch(void);
/*
 * A quiescent state, if the caller runs preemptible (else nothing): for long
 * kernel loops (cond_resched()) and page faults, so that a busy CPU with no tick
 * needs no IPI to end a grace period. Records only, like rcu_note_context_switch().
 * rcu_qs_points=off on the command line, or rcu_set_qs_points(false), turns it off.
 */
void rcu_quiescent_point(void);
void rcu_set_qs_points(bool on);
bool rcu_qs_points(void);
void rcu_idle_enter(void);
void rcu_idle_exit(void);
void rcu_sched_tick(bool idle);
void rcu_irq_enter(void);
void rcu_irq_exit(void);

/* ---- statistics and switches, for tests, benchmarks and the console ---- */

/* Grace periods completed since boot (rcu_state.gp_seq / 2). */
u64 rcu_gp_completed(void);
/* The current grace-period sequence: odd while one runs. */
u64 rcu_gp_seq(void);

struct rcu_cpu_stats {
	u64 qlen;	      /* callbacks queued, not yet invoked */
	u64 invoked;	      /* callbacks invoked since boot */
	u64 fqs_ipis;	      /* force-quiescent-state IPIs sent to it */
	u64 fqs_ipis_to_idle; /* ... sent while it was idle (must stay 0) */
	u64 fqs_ipis_idle;    /* ... that found it idle on arrival (it went idle since) */
	u64 cb_ipis;	      /* IPIs to run its callbacks after a grace period */
	u64 exp_ipis;	      /* expedited grace-period IPIs sent to it */
	u64 eqs_reports;      /* quiescent states reported for it from its idle counter */
	u64 ctxsw;	      /* passes through the scheduler (rcu_note_context_switch) */
	u64 idle_enters;      /* entries into the idle loop's halt (rcu_idle_enter) */
	u64 dynticks;	      /* its idle counter: odd while it is idle */
	u64 ticks;	      /* scheduling-clock ticks reported (rcu_sched_tick) */
	u64 qs_points;	      /* quiescent points that recorded a state (rcu_quiescent_point) */
};
void rcu_cpu_stats(unsigned cpu, struct rcu_cpu_stats *out);

/*
 * The debug switch: while on, synchronize_rcu() returns at once and callbacks run
 * without a grace period. Only so that a test can prove the torture test notices.
 */
void rcu_set_torture_broken(bool on);
bool rcu_torture_broken(void);

/* Stall warnings: the timeout (cmdline rcu_cpu_stall_timeout=<s>; default 21 s), and what fired. */
void rcu_set_stall_timeout_ms(u64 ms);
u64 rcu_stall_timeout_ms(void);
u64 rcu_stall_warnings(void);
/* The CPUs named by the last stall warning. */
void rcu_last_stall_cpus(struct cpumask *out);

struct task;
/* The grace-period kthread (tests bind it out of a holdout's way). */
struct task *rcu_gp_task(void);

/* Boot: build the tree for the CPUs online and start the kthread (after smp_boot). */
void rcu_init(void);

#endif

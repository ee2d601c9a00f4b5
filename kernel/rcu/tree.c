/*
 * Tree RCU (non-preemptible): grace periods driven by one kthread over a tree of
 * rcu_nodes, callbacks on per-CPU segmented lists.
 *
 * Grace periods. rcu_state.gp_seq counts half-periods: odd while a grace period
 * runs, even between them; a grace period started at s (even) ends at s + 2.
 * Only the kthread (rcu_gp) changes it. To start one it loads every rcu_node's
 * qsmask with the children online at boot (a bit per CPU in a leaf, a bit per
 * child node above), stamps the node with the new number and then publishes
 * gp_seq. A CPU's quiescent state clears its bit in its leaf; the report that
 * empties a node clears that node's bit in its parent; the report that empties
 * the root ends the grace period. Quiescent states:
 *   - a context switch (rcu_note_context_switch, under the run-queue lock: it only
 *     records the fact in rdp->qs_seq; the kthread reports it at its next scan,
 *     because nothing may wake a thread while a run-queue lock is held),
 *   - idle, an extended quiescent state: rdp->dynticks is odd while the CPU sits
 *     in the idle loop's halt; the kthread samples it, so an idle CPU is never
 *     woken for a grace period,
 *   - a tick, or an IPI, that interrupted code with preemption enabled (no
 *     read-side section can be open there), or the idle loop,
 *   - a quiescent point (rcu_quiescent_point, rcu_qs_points=on): code that runs
 *     preemptible says so, as cond_resched() does on every call and a page fault
 *     on entry. Recorded like a context switch, so a CPU busy in a long kernel
 *     loop with no tick (it runs alone) needs no forcing IPI, as long as the loop
 *     passes a point; rcu_qs_points=off leaves such a CPU to the IPI.
 * The kthread scans the holdouts every RCU_FQS_JIFFIES; once the grace period is
 * RCU_RESCHED_JIFFIES old it IPIs the busy holdouts, whose handler reports at
 * once when it interrupted code outside a read-side section.
 *
 * Callbacks (kernel/rcu/callbacks.c). call_rcu() appends to this CPU's list
 * with interrupts off, tags the new callbacks with the grace period they need
 * (rcu_seq_snap) and, at most, wakes the kthread when no grace period is
 * running: the common path writes only this CPU's rcu_data and reads the
 * shared, rarely written rcu_state.gp_seq ("tree rcu: call_rcu scalability
 * problem?", Nick Piggin, 2009: with grace-period work inside it, __call_rcu
 * cost 6.7 times as much per call at 8 CPUs as at 1). At the end of a grace
 * period the kthread raises, by IPI, the RCU soft interrupt of every CPU with
 * callbacks; there the ready segments move to "done" and run in batches of blimit.
 *
 * Expedited grace periods are in kernel/rcu/expedited.c.
 *
 * Lock order: docs/locking.md. rcu_node locks are taken one at a time (a report
 * drops the child's lock before it takes the parent's); rcu_note_context_switch(),
 * which runs under the run-queue lock, takes none. Nothing wakes a thread, prints
 * or sends an IPI with an rcu_node lock held.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/ksyms.h>
#include <grace/mutex.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/timer.h>
#include <grace/wait.h>
#include <asm/irq.h>
#include "rcu_internal.h"

/* Tree shape (Linux's CONFIG_RCU_FANOUT_LEAF and CONFIG_RCU_FANOUT defaults). */
#define RCU_FANOUT_LEAF_DEFAULT 16
#define RCU_FANOUT_DEFAULT 64
#define RCU_FANOUT_MAX 64 /* qsmask is one unsigned long */

/*
 * Forcing quiescent states: scan every jiffy (10 ms: a grace period in which every
 * CPU is idle or switches ends within one scan), IPI busy holdouts once the grace
 * period is 3 jiffies old (Linux waits a few jiffies before it disturbs a CPU).
 */
#define RCU_FQS_JIFFIES 1
#define RCU_RESCHED_JIFFIES 3

/* Linux's CONFIG_RCU_CPU_STALL_TIMEOUT default. */
#define RCU_STALL_TIMEOUT_MS_DEFAULT 21000
/* How long a stall report waits for a holdout to print its stack. */
#define RCU_STALL_DUMP_WAIT_NS (2 * NSEC_PER_SEC)

DEFINE_PER_CPU_ALIGNED(struct rcu_data, rcu_data);
DEFINE_PER_CPU_ALIGNED(u32, rcu_urgent_qs);

struct rcu_state rcu_state;

bool rcu_broken;
bool rcu_ready;

/* ---- the tree ---- */

static struct rcu_node *rcu_root(void)
{
	return &rcu_state.nodes[0];
}

/*
 * Clear mask in rnp for grace period gp and walk up as nodes empty. Interrupts
 * off. True when this report emptied the root: the grace period may end.
 */
static bool rcu_report_qs_rnp(struct rcu_node *rnp, unsigned long mask, u64 gp)
{
	for (;;) {
		spin_lock(&rnp->lock);
		if (rnp->gp_seq != gp || !(rnp->qsmask & mask)) {
			spin_unlock(&rnp->lock); /* already reported, or another grace period */
			return false;
		}
		rnp->qsmask &= ~mask;
		bool emptied = rnp->qsmask == 0;
		struct rcu_node *parent = rnp->parent;
		mask = rnp->grpmask;
		spin_unlock(&rnp->lock);
		if (!emptied)
			return false;
		if (!parent)
			return true;
		rnp = parent;
	}
}

void rcu_gp_kthread_wake(void)
{
	struct task *t = READ_ONCE(rcu_state.gp_task);
	if (t)
		wake_up(&rcu_state.gp_wq);
}

void rcu_report_qs_here(struct rcu_data *rdp, u64 gp)
{
	/*
	 * Every read-side access before this point is ordered before the report. Pairs
	 * with the rcu_node locks that rcu_report_qs_rnp() and rcu_root_done() take, and
	 * with rcu_fqs_scan()'s read of qs_seq; the release of gp_seq in rcu_gp_cleanup()
	 * carries it on to the callbacks.
	 */
	smp_mb();
	WRITE_ONCE(rdp->qs_seq, gp);
	if (rcu_report_qs_rnp(rdp->mynode, rdp->grpmask, gp))
		rcu_gp_kthread_wake();
}

bool rcu_outside_reader(void)
{
	int count = preempt_count();
	return count == 0 || ((current->flags & TASK_IDLE) && count == 1);
}

/*
 * The outermost rcu_read_unlock() on a CPU an IPI found inside a reader: this is
 * the quiescent state the grace period (or an expedited one) waits for.
 */
void rcu_read_unlock_special(void)
{
	unsigned long flags = arch_irq_save();
	u32 *urgent = this_cpu_ptr(&rcu_urgent_qs);
	if (*urgent && preempt_count() == 0 && rcu_ready) {
		struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
		WRITE_ONCE(*urgent, 0);
		u64 gp = READ_ONCE(rcu_state.gp_seq);
		if ((gp & 1) && rdp->qs_seq != gp)
			rcu_report_qs_here(rdp, gp);
		/* Only the sequence an expedited IPI delivered here, never a newer one. */
		u64 exp = READ_ONCE(rdp->exp_want);
		/*
		 * Pairs with the smp_load_acquire() of exp_qs_seq in
		 * synchronize_rcu_expedited(): the reader that just ended, and everything
		 * else before, is before the answer. Only what comes before the store
		 * needs ordering, which is what a release orders: no smp_mb() as well.
		 */
		smp_store_release(&rdp->exp_qs_seq, exp);
	}
	arch_irq_restore(flags);
}

/* ---- events from the scheduler, the idle loop and interrupts (grace/rcupdate.h) ---- */

void rcu_note_context_switch(void)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	/*
	 * The expedited path reads a changed ctxsw as a quiescent state: readers' accesses
	 * first. Pairs with the smp_mb() that ends synchronize_rcu_expedited().
	 */
	smp_mb();
	WRITE_ONCE(rdp->ctxsw, rdp->ctxsw + 1);
	u64 gp = READ_ONCE(rcu_state.gp_seq);
	if ((gp & 1) && rdp->qs_seq != gp) {
		/*
		 * Only recorded: the kthread reports it (no wake-ups under the run-queue
		 * lock). Readers' accesses before qs_seq, as in rcu_report_qs_here(): pairs
		 * with rcu_fqs_scan()'s read of qs_seq.
		 */
		smp_mb();
		WRITE_ONCE(rdp->qs_seq, gp);
	}
}

/* rcu_qs_points=on|off: whether rcu_quiescent_point() records anything. */
static bool qs_points_on = true;

void rcu_set_qs_points(bool on)
{
	WRITE_ONCE(qs_points_on, on);
}

bool rcu_qs_points(void)
{
	return READ_ONCE(qs_points_on);
}

void rcu_quiescent_point(void)
{
	/* Preemptible, so no read-side section is open here (readers disable preemption). */
	if (!READ_ONCE(qs_points_on) || preempt_count() || arch_irqs_disabled())
		return;
	/*
	 * Moved to another CPU since that check is no matter: preemption was on, so no
	 * reader of ours is open there either, and no other thread's can be while we run.
	 */
	preempt_disable();
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	u64 gp = READ_ONCE(rcu_state.gp_seq);
	if ((gp & 1) && rdp->qs_seq != gp) {
		/* Readers' accesses before qs_seq, as in rcu_note_context_switch(). */
		smp_mb();
		WRITE_ONCE(rdp->qs_seq, gp);
		WRITE_ONCE(rdp->qs_points, rdp->qs_points + 1);
	}
	preempt_enable();
}

void rcu_idle_enter(void)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	WRITE_ONCE(rdp->idle_enters, rdp->idle_enters + 1);
	u64 gp = READ_ONCE(rcu_state.gp_seq);
	/* Report without waking the kthread: a wake-up could queue it here just before the halt. */
	if (rcu_ready && rdp->mynode && (gp & 1) && rdp->qs_seq != gp) {
		/* As in rcu_report_qs_here(): pairs with the rcu_node locks and rcu_fqs_scan(). */
		smp_mb();
		WRITE_ONCE(rdp->qs_seq, gp);
		rcu_report_qs_rnp(rdp->mynode, rdp->grpmask, gp);
	}
	/*
	 * What we did before, read-side sections included, is before the odd value.
	 * Pairs with the smp_mb() before the dynticks reads in rcu_gp_init(),
	 * rcu_fqs_scan() and synchronize_rcu_expedited().
	 */
	smp_mb();
	WRITE_ONCE(rdp->dynticks, rdp->dynticks + 1);
}

void rcu_idle_exit(void)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	WRITE_ONCE(rdp->dynticks, rdp->dynticks + 1);
	/*
	 * What we do next is after the even value the kthread may read. Pairs with the
	 * smp_mb() before the dynticks reads in rcu_gp_init(), rcu_fqs_scan() and
	 * synchronize_rcu_expedited().
	 */
	smp_mb();
}

/*
 * Interrupts taken in the idle loop's halt run inside the extended quiescent
 * state. irq_enter()/irq_exit() call these so that a handler on an idle CPU may
 * use rcu_read_lock(): the counter is made even (not idle) for the handler's length.
 */
void rcu_irq_enter(void)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	if (READ_ONCE(rdp->dynticks) & 1) {
		WRITE_ONCE(rdp->dynticks, rdp->dynticks + 1);
		/*
		 * As in rcu_idle_exit(): the handler's read-side sections are after the even
		 * value. Pairs with the smp_mb() before the dynticks reads in rcu_gp_init(),
		 * rcu_fqs_scan() and synchronize_rcu_expedited().
		 */
		smp_mb();
		rdp->irq_from_eqs = 1;
	}
}

void rcu_irq_exit(void)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	if (rdp->irq_from_eqs) {
		rdp->irq_from_eqs = 0;
		/*
		 * As in rcu_idle_enter(): the handler's read-side sections are before the odd
		 * value. Pairs with the same smp_mb()s in rcu_gp_init(), rcu_fqs_scan() and
		 * synchronize_rcu_expedited().
		 */
		smp_mb();
		WRITE_ONCE(rdp->dynticks, rdp->dynticks + 1);
	}
}

void rcu_sched_tick(bool idle)
{
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	WRITE_ONCE(rdp->ticks, rdp->ticks + 1);
	if (!rcu_ready || !rdp->mynode)
		return;
	u64 gp = READ_ONCE(rcu_state.gp_seq);
	if ((gp & 1) && rdp->qs_seq != gp && (idle || rcu_outside_reader()))
		rcu_report_qs_here(rdp, gp);
	/* Callbacks ready, or whose grace period ended while nobody told us. */
	if (!seg_empty(rdp, SEG_DONE) || (!seg_empty(rdp, SEG_WAIT) && gp >= rdp->seqs[SEG_WAIT]))
		raise_softirq(SOFTIRQ_RCU);
}
/* ---- the grace-period kthread ---- */

static bool rcu_gp_needed(void)
{
	unsigned cpu;
	for_each_online_cpu(cpu)
		if (READ_ONCE(per_cpu(rcu_data, cpu).gp_seq_needed) > rcu_state.gp_seq)
			return true;
	return false;
}

static bool rcu_root_done(void)
{
	struct rcu_node *root = rcu_root();
	unsigned long flags = spin_lock_irqsave(&root->lock);
	bool done = root->qsmask == 0;
	spin_unlock_irqrestore(&root->lock, flags);
	return done;
}

static void rcu_gp_init(void)
{
	u64 gp = rcu_state.gp_seq + 1;
	/* Parents first: a child that empties must find its bit in a parent set up for gp. */
	for (unsigned i = 0; i < rcu_state.nr_nodes; i++) {
		struct rcu_node *rnp = &rcu_state.nodes[i];
		unsigned long flags = spin_lock_irqsave(&rnp->lock);
		rnp->qsmask = rnp->qsmaskinit;
		rnp->gp_seq = gp;
		spin_unlock_irqrestore(&rnp->lock, flags);
	}
	rcu_state.gp_start_ns = arch_clock_ns();
	WRITE_ONCE(rcu_state.hurry, 0);
	/*
	 * Release: the node set-up is visible before gp is, to a CPU that reads gp and
	 * then reports (the smp_mb() in rcu_report_qs_here(), rcu_note_context_switch(),
	 * rcu_idle_enter()). No smp_mb() before it: a barrier there would order only
	 * what the release orders, since the smp_mb() below orders the rest.
	 */
	smp_store_release(&rcu_state.gp_seq, gp);
	/*
	 * gp before the dynticks samples and every later look at the CPUs. Pairs with
	 * the smp_mb() in call_rcu(): it reads gp, or its removal is before all we read
	 * from here on (and it tags its callbacks for this grace period); and with those
	 * in rcu_idle_enter()/rcu_idle_exit() and rcu_irq_enter()/exit().
	 */
	smp_mb();
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
		rdp->gp_dynticks_snap = READ_ONCE(rdp->dynticks);
	}
}

static void rcu_fqs_ipi(void *arg)
{
	u64 gp = (uintptr_t)arg;
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	if ((READ_ONCE(rdp->dynticks) & 1) || rdp->irq_from_eqs)
		WRITE_ONCE(rdp->ipis_while_idle, rdp->ipis_while_idle + 1);
	if (READ_ONCE(rdp->qlen))
		raise_softirq(
		    SOFTIRQ_RCU); /* stands in for a cleanup IPI that found this one pending */
	if (READ_ONCE(rcu_state.gp_seq) != gp || rdp->qs_seq == gp)
		return;
	if (rcu_outside_reader())
		rcu_report_qs_here(rdp, gp);
	else
		WRITE_ONCE(this_cpu(rcu_urgent_qs), 1); /* report at the reader's end */
}

/*
 * Report the holdouts that have been idle or switched since the grace period
 * began; with ipi, interrupt the others. Returns the holdouts left (into out).
 */
static void rcu_fqs_scan(u64 gp, bool ipi, struct cpumask *out)
{
	cpumask_clear(out);
	/* Pairs with the smp_mb() in rcu_idle_enter()/exit() and rcu_irq_enter()/exit(). */
	smp_mb();
	for (unsigned i = rcu_state.leaf_first; i < rcu_state.nr_nodes; i++) {
		struct rcu_node *rnp = &rcu_state.nodes[i];
		unsigned long flags = spin_lock_irqsave(&rnp->lock);
		unsigned long mask = rnp->gp_seq == gp ? rnp->qsmask : 0;
		spin_unlock_irqrestore(&rnp->lock, flags);
		for (unsigned bit = 0; mask; bit++, mask >>= 1) {
			if (!(mask & 1))
				continue;
			unsigned cpu = rnp->grplo + bit;
			struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
			u64 snap = rdp->gp_dynticks_snap, now = READ_ONCE(rdp->dynticks);
			bool eqs = (snap & 1) || now != snap;
			if (eqs || READ_ONCE(rdp->qs_seq) == gp) {
				if (eqs)
					rdp->eqs_reports++;
				flags = arch_irq_save();
				rcu_report_qs_rnp(rnp, 1UL << bit,
						  gp); /* the caller checks the root */
				arch_irq_restore(flags);
				continue;
			}
			cpumask_set_cpu(out, cpu);
			/* Never wait for the slot: a holdout with interrupts off must not stop us.
			 */
			if (ipi && !smp_call_try(cpu, rcu_fqs_ipi, (void *)(uintptr_t)gp)) {
				rdp->fqs_ipis++;
				/* By the target's state when sent: should never count (it was
				 * sampled busy). */
				if (READ_ONCE(rdp->dynticks) & 1)
					rdp->fqs_ipis_to_idle++;
			}
		}
	}
}

static void rcu_dump_stack_ipi(void *arg)
{
	atomic_t *done = arg;
	printk_raw("rcu: CPU %u's stack (a read-side section or interrupts off):",
		   smp_processor_id());
	dump_stack();
	/* Pairs with the atomic_read_acquire()s in rcu_stall_report(): our lines come first. */
	atomic_fetch_add_release(done, 1);
}

static void rcu_stall_report(u64 gp, const struct cpumask *holdouts)
{
	/* Up to 64 CPU numbers on the line; the rest are counted (rcu_state.stall_cpus has all). */
	char list[64 * 4 + 24];
	unsigned cpu, pos = 0, listed = 0, total = cpumask_weight(holdouts);
	int n = 0;
	static atomic_t dumped;
	list[0] = '\0';
	for_each_cpu(cpu, holdouts) {
		if (listed++ == 64) {
			snprintf(list + pos, sizeof(list) - pos, " and %u more", total - 64);
			break;
		}
		pos += snprintf(list + pos, sizeof(list) - pos, " %u", cpu);
	}
	u64 age_ms = (arch_clock_ns() - rcu_state.gp_start_ns) / 1000000;
	pr_err("rcu: INFO: grace period %llu stalled for %llu ms (rcu_cpu_stall_timeout %llu ms); "
	       "holdout CPUs:%s\n",
	       (unsigned long long)(gp >> 1), (unsigned long long)age_ms,
	       (unsigned long long)rcu_state.stall_timeout_ms, list);
	rcu_state.stall_cpus = *holdouts;
	/* Pairs with the acquire in rcu_stall_warnings(): stall_cpus before the count. */
	atomic64_fetch_add_release(&rcu_state.stall_count, 1);
	/* Backtraces by IPI; a CPU with interrupts off cannot answer: say so instead of waiting. */
	atomic_set(&dumped, 0);
	for_each_cpu(cpu, holdouts) {
		if (cpu == smp_processor_id())
			continue;
		if (smp_call_try(cpu, rcu_dump_stack_ipi, &dumped)) {
			pr_err("rcu: CPU %u has not taken our last IPI (interrupts off?)\n", cpu);
			continue;
		}
		n++;
		u64 deadline = arch_clock_ns() + RCU_STALL_DUMP_WAIT_NS;
		/* Pairs with the release in rcu_dump_stack_ipi(): its stack is printed. */
		while (atomic_read_acquire(&dumped) < n && arch_clock_ns() < deadline)
			schedule_timeout_until(arch_clock_ns() + TICK_NSEC);
		if (atomic_read_acquire(&dumped) < n) {
			pr_err("rcu: CPU %u did not answer the backtrace IPI (interrupts off?)\n",
			       cpu);
			n = atomic_read_acquire(&dumped);
		}
	}
}

/* Wait for the root to empty, scanning and pushing holdouts; stall warnings. */
static void rcu_gp_fqs_loop(u64 gp)
{
	struct cpumask holdouts;
	u64 start = rcu_state.gp_start_ns;
	u64 resched_at = start + jiffies_to_ns(RCU_RESCHED_JIFFIES);
	u64 stall_ms = READ_ONCE(rcu_state.stall_timeout_ms);
	u64 stall_at = start + stall_ms * 1000000;

	rcu_fqs_scan(gp, false, &holdouts);
	while (!rcu_root_done()) {
		wait_event_timeout(rcu_state.gp_wq, rcu_root_done(),
				   jiffies_to_ns(RCU_FQS_JIFFIES));
		if (rcu_root_done())
			break;
		u64 now = arch_clock_ns();
		rcu_fqs_scan(gp, now >= resched_at || READ_ONCE(rcu_state.hurry), &holdouts);
		if (now >= resched_at)
			resched_at = now + jiffies_to_ns(RCU_RESCHED_JIFFIES);
		u64 new_ms = READ_ONCE(rcu_state.stall_timeout_ms);
		if (new_ms != stall_ms) {
			stall_ms = new_ms;
			stall_at = start + stall_ms * 1000000;
		}
		if (now >= stall_at && !cpumask_empty(&holdouts)) {
			rcu_stall_report(gp, &holdouts);
			/* Then every three timeouts while it lasts (as Linux does). */
			stall_at = arch_clock_ns() + 3 * stall_ms * 1000000;
		}
	}
}

static void rcu_cb_ipi(void *arg)
{
	raise_softirq(SOFTIRQ_RCU);
}

static void rcu_gp_cleanup(u64 gp)
{
	u64 end = gp + 1;
	for (unsigned i = 0; i < rcu_state.nr_nodes; i++) {
		struct rcu_node *rnp = &rcu_state.nodes[i];
		unsigned long flags = spin_lock_irqsave(&rnp->lock);
		rnp->gp_seq = end;
		spin_unlock_irqrestore(&rnp->lock, flags);
	}
	/*
	 * Pairs with the smp_load_acquire() in rcu_softirq(): every report, and our
	 * reading of the root's empty qsmask, is before the end, so callbacks run after
	 * the grace period. No smp_mb() before it: it would order only what the release
	 * orders, since the smp_mb() below orders the rest.
	 */
	smp_store_release(&rcu_state.gp_seq, end);
	/*
	 * The end before the cb_ready_at reads below and the next round's rcu_gp_needed().
	 * Pairs with the smp_mb() in call_rcu() and rcu_need_gp(): a CPU that read
	 * gp_seq as still odd has its callbacks and its need seen by us.
	 */
	smp_mb();
	/*
	 * Have every CPU whose callbacks this end made ready look at its list; one whose
	 * callbacks wait for a later end is left alone (the end that readies them
	 * interrupts it then). Its callbacks were tagged before it passed the quiescent
	 * state this grace period waited for, so cb_ready_at is not stale here.
	 */
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
		if (READ_ONCE(rdp->cb_ready_at) > end)
			continue;
		/* Busy: our forcing IPI is still pending there, and it raises the softirq too. */
		if (!smp_call_try(cpu, rcu_cb_ipi, NULL))
			rdp->cb_ipis++;
	}
}

static int rcu_gp_kthread(void *arg)
{
	for (;;) {
		WRITE_ONCE(rcu_state.gp_wanted, 0);
		/* Pairs with the smp_mb() in rcu_need_gp(). */
		smp_mb();
		if (!rcu_gp_needed())
			wait_event(rcu_state.gp_wq,
				   READ_ONCE(rcu_state.gp_wanted) || rcu_gp_needed());
		rcu_gp_init();
		u64 gp = rcu_state.gp_seq;
		rcu_gp_fqs_loop(gp);
		rcu_gp_cleanup(gp);
	}
	return 0;
}
/* ---- statistics and switches ---- */

u64 rcu_gp_seq(void)
{
	return READ_ONCE(rcu_state.gp_seq);
}

u64 rcu_gp_completed(void)
{
	return READ_ONCE(rcu_state.gp_seq) >> 1;
}

void rcu_cpu_stats(unsigned cpu, struct rcu_cpu_stats *out)
{
	struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
	out->qlen = (u64)READ_ONCE(rdp->qlen);
	out->invoked = READ_ONCE(rdp->invoked);
	out->fqs_ipis = READ_ONCE(rdp->fqs_ipis);
	out->fqs_ipis_idle = READ_ONCE(rdp->ipis_while_idle);
	out->fqs_ipis_to_idle = READ_ONCE(rdp->fqs_ipis_to_idle);
	out->cb_ipis = READ_ONCE(rdp->cb_ipis);
	out->exp_ipis = READ_ONCE(rdp->exp_ipis);
	out->eqs_reports = READ_ONCE(rdp->eqs_reports);
	out->ctxsw = READ_ONCE(rdp->ctxsw);
	out->idle_enters = READ_ONCE(rdp->idle_enters);
	out->dynticks = READ_ONCE(rdp->dynticks);
	out->ticks = READ_ONCE(rdp->ticks);
	out->qs_points = READ_ONCE(rdp->qs_points);
}

void rcu_set_torture_broken(bool on)
{
	WRITE_ONCE(rcu_broken, on);
	if (on)
		pr_warn("rcu: rcu_torture_broken on: grace periods are not waited for\n");
}

bool rcu_torture_broken(void)
{
	return READ_ONCE(rcu_broken);
}

void rcu_set_stall_timeout_ms(u64 ms)
{
	WRITE_ONCE(rcu_state.stall_timeout_ms, ms);
	rcu_gp_kthread_wake();
}

u64 rcu_stall_timeout_ms(void)
{
	return READ_ONCE(rcu_state.stall_timeout_ms);
}

u64 rcu_stall_warnings(void)
{
	/* Pairs with the release in rcu_stall_report(): rcu_last_stall_cpus() is this stall's. */
	return (u64)atomic64_read_acquire(&rcu_state.stall_count);
}

void rcu_last_stall_cpus(struct cpumask *out)
{
	*out = rcu_state.stall_cpus;
}

struct task *rcu_gp_task(void)
{
	return READ_ONCE(rcu_state.gp_task);
}

/* ---- boot ---- */

/*
 * Build the tree: leaves of fanout_leaf CPUs, then levels of fanout children,
 * up to one root; stored breadth first (root at 0). Only online CPUs get bits.
 */
unsigned rcu_tree_shape(unsigned ncpus, unsigned fanout_leaf, unsigned fanout,
			unsigned width[RCU_MAX_LEVELS])
{
	unsigned levels = 0;
	unsigned n = (ncpus + fanout_leaf - 1) / fanout_leaf;
	width[levels++] = n;
	while (n > 1) {
		n = (n + fanout - 1) / fanout;
		width[levels++] = n;
	}
	return levels;
}

static void rcu_build_tree(void)
{
	unsigned ncpus = boot_info.nr_cpus;
	unsigned width[RCU_MAX_LEVELS];
	unsigned levels = rcu_tree_shape(ncpus, rcu_state.fanout_leaf, rcu_state.fanout, width);
	/* width[0] is the leaves, width[levels-1] == 1 the root; lay out root first. */
	unsigned first[RCU_MAX_LEVELS], idx = 0;
	for (int l = levels - 1; l >= 0; l--) {
		first[l] = idx;
		idx += width[l];
	}
	rcu_state.nodes = kzalloc(idx * sizeof(struct rcu_node));
	if (!rcu_state.nodes)
		panic("rcu: no memory for a tree of %u rcu_nodes", idx);
	rcu_state.nr_nodes = idx;
	rcu_state.nr_levels = levels;
	rcu_state.leaf_first = first[0];
	unsigned span = rcu_state.fanout_leaf; /* CPUs under one node of the level */
	for (unsigned l = 0; l < levels; l++) {
		for (unsigned i = 0; i < width[l]; i++) {
			struct rcu_node *rnp = &rcu_state.nodes[first[l] + i];
			spin_lock_init(&rnp->lock);
			rnp->level = levels - 1 - l;
			rnp->grplo = i * span;
			rnp->grphi = MIN((i + 1) * span, ncpus) - 1;
			rnp->parent = l + 1 < levels
					  ? &rcu_state.nodes[first[l + 1] + i / rcu_state.fanout]
					  : NULL;
			rnp->grpmask = rnp->parent ? 1UL << (i % rcu_state.fanout) : 0;
		}
		span *= rcu_state.fanout;
	}
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
		unsigned leaf_index = rcu_state.leaf_first + cpu / rcu_state.fanout_leaf;
		struct rcu_node *leaf = &rcu_state.nodes[leaf_index];
		rdp->mynode = leaf;
		rdp->grpmask = 1UL << (cpu - leaf->grplo);
		/* Mark the path to the root as having online CPUs below it. */
		unsigned long mask = rdp->grpmask;
		for (struct rcu_node *rnp = leaf; rnp; rnp = rnp->parent) {
			rnp->qsmaskinit |= mask;
			mask = rnp->grpmask;
		}
	}
}

void rcu_init(void)
{
	rcu_state.fanout_leaf = (unsigned)cmdline_get_uint(
	    "rcu_fanout_leaf", RCU_FANOUT_LEAF_DEFAULT, 2, RCU_FANOUT_MAX);
	rcu_state.fanout =
	    (unsigned)cmdline_get_uint("rcu_fanout", RCU_FANOUT_DEFAULT, 2, RCU_FANOUT_MAX);
	rcu_state.stall_timeout_ms =
	    cmdline_get_uint("rcu_cpu_stall_timeout", RCU_STALL_TIMEOUT_MS_DEFAULT / 1000, 1,
			     3600) *
	    1000;
	static const char *const on_off[] = {"on", "off"};
	rcu_set_qs_points(cmdline_get_choice("rcu_qs_points", on_off, 2, 0) == 0);
	const char *b = cmdline_get("rcu_torture_broken");
	if (b && strcmp(b, "0"))
		rcu_set_torture_broken(true);

	unsigned cpu;
	for (cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		struct rcu_data *rdp = &per_cpu(rcu_data, cpu);
		seg_init(rdp);
		rdp->blimit = RCU_BLIMIT;
	}
	rcu_build_tree();
	wait_queue_init(&rcu_state.gp_wq);
	open_softirq(SOFTIRQ_RCU, rcu_softirq);
	/*
	 * The tree before rcu_ready. Its readers take no barrier: rcu_sched_tick() and
	 * rcu_idle_enter() also test rdp->mynode, set before this, and reach the tree
	 * through it (an address dependency); rcu_read_unlock_special() acts only on an
	 * RCU IPI, and those are sent after this.
	 */
	smp_mb();
	WRITE_ONCE(rcu_ready, true);

	struct task *t = kthread_create(rcu_gp_kthread, NULL, "rcu_gp");
	if (!t)
		panic("rcu: cannot create the grace-period kthread");
	/* Pairs with the READ_ONCE() of gp_task in rcu_gp_kthread_wake() and rcu_gp_task(). */
	smp_store_release(&rcu_state.gp_task, t);
	wake_up_process(t);
	pr_info("rcu: tree of %u rcu_nodes in %u levels (leaf fanout %u, fanout %u) for %u CPUs\n",
		rcu_state.nr_nodes, rcu_state.nr_levels, rcu_state.fanout_leaf, rcu_state.fanout,
		num_online_cpus());
}

/*
 * RCU callbacks: call_rcu() onto this CPU's segmented list (see rcu_internal.h),
 * the RCU soft interrupt that advances the segments and runs the ready ones in
 * batches, kfree_rcu(), synchronize_rcu() and rcu_barrier().
 *
 * call_rcu() disables interrupts, appends, tags the new callbacks with the
 * grace period they need and, only when this CPU needs a grace period it has
 * not asked for while none runs, wakes the kthread. It never starts a grace
 * period or forces quiescent states ("tree rcu: call_rcu scalability problem?",
 * Nick Piggin, 2009: with that work inside it, __call_rcu cost 6.7 times as much
 * per call at 8 CPUs as at 1), and on its common path it writes only this CPU's
 * rcu_data. The segments are this CPU's, touched with interrupts off.
 */
#include <grace/arch.h>
#include <grace/atomic.h>
#include <grace/completion.h>
#include <grace/mutex.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <asm/irq.h>
#include "rcu_internal.h"

/* Callback batches: Linux's blimit 10 and qhimark 10000; past qhimark a CPU runs all it has. */
#define RCU_BLIMIT_HURRY 100000
#define RCU_QHIMARK 10000
#define RCU_QLOWMARK 100

/* One rcu_barrier() at a time: protects the two below and every rcu_data.barrier_head. */
static DEFINE_MUTEX(barrier_mutex);
static atomic_t barrier_count; /* barrier callbacks still to run, +1 while queueing */
static struct completion barrier_done;

/* ---- the callback list: four segments of one singly linked list ---- */

void seg_init(struct rcu_data *rdp)
{
	rdp->cb_head = NULL;
	for (unsigned i = 0; i < SEG_COUNT; i++) {
		rdp->tails[i] = &rdp->cb_head;
		rdp->seqs[i] = 0;
	}
	rdp->cb_ready_at = ~0ULL;
}

/* Move the tagged segments whose grace period has ended (gp_seq >= tag) into done. */
static void seg_advance(struct rcu_data *rdp, u64 gp_seq)
{
	unsigned i, j;
	for (i = SEG_WAIT; i < SEG_NEXT; i++) {
		if (!seg_empty(rdp, i) && gp_seq < rdp->seqs[i])
			break;
		rdp->tails[SEG_DONE] = rdp->tails[i];
	}
	/* Shift what still waits down to WAIT; the freed slots become empty. */
	for (j = SEG_WAIT; i < SEG_NEXT; i++, j++) {
		rdp->tails[j] = rdp->tails[i];
		rdp->seqs[j] = rdp->seqs[i];
	}
	for (; j < SEG_NEXT; j++)
		rdp->tails[j] = rdp->tails[j - 1];
}

/*
 * Publish when this CPU's callbacks next need the soft interrupt: the end of the
 * earliest grace period a tagged segment waits for, 0 if some are ready or wait
 * untagged (the soft interrupt tags them), none if nothing is queued. The kthread
 * reads it at each end and interrupts only the CPUs that end made work for.
 */
static void seg_publish_ready_at(struct rcu_data *rdp)
{
	u64 at = 0;
	if (!rdp->qlen)
		at = ~0ULL;
	else if (seg_empty(rdp, SEG_DONE) && !seg_empty(rdp, SEG_WAIT))
		at = rdp->seqs[SEG_WAIT];
	WRITE_ONCE(rdp->cb_ready_at, at);
}

/* Tag the untagged callbacks with snap; false if they stay untagged (both slots busy). */
static bool seg_accelerate(struct rcu_data *rdp, u64 snap)
{
	int i;
	if (seg_empty(rdp, SEG_NEXT))
		return true;
	for (i = SEG_NEXT_READY; i >= (int)SEG_WAIT; i--)
		if (!seg_empty(rdp, i))
			break;
	if (i >= (int)SEG_WAIT && rdp->seqs[i] >= snap) {
		/* Waiting as long as that segment is safe (at worst, longer). */
	} else if (i + 1 < SEG_NEXT) {
		i++;
		rdp->seqs[i] = snap;
	} else {
		return false;
	}
	for (unsigned k = i; k < SEG_NEXT; k++)
		rdp->tails[k] = rdp->tails[SEG_NEXT];
	return true;
}
/* ---- asking for grace periods ---- */

/* This CPU's callbacks need the grace period ending at snap. Interrupts off. */
static void rcu_need_gp(struct rcu_data *rdp, u64 snap)
{
	if (snap <= rdp->gp_seq_needed)
		return;
	WRITE_ONCE(rdp->gp_seq_needed, snap);
	/*
	 * Pairs with the smp_mb() in rcu_gp_kthread(): it sees our need, or we see its
	 * flag clear; and with the one after the end in rcu_gp_cleanup(): it sees our
	 * need, or we see the grace period over.
	 */
	smp_mb();
	if (READ_ONCE(rcu_state.gp_seq) & 1)
		return; /* the kthread looks at every CPU's need when this one ends */
	if (!READ_ONCE(rcu_state.gp_wanted) && !xchg(&rcu_state.gp_wanted, 1))
		rcu_gp_kthread_wake();
}

static void rcu_enqueue_done(struct rcu_data *rdp, struct rcu_head *head)
{
	struct rcu_head **old = rdp->tails[SEG_DONE];
	head->next = *old;
	*old = head;
	for (unsigned i = 0; i < SEG_COUNT; i++)
		if (rdp->tails[i] == old)
			rdp->tails[i] = &head->next;
}

void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	head->func = func;
	head->next = NULL;
	unsigned long flags = arch_irq_save();
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	rdp->qlen++;
	if (unlikely(READ_ONCE(rcu_broken))) {
		/* The debug switch: ready at once, no grace period. */
		rcu_enqueue_done(rdp, head);
		seg_publish_ready_at(rdp);
		raise_softirq(SOFTIRQ_RCU);
		arch_irq_restore(flags);
		return;
	}
	*rdp->tails[SEG_NEXT] = head;
	rdp->tails[SEG_NEXT] = &head->next;
	/*
	 * The caller's unpublishing of the object is ordered before our read of
	 * gp_seq: if we read a grace period as not started, it starts after the
	 * removal and waits for every reader that could have seen the object. Pairs
	 * with the smp_mb() after the gp_seq stores in rcu_gp_init() and
	 * rcu_gp_cleanup() (which then reads our qlen).
	 */
	smp_mb();
	u64 snap = rcu_seq_snap(READ_ONCE(rcu_state.gp_seq));
	seg_accelerate(rdp, snap);
	/* Before this CPU's quiescent state for the grace period that ends at the tag. */
	seg_publish_ready_at(rdp);
	if (snap > rdp->gp_seq_needed)
		rcu_need_gp(rdp, snap);
	if (unlikely(rdp->qlen > RCU_QHIMARK)) {
		/*
		 * A flood: run bigger batches, and have the kthread push every grace
		 * period while it lasts (it clears hurry at each start). Read first: the
		 * line is shared, and only the first caller per grace period writes it.
		 */
		rdp->blimit = RCU_BLIMIT_HURRY;
		if (!READ_ONCE(rcu_state.hurry))
			WRITE_ONCE(rcu_state.hurry, 1);
	}
	arch_irq_restore(flags);
}

void rcu_softirq(void)
{
	unsigned long flags = arch_irq_save();
	struct rcu_data *rdp = this_cpu_ptr(&rcu_data);
	/* Pairs with the release in rcu_gp_cleanup(): callbacks run after the grace period. */
	u64 gp = smp_load_acquire(&rcu_state.gp_seq);
	seg_advance(rdp, gp);
	if (!seg_empty(rdp, SEG_NEXT)) {
		/* As in call_rcu(): pairs with the smp_mb()s after the gp_seq stores. */
		smp_mb();
		u64 snap = rcu_seq_snap(READ_ONCE(rcu_state.gp_seq));
		seg_accelerate(rdp, snap);
		rcu_need_gp(rdp, snap);
	}
	/* Detach up to blimit ready callbacks. */
	struct rcu_head *list = rdp->cb_head, **tail = &rdp->cb_head;
	long n = 0;
	while (n < rdp->blimit && tail != rdp->tails[SEG_DONE]) {
		tail = &(*tail)->next;
		n++;
	}
	if (n) {
		rdp->cb_head = *tail;
		*tail = NULL;
		for (unsigned i = 0; i < SEG_COUNT; i++)
			if (rdp->tails[i] == tail)
				rdp->tails[i] = &rdp->cb_head;
	}
	arch_irq_restore(flags);

	for (struct rcu_head *h = n ? list : NULL; h;) {
		struct rcu_head *next = h->next;
		uintptr_t f = (uintptr_t)h->func;
		if (f < KFREE_RCU_MAX_OFFSET)
			kfree((char *)h - f);
		else
			h->func(h);
		h = next;
	}

	flags = arch_irq_save();
	rdp->qlen -= n;
	WRITE_ONCE(rdp->invoked, rdp->invoked + n);
	if (rdp->qlen < RCU_QLOWMARK)
		rdp->blimit = RCU_BLIMIT;
	seg_publish_ready_at(rdp);
	if (!seg_empty(rdp, SEG_DONE))
		raise_softirq(SOFTIRQ_RCU); /* the rest in the next round */
	arch_irq_restore(flags);
}

void __kfree_rcu(struct rcu_head *head, uintptr_t offset)
{
	call_rcu(head, (rcu_callback_t)offset);
}
/* ---- synchronize_rcu and rcu_barrier ---- */

struct rcu_synchronize {
	struct rcu_head head;
	struct completion done;
};

static void rcu_wakeme(struct rcu_head *head)
{
	complete(&container_of(head, struct rcu_synchronize, head)->done);
}

void synchronize_rcu(void)
{
	if (READ_ONCE(rcu_broken) || !rcu_ready)
		return;
	struct rcu_synchronize s;
	completion_init(&s.done);
	call_rcu(&s.head, rcu_wakeme);
	wait_for_completion(&s.done);
}

static void rcu_barrier_cb(struct rcu_head *head)
{
	if (atomic_dec_return(&barrier_count) == 0)
		complete(&barrier_done);
}

static void rcu_barrier_func(void *arg)
{
	call_rcu(&this_cpu(rcu_data).barrier_head, rcu_barrier_cb);
}

void rcu_barrier(void)
{
	unsigned cpu;
	mutex_lock(&barrier_mutex);
	completion_init(&barrier_done);
	atomic_set(&barrier_count, 1);
	/*
	 * The count and the completion before the qlen reads and the IPIs below. Pairs
	 * with the fully ordered atomic_dec_return() in rcu_barrier_cb().
	 */
	smp_mb();
	for_each_online_cpu(cpu) {
		/* A CPU with nothing queued has nothing to wait for (and stays asleep). */
		if (!READ_ONCE(per_cpu(rcu_data, cpu).qlen))
			continue;
		atomic_inc(&barrier_count);
		smp_call(cpu, rcu_barrier_func, NULL, true);
	}
	if (atomic_dec_return(&barrier_count) == 0)
		complete(&barrier_done);
	wait_for_completion(&barrier_done);
	mutex_unlock(&barrier_mutex);
}

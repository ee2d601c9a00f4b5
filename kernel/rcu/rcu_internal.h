/* Tree RCU's per-CPU data, shared by kernel/rcu/ and nothing else. */
#ifndef RCU_INTERNAL_H
#define RCU_INTERNAL_H

#include <grace/boot_info.h>

#include <grace/compiler.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>

#include <grace/cpumask.h>
#include <grace/spinlock.h>
#include <grace/wait.h>

/* Levels at the narrowest fanouts (2 and 2): MAX_CPUS / 2 leaves, then halving to the root. */
#define RCU_MAX_LEVELS 10
_Static_assert(MAX_CPUS <= 1 << (RCU_MAX_LEVELS - 1), "RCU_MAX_LEVELS too small for MAX_CPUS");
#define RCU_BLIMIT 10 /* callbacks per round (Linux's blimit) */

struct rcu_node {
	spinlock_t lock;	  /* protects gp_seq and qsmask; taken with interrupts off */
	u64 gp_seq;		  /* the grace period qsmask is for; under lock */
	unsigned long qsmask;	  /* children still to report for gp_seq; under lock */
	unsigned long qsmaskinit; /* children with CPUs online at boot; set at init */
	struct rcu_node *parent;
	unsigned long grpmask; /* this node's bit in parent->qsmask */
	unsigned grplo, grphi; /* CPUs below it: [grplo, grphi] */
	unsigned level;
} __cacheline_aligned;

/*
 * The callback list's segments, in order: done (ready to run), wait (for the
 * grace period in seqs[SEG_WAIT]), next-ready (for a later one, seqs[SEG_NEXT_READY]),
 * next (not yet tagged). Segment i ends at tails[i]; it is empty when its tail
 * equals the previous segment's.
 */
enum { SEG_DONE, SEG_WAIT, SEG_NEXT_READY, SEG_NEXT, SEG_COUNT };

/*
 * One CPU's RCU state. Three groups of cache lines, so that the hot paths of the
 * owner never write a line another CPU writes: call_rcu()'s (the owner's only;
 * the kthread reads qlen and gp_seq_needed once per grace period), the
 * quiescent-state counters (the owner writes, the kthread samples), and what is
 * fixed at boot. The whole is cache-line aligned and padded (percpu area).
 */
struct rcu_data {
	/* call_rcu() and the soft interrupt: this CPU, interrupts off. */
	struct rcu_head *cb_head;
	struct rcu_head **tails[SEG_COUNT];
	u64 seqs[SEG_COUNT]; /* grace-period end each tagged segment waits for */
	long qlen;	     /* callbacks queued and not yet invoked */
	u64 cb_ready_at;     /* the grace-period end that makes some ready (0: now; ~0: none) */
	long blimit;	     /* callbacks per soft-interrupt round */
	u64 gp_seq_needed;   /* latest grace-period end asked for */
	u64 invoked;
	struct rcu_head barrier_head; /* rcu_barrier()'s, queued on this CPU */

	/* Quiescent states: written by this CPU, read by the kthread and expedited. */
	u64 dynticks __cacheline_aligned; /* odd while halted in the idle loop */
	u64 qs_seq;	     /* last grace period this CPU passed a quiescent state in */
	u64 ctxsw;	     /* passes through __schedule() (rcu_note_context_switch) */
	u64 idle_enters;     /* rcu_idle_enter() calls: times it went idle */
	u64 ticks;	     /* scheduling-clock ticks (rcu_sched_tick) */
	u64 qs_points;	     /* quiescent points that recorded a state (rcu_quiescent_point) */
	u64 exp_qs_seq;	     /* last expedited sequence it answered */
	u64 exp_want;	     /* the expedited sequence an IPI found a reader in (acked at unlock) */
	u64 ipis_while_idle; /* RCU's IPIs that found it idle */
	u32 irq_from_eqs;    /* in an interrupt taken while idle (rcu_irq_enter) */

	/* The grace-period kthread's (and expedited's, under exp_mutex) view of this CPU. */
	u64 gp_dynticks_snap __cacheline_aligned; /* dynticks at the grace period's start */
	u64 fqs_ipis;				  /* the kthread's IPIs to it */
	u64 fqs_ipis_to_idle;			  /* ... sent while dynticks was odd */
	u64 cb_ipis;
	u64 eqs_reports;
	u64 exp_dynticks_snap;
	u64 exp_ctxsw_snap;
	u64 exp_ipis;

	/* Fixed at boot. */
	struct rcu_node *mynode __cacheline_aligned; /* its leaf */
	unsigned long grpmask;			     /* its bit in mynode->qsmask */
} __cacheline_aligned;

DECLARE_PER_CPU(struct rcu_data, rcu_data);

struct rcu_state {
	/* Read by every CPU, written by the kthread only at a grace period's start and end. */
	u64 gp_seq __cacheline_aligned;
	/* Set by a CPU that needs a grace period while none runs; cleared by the kthread. */
	u32 gp_wanted __cacheline_aligned;
	u32 hurry; /* a CPU passed qhimark: IPI holdouts without the delay */

	/* The kthread's own (and the tree, read-only after rcu_init). */
	struct rcu_node *nodes; /* nr_nodes, sized for the CPUs present at rcu_init() */
	unsigned nr_nodes, nr_levels;
	unsigned leaf_first; /* nodes[leaf_first..nr_nodes) are the leaves */
	unsigned fanout_leaf, fanout;
	struct task *gp_task;
	struct wait_queue_head gp_wq; /* the kthread waits here for requests and reports */
	u64 gp_start_ns;

	/* Expedited grace periods, under exp_mutex. */
	u64 exp_seq;

	/* Stall warnings. */
	u64 stall_timeout_ms;
	atomic64_t stall_count;
	struct cpumask stall_cpus;
};

extern struct rcu_state rcu_state;

extern bool rcu_broken; /* the torture test's debug switch */
extern bool rcu_ready;	/* the tree exists and the kthread runs */

static inline bool seg_empty(const struct rcu_data *rdp, unsigned i)
{
	return i == SEG_DONE ? rdp->tails[SEG_DONE] == &rdp->cb_head
			     : rdp->tails[i] == rdp->tails[i - 1];
}

/* The grace-period end a callback queued now must wait for: one that has not started yet. */
static inline u64 rcu_seq_snap(u64 s)
{
	return (s + 3) & ~1ULL;
}

/* tree.c */
/*
 * The tree's widths for ncpus CPUs, leaves first (width[0]) up to the root (1);
 * returns the number of levels. Fanouts 2..64 and ncpus <= MAX_CPUS fit RCU_MAX_LEVELS.
 */
unsigned rcu_tree_shape(unsigned ncpus, unsigned fanout_leaf, unsigned fanout,
			unsigned width[RCU_MAX_LEVELS]);
/* This CPU passed a quiescent state in grace period gp: report it (interrupts off, no rq lock). */
void rcu_report_qs_here(struct rcu_data *rdp, u64 gp);
void rcu_gp_kthread_wake(void);
/* On this CPU: is the interrupted or current context outside any read-side section? */
bool rcu_outside_reader(void);

/* callbacks.c */
void seg_init(struct rcu_data *rdp);
void rcu_softirq(void);

#endif

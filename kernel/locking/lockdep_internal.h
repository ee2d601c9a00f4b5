/*
 * The inside of the lock validator and statistics, shared by kernel/locking/lockdep*.c
 * and lockstat.c, and the introspection the selftests use (tests/kernel/lockdep_test.c,
 * lockstat_test.c). Nothing else includes this.
 *
 * Every table here is static and bounded. Classes and dependencies are only ever
 * added, never removed, under the graph lock; readers walk them without it (a new
 * entry is filled before a release store publishes it), which keeps the path of
 * an acquisition that adds nothing free of any shared lock.
 */
#ifndef KERNEL_LOCKING_LOCKDEP_INTERNAL_H
#define KERNEL_LOCKING_LOCKDEP_INTERNAL_H

#include <grace/lockdep.h>

#ifdef GRACE_LOCK_CLASSES

/*
 * Table sizes. A LOCKDEP=1 boot uses 20 classes and 4 dependencies before the
 * selftests, a full selftest run 91 and 82 (x86_64, SMP=4, `locks`); the tables
 * leave room for the fine-grained VFS and network locks to come. When one fills,
 * the validator says so once and stops adding to it (lockdep_graph.c).
 */
#define LOCKDEP_MAX_CLASSES 512
#define LOCKDEP_MAX_DEPS 4096
#define LOCKDEP_CLASS_HASH_BITS 8
#define LOCKDEP_MAX_BIT_RANGES 32
/* Frames kept of the stack that made a dependency or a usage state: the site and its callers. */
#define LOCKDEP_TRACE_DEPTH 6

/* held_lock.flags, beside LOCK_TRY, LOCK_READ and LOCK_SLEEPING. */
#define HELD_HARDIRQ 0x10u   /* taken in a hard interrupt handler */
#define HELD_CONTENDED 0x20u /* LOCKSTAT: it had to wait (time_ns is when the wait began) */
#define HELD_BIT 0x40u	     /* a bit spinlock: instance is its word, bit its bit */

/*
 * Usage states (docs/locking.md). USED_IN: taken in that context; ENABLED: held
 * where that context could interrupt its holder on the same CPU and take the lock
 * too. A class must not be both, nor come (by a chain of dependencies) before a
 * class that is the other.
 */
enum lock_usage {
	USED_IN_HARDIRQ, /* acquired in a hard interrupt handler */
	ENABLED_HARDIRQ, /* held with interrupts enabled */
	USED_IN_SOFTIRQ, /* acquired by a softirq handler (softirqd running it) */
	ENABLED_SOFTIRQ, /* held while preemptible, outside a softirq handler */
	NR_LOCK_USAGE
};

struct lock_class {
	const void *key; /* lockdep_map.key, or a bit-lock range's key */
	const char *name;
	u16 index; /* in lock_classes[] */
	u8 subclass;
	u8 flags;		      /* LOCK_SLEEPING: a mutex class; HELD_BIT: a bit-lock class */
	u32 usage;		      /* 1 << enum lock_usage; set under the graph lock */
	u32 after;		      /* first dependency out of this class (index + 1), 0: none */
	u32 before;		      /* first dependency into this class */
	struct lock_class *hash_next; /* the class hash chain */
	u32 bfs_gen, bfs_parent;      /* breadth-first search, under the graph lock */
	/* Where each usage state was first seen (valid once its bit is set). */
	uintptr_t usage_trace[NR_LOCK_USAGE][LOCKDEP_TRACE_DEPTH];
};

/* A dependency: `to` was acquired while `from` was held. */
struct lock_dep {
	u16 from, to;			      /* class indices */
	u32 next_after;			      /* from's next dependency (index + 1) */
	u32 next_before;		      /* to's next */
	uintptr_t from_ip;		      /* where from had been acquired */
	uintptr_t trace[LOCKDEP_TRACE_DEPTH]; /* the acquisition of to */
};

extern struct lock_class lock_classes[LOCKDEP_MAX_CLASSES];
extern u32 nr_lock_classes; /* published with a release store */

/* Raw spinning locks of the validator itself, interrupts already off, not validated. */
void lockdep_graph_lock(void);
void lockdep_graph_unlock(void);

/* The class's name for a report, and its subclass if any ("rq->lock/1"). */
const char *lock_class_name(const struct lock_class *c);
/* Print "func+0xoff" for a return address or site. */
int lockdep_snprint_ip(char *buf, size_t size, uintptr_t ip);
/*
 * The current stack from the frame whose return address is ip (the lock site) on:
 * up to max return addresses in out, zero-filled; how many.
 */
unsigned lockdep_trace(uintptr_t *out, unsigned max, uintptr_t ip);

/* lockdep.c, for lockstat.c and the tests: this task's held-lock entry of instance. */
struct task;
struct held_lock *lockdep_find_held(struct task *t, uintptr_t instance, unsigned bit);

#ifdef GRACE_LOCKDEP
/* lockdep_graph.c */
extern struct lock_dep lock_deps[LOCKDEP_MAX_DEPS];
/* Before hl (filled, not yet counted in ld->depth) is pushed: usage states and dependencies. */
void lockdep_check_acquire(struct task_lockdep *ld, struct held_lock *hl, bool irqs_on);
/* Every lock ld holds, outside interrupt context, is held with interrupts on. */
void lockdep_mark_held_irqs_on(struct task_lockdep *ld);
u32 lockdep_nr_deps(void);

/* lockdep_report.c */
enum lockdep_problem_kind {
	LOCKDEP_CIRCULAR,	       /* a new dependency closes a cycle */
	LOCKDEP_RECURSIVE,	       /* a class taken again while held (no nesting annotation) */
	LOCKDEP_INCONSISTENT_HARDIRQ,  /* taken in a hard interrupt and held with interrupts on */
	LOCKDEP_INCONSISTENT_SOFTIRQ,  /* taken by a softirq handler and held preemptible */
	LOCKDEP_HARDIRQ_INVERSION,     /* HARDIRQ-safe before HARDIRQ-unsafe */
	LOCKDEP_SOFTIRQ_INVERSION,     /* SOFTIRQ-safe before SOFTIRQ-unsafe */
	LOCKDEP_SLEEP_UNDER_SPINLOCK,  /* might sleep with a spinning lock held */
	LOCKDEP_SLEEP_IN_RCU,	       /* might sleep inside rcu_read_lock() */
	LOCKDEP_SLEEP_IN_IRQ,	       /* might sleep in a hard interrupt handler */
	LOCKDEP_SLEEP_IRQS_OFF,	       /* might sleep with interrupts off */
	LOCKDEP_UNLOCK_NOT_HELD,       /* a release of a lock this thread does not hold */
	LOCKDEP_LOCKS_AT_SCHEDULE,     /* schedule() with a spinning lock held */
	LOCKDEP_LOCKS_AT_EXIT,	       /* a thread exited holding locks */
	LOCKDEP_LOCKS_AT_IRQ_EXIT,     /* an interrupt handler returned holding locks */
	LOCKDEP_LOCKS_AT_SOFTIRQ_EXIT, /* a softirq handler returned holding locks */
	LOCKDEP_NOT_HELD,	       /* lockdep_assert_held() failed */
	LOCKDEP_NO_CLASS,	       /* a lock without a class (never initialised) */
	LOCKDEP_RCU_UNBALANCED,	       /* rcu_read_unlock() without rcu_read_lock() */
	LOCKDEP_LIMIT,		       /* a table or the held-lock stack is full */
	NR_LOCKDEP_PROBLEMS
};

/* Longest dependency chain a report prints; a longer one is cut, and says so. */
#define LOCKDEP_REPORT_PATH 16

/* What a report prints, gathered under the graph lock and printed after it. */
struct lockdep_report {
	enum lockdep_problem_kind kind;
	struct lock_class *a, *b; /* the two classes (the same one for some kinds) */
	enum lock_usage usage_a, usage_b;
	struct held_lock *held;		/* the held lock of the new dependency, or NULL */
	struct held_lock *next;		/* the lock being acquired, or NULL */
	u32 chain[LOCKDEP_REPORT_PATH]; /* dependencies, in order */
	unsigned nr_chain;		/* in chain[] */
	bool chain_cut;			/* the chain was longer */
	int new_at;			/* index in chain where the new dependency goes, or -1 */
	uintptr_t ip;			/* the site of the operation */
	uintptr_t trace[LOCKDEP_TRACE_DEPTH]; /* its stack */
};

/*
 * Has this problem been reported? If not, record it (so it is reported once) and
 * return true. a and b name it: classes, or a site. Under the graph lock.
 */
bool lockdep_problem_new(enum lockdep_problem_kind kind, const void *a, const void *b);
/* Print r (graph lock not held), with the current thread's held locks. */
void lockdep_report_print(const struct lockdep_report *r);
/* A report that is one message, a site and the held locks; deduplicated by (kind, a, b). */
void lockdep_report_simple(enum lockdep_problem_kind kind, const void *a, const void *b,
			   uintptr_t ip, const char *fmt, ...) __printf(5, 6);

/* For the selftests. */
struct lockdep_problem {
	enum lockdep_problem_kind kind;
	const char *a, *b; /* class names, when the problem is between classes */
	uintptr_t ip;
};
u64 lockdep_problem_count(enum lockdep_problem_kind kind);
/* The last report of kind; false if there was none. */
bool lockdep_last_problem(enum lockdep_problem_kind kind, struct lockdep_problem *out);
/* Forget what was reported, so that a test that provokes a problem sees it again on a rerun. */
void lockdep_forget_problems(void);
#endif /* GRACE_LOCKDEP */

#ifdef GRACE_LOCKSTAT
/* lockstat.c: a lock of hl's class was acquired at now, having waited if HELD_CONTENDED. */
void lockstat_account_acquired(const struct held_lock *hl, u64 now);
void lockstat_account_released(const struct held_lock *hl, u64 now);

/* For the selftests and `locks`: one class's figures, summed over the CPUs. */
#define LOCKSTAT_SITES 4 /* the sites that waited longest, per class and CPU */
struct lockstat_site {
	uintptr_t ip;
	u64 count;   /* contended acquisitions here */
	u64 wait_ns; /* their wait, in all */
};
struct lockstat_figures {
	u64 acquired, contended;
	u64 wait_ns, wait_max_ns;
	u64 hold_ns, hold_max_ns;
	struct lockstat_site sites[LOCKSTAT_SITES];
};
void lockstat_read(const struct lock_class *c, struct lockstat_figures *out);
#endif

/* The class of map (subclass 0), registering it if new; NULL without a key. For the tests. */
struct lock_class *lockdep_map_class(struct lockdep_map *map);

#endif /* GRACE_LOCK_CLASSES */

#endif

/*
 * The validation proper (LOCKDEP=1): the dependency graph between lock classes and
 * the usage states of each class (docs/locking.md, "Lock validator and statistics").
 *
 * Dependencies. Acquiring B while holding A adds the edge A -> B, once per pair of
 * classes: only from the most recently acquired lock still held (and from any
 * trylocks above it), since every lock held below it already has an edge to it.
 * A new edge A -> B is checked by a breadth-first search from B for A; finding it
 * means the orders A then B and B then ... then A both happened, which can deadlock
 * when they run at once on two CPUs, even if they never have. Edges are added, and
 * searched, under the graph lock; the common case, an edge that exists, is a walk
 * of A's list without it.
 *
 * Usage states. A class taken in a hard interrupt handler (USED_IN_HARDIRQ) must
 * never be held with interrupts on (ENABLED_HARDIRQ): the interrupt could arrive on
 * the holder's CPU and spin on it forever. Nor may a class of the first kind come
 * before one of the second by any chain of dependencies: a CPU holding the second
 * with interrupts on, interrupted by a handler that waits for the first, held by a
 * CPU that waits for the second, is the same deadlock two steps away. Each state is
 * checked as it is first seen, and each new edge for the chains it creates. The
 * softirq pair is the same rule for softirq handlers, with Grace's meaning of
 * "softirqs enabled": a softirq handler runs in softirqd/N, which can run on a CPU
 * only where its thread is preemptible, so a lock is SOFTIRQ-unsafe when it is
 * held preemptible: a mutex. Spinning locks disable preemption and are never
 * SOFTIRQ-unsafe; a spinning lock shared between threads and a softirq handler is
 * fine here (it is not in Linux, whose softirqs run on interrupt exit).
 *
 * A problem is reported once (lockdep_report.c), and the edge or state that would
 * create it is not recorded, so the graph stays acyclic and consistent, and a later
 * acquisition of the same pattern finds the same problem and says nothing more.
 * When the dependency table fills, the validator says so once and stops adding.
 */
#include <grace/arch.h>
#include <grace/lockdep.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/sched.h>

#include "lockdep_internal.h"

#ifdef GRACE_LOCKDEP

struct lock_dep lock_deps[LOCKDEP_MAX_DEPS];
static u32 nr_lock_deps;   /* published with a release store */
static bool deps_full;	   /* set once, under the graph lock */
static u32 bfs_generation; /* under the graph lock */
static u16 bfs_queue[LOCKDEP_MAX_CLASSES];

u32 lockdep_nr_deps(void)
{
	return smp_load_acquire(&nr_lock_deps);
}

static struct lock_dep *dep_of(u32 index1)
{
	return &lock_deps[index1 - 1];
}

/* Does from -> to exist? Without the graph lock: a dependency is published filled. */
static bool dep_exists(const struct lock_class *from, const struct lock_class *to)
{
	/* Pairs with the release stores in dep_add(). */
	for (u32 d = smp_load_acquire(&from->after); d;
	     d = smp_load_acquire(&dep_of(d)->next_after))
		if (dep_of(d)->to == to->index)
			return true;
	return false;
}

typedef bool (*bfs_match_fn)(const struct lock_class *c, u32 arg);

static bool match_class(const struct lock_class *c, u32 index)
{
	return c->index == index;
}

static bool match_usage(const struct lock_class *c, u32 usage)
{
	return READ_ONCE(c->usage) & (1u << usage);
}

/*
 * Breadth-first search from start, along the dependencies out of each class
 * (forward) or into it (backward), for the first class that matches, start
 * included. Sets each reached class's bfs_parent to the dependency it was reached
 * by. Under the graph lock.
 */
static struct lock_class *bfs(struct lock_class *start, bool forward, bfs_match_fn match, u32 arg)
{
	u32 gen = ++bfs_generation;
	unsigned head = 0, tail = 0;

	start->bfs_gen = gen;
	start->bfs_parent = 0;
	if (match(start, arg))
		return start;
	bfs_queue[tail++] = start->index;
	while (head < tail) {
		struct lock_class *c = &lock_classes[bfs_queue[head++]];
		u32 d = forward ? c->after : c->before;
		for (; d; d = forward ? dep_of(d)->next_after : dep_of(d)->next_before) {
			struct lock_class *n =
			    &lock_classes[forward ? dep_of(d)->to : dep_of(d)->from];
			if (n->bfs_gen == gen)
				continue;
			n->bfs_gen = gen;
			n->bfs_parent = d;
			if (match(n, arg))
				return n;
			/* Each class is queued once at most: the queue holds them all. */
			bfs_queue[tail++] = n->index;
		}
	}
	return NULL;
}

/*
 * The dependencies bfs() followed from its start to found, into r->chain after what
 * is there, in dependency order (first the one out of the chain's first class).
 */
static void bfs_chain(struct lockdep_report *r, const struct lock_class *found, bool forward)
{
	unsigned n = 0;
	for (const struct lock_class *c = found; c->bfs_parent; n++) {
		struct lock_dep *d = dep_of(c->bfs_parent);
		c = &lock_classes[forward ? d->from : d->to];
	}
	/*
	 * Walking parents from found visits the chain backward for a forward search
	 * (from its end) and in order for a backward one (found is its first class).
	 */
	unsigned base = r->nr_chain, k = 0;
	for (const struct lock_class *c = found; c->bfs_parent; k++) {
		u32 d = c->bfs_parent;
		unsigned at = base + (forward ? n - 1 - k : k);
		if (at < LOCKDEP_REPORT_PATH)
			r->chain[at] = d - 1;
		c = &lock_classes[forward ? dep_of(d)->from : dep_of(d)->to];
	}
	r->nr_chain = MIN(base + n, LOCKDEP_REPORT_PATH);
	r->chain_cut |= base + n > LOCKDEP_REPORT_PATH;
}

static void report_init(struct lockdep_report *r, enum lockdep_problem_kind kind,
			struct lock_class *a, struct lock_class *b)
{
	*r = (struct lockdep_report){.kind = kind, .a = a, .b = b, .new_at = -1};
}

static enum lock_usage usage_opposite(enum lock_usage u)
{
	return (enum lock_usage)(u ^ 1); /* USED_IN_x <-> ENABLED_x */
}

static bool usage_is_used_in(enum lock_usage u)
{
	return u == USED_IN_HARDIRQ || u == USED_IN_SOFTIRQ;
}

static enum lockdep_problem_kind inversion_kind(enum lock_usage u)
{
	return u <= ENABLED_HARDIRQ ? LOCKDEP_HARDIRQ_INVERSION : LOCKDEP_SOFTIRQ_INVERSION;
}

/*
 * Record that c is in usage state u, first seen at ip (with hl being acquired, or
 * NULL when a held lock is marked). A state that contradicts c's others, or the
 * states of the classes before or after it, is reported and not recorded.
 */
static void mark_usage(struct lock_class *c, enum lock_usage u, uintptr_t ip, struct held_lock *hl)
{
	u32 bit = 1u << u;
	if (READ_ONCE(c->usage) & bit)
		return;

	uintptr_t trace[LOCKDEP_TRACE_DEPTH];
	lockdep_trace(trace, LOCKDEP_TRACE_DEPTH, ip);
	struct lockdep_report r;
	bool report = false;

	lockdep_graph_lock();
	if (c->usage & bit) {
		lockdep_graph_unlock();
		return;
	}
	enum lock_usage other = usage_opposite(u);
	if (c->usage & (1u << other)) {
		enum lockdep_problem_kind kind = u <= ENABLED_HARDIRQ
						     ? LOCKDEP_INCONSISTENT_HARDIRQ
						     : LOCKDEP_INCONSISTENT_SOFTIRQ;
		report_init(&r, kind, c, c);
		r.usage_a = other;
		r.usage_b = u;
		report = lockdep_problem_new(kind, c, c);
	} else {
		/* USED_IN: nothing after c may be ENABLED; ENABLED: nothing before c USED_IN. */
		bool used_in = usage_is_used_in(u);
		struct lock_class *found = bfs(c, used_in, match_usage, other);
		if (found) {
			struct lock_class *safe = used_in ? c : found,
					  *unsafe = used_in ? found : c;
			report_init(&r, inversion_kind(u), safe, unsafe);
			r.usage_a = used_in ? u : other;
			r.usage_b = used_in ? other : u;
			bfs_chain(&r, found, used_in);
			report = lockdep_problem_new(r.kind, safe, unsafe);
		} else {
			for (unsigned i = 0; i < LOCKDEP_TRACE_DEPTH; i++)
				c->usage_trace[u][i] = trace[i];
			/* The trace before the bit: a report that sees the bit reads the trace. */
			smp_store_release(&c->usage, c->usage | bit);
			lockdep_graph_unlock();
			return;
		}
	}
	lockdep_graph_unlock();
	if (report) {
		r.next = hl;
		r.ip = ip;
		for (unsigned i = 0; i < LOCKDEP_TRACE_DEPTH; i++)
			r.trace[i] = trace[i];
		lockdep_report_print(&r);
	}
}

void lockdep_mark_held_irqs_on(struct task_lockdep *ld)
{
	for (unsigned i = 0; i < ld->depth; i++) {
		struct held_lock *h = &ld->held[i];
		if (h->class && !(h->flags & HELD_HARDIRQ))
			mark_usage(h->class, ENABLED_HARDIRQ, h->ip, NULL);
	}
}

/* Held preemptible (only sleeping locks can be): softirqd could run on this CPU now. */
static void mark_held_preemptible(struct task_lockdep *ld)
{
	for (unsigned i = 0; i < ld->depth; i++) {
		struct held_lock *h = &ld->held[i];
		if (h->class && !(h->flags & HELD_HARDIRQ))
			mark_usage(h->class, ENABLED_SOFTIRQ, h->ip, NULL);
	}
}

static bool deps_full_said;

/* held was held when next was acquired: add held's class -> next's class, if new and sound. */
static void dep_add(struct held_lock *held, struct held_lock *next)
{
	struct lock_class *from = held->class, *to = next->class;
	if (from == to || dep_exists(from, to))
		return;

	uintptr_t trace[LOCKDEP_TRACE_DEPTH];
	lockdep_trace(trace, LOCKDEP_TRACE_DEPTH, next->ip);
	struct lockdep_report r;
	bool report = false;

	lockdep_graph_lock();
	if (dep_exists(from, to) || deps_full) {
		lockdep_graph_unlock();
		return;
	}
	/* A cycle: to -> ... -> from already, and now from -> to. */
	struct lock_class *found = bfs(to, true, match_class, from->index);
	if (found) {
		report_init(&r, LOCKDEP_CIRCULAR, from, to);
		bfs_chain(&r, found, true);
		report = lockdep_problem_new(LOCKDEP_CIRCULAR, from, to);
		goto out;
	}
	/* safe -> ... -> from -> to -> ... -> unsafe, for the hard and the soft pair. */
	for (enum lock_usage u = USED_IN_HARDIRQ; u < NR_LOCK_USAGE; u += 2) {
		struct lock_class *safe = bfs(from, false, match_usage, u);
		if (!safe)
			continue;
		report_init(&r, inversion_kind(u), safe, NULL);
		bfs_chain(&r, safe, false);
		struct lock_class *unsafe = bfs(to, true, match_usage, usage_opposite(u));
		if (!unsafe)
			continue;
		r.b = unsafe;
		r.usage_a = u;
		r.usage_b = usage_opposite(u);
		r.new_at = (int)r.nr_chain;
		bfs_chain(&r, unsafe, true);
		report = lockdep_problem_new(r.kind, safe, unsafe);
		goto out;
	}
	if (nr_lock_deps == LOCKDEP_MAX_DEPS) {
		deps_full = true;
		report = !deps_full_said;
		deps_full_said = true;
		report_init(&r, LOCKDEP_LIMIT, from, to);
		goto out;
	}

	struct lock_dep *d = &lock_deps[nr_lock_deps];
	d->from = from->index;
	d->to = to->index;
	d->from_ip = held->ip;
	for (unsigned i = 0; i < LOCKDEP_TRACE_DEPTH; i++)
		d->trace[i] = trace[i];
	u32 index1 = nr_lock_deps + 1;
	d->next_after = from->after;
	d->next_before = to->before;
	/* Filled before it is found: pairs with the acquires in dep_exists(). */
	smp_store_release(&from->after, index1);
	smp_store_release(&to->before, index1);
	smp_store_release(&nr_lock_deps, index1);
out:
	lockdep_graph_unlock();
	if (!report)
		return;
	if (r.kind == LOCKDEP_LIMIT) {
		pr_err("lockdep: the dependency table is full (LOCKDEP_MAX_DEPS %u); the validator "
		       "adds no more dependencies\n",
		       LOCKDEP_MAX_DEPS);
		return;
	}
	r.held = held;
	r.next = next;
	r.ip = next->ip;
	for (unsigned i = 0; i < LOCKDEP_TRACE_DEPTH; i++)
		r.trace[i] = trace[i];
	lockdep_report_print(&r);
}

/* Do h (held) and hl (being acquired) belong to one context: both in a hard interrupt or not? */
static bool same_context(const struct held_lock *h, const struct held_lock *hl)
{
	return (h->flags & HELD_HARDIRQ) == (hl->flags & HELD_HARDIRQ);
}

void lockdep_check_acquire(struct task_lockdep *ld, struct held_lock *hl, bool irqs_on)
{
	struct lock_class *c = hl->class;

	/* Usage states. */
	if (hl->flags & HELD_HARDIRQ) {
		mark_usage(c, USED_IN_HARDIRQ, hl->ip, hl);
	} else {
		if (irqs_on) {
			mark_usage(c, ENABLED_HARDIRQ, hl->ip, hl);
			lockdep_mark_held_irqs_on(ld);
		}
		if (ld->in_softirq) {
			mark_usage(c, USED_IN_SOFTIRQ, hl->ip, hl);
		} else if ((hl->flags & LOCK_SLEEPING) && irqs_on && preempt_count() == 0) {
			mark_usage(c, ENABLED_SOFTIRQ, hl->ip, hl);
			mark_held_preemptible(ld);
		}
	}
	if (hl->flags & LOCK_TRY)
		return; /* it did not wait: no deadlock can end in it */

	/* The same class again, in this context: a deadlock unless annotated as nested. */
	for (unsigned i = ld->depth; i-- > 0;) {
		struct held_lock *h = &ld->held[i];
		if (!same_context(h, hl))
			break;
		if (h->class != c)
			continue;
		struct lockdep_report r;
		report_init(&r, LOCKDEP_RECURSIVE, c, c);
		lockdep_graph_lock();
		bool report = lockdep_problem_new(LOCKDEP_RECURSIVE, c, c);
		lockdep_graph_unlock();
		if (report) {
			r.held = h;
			r.next = hl;
			r.ip = hl->ip;
			lockdep_trace(r.trace, LOCKDEP_TRACE_DEPTH, hl->ip);
			lockdep_report_print(&r);
		}
		return;
	}

	/* Dependencies: from the last lock held here, and from the trylocks above it. */
	for (unsigned i = ld->depth; i-- > 0;) {
		struct held_lock *h = &ld->held[i];
		if (!same_context(h, hl))
			break;
		if (!h->class)
			continue;
		dep_add(h, hl);
		if (!(h->flags & LOCK_TRY))
			break;
	}
}

#endif /* GRACE_LOCKDEP */

/*
 * The validator's reports (LOCKDEP=1): what a problem is, the dependency chains
 * that make it one with each acquiring site symbolized, where the usage states were
 * first seen, the stack now and the locks held; once per problem, every line at
 * KERN_ERR and starting "lockdep: " (a test that provokes one announces that text).
 * How to read one: docs/locking.md.
 *
 * A problem is known by its kind and two names (two classes, or a site): a table
 * of the ones reported, under the graph lock, keeps each to one report. Reports are
 * printed with the graph lock dropped, one at a time under the report lock (both
 * raw, the validator's own), since printing takes printk's lock, which another CPU
 * may hold while it waits for the graph lock.
 */
#include <grace/lockdep.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <asm/cpu.h>

#include "lockdep_internal.h"

#ifdef GRACE_LOCKDEP

/* Distinct problems remembered; past that nothing more is reported (said once). */
#define LOCKDEP_MAX_PROBLEMS 256

struct problem {
	enum lockdep_problem_kind kind;
	const void *a, *b;
};

static struct problem problems[LOCKDEP_MAX_PROBLEMS]; /* under the graph lock */
static unsigned nr_problems;
static bool problems_full, problems_full_said;

static u32 report_lock_word;
static u64 problem_counts[NR_LOCKDEP_PROBLEMS];			 /* under the report lock */
static struct lockdep_problem last_problem[NR_LOCKDEP_PROBLEMS]; /* under the report lock */

/*
 * About a second of polling under TCG, as printk's after a panic. A reporter may
 * hold a ticket of printk's lock already (a lock that waits is validated after it
 * drew its ticket); one printing, waiting for that ticket's turn, would then wait
 * for it forever. Past the bound a report prints unserialised rather than hang.
 */
#define REPORT_LOCK_POLLS 10000000L

/* true if the report lock was taken, and must be released. */
static bool report_lock(void)
{
	for (long i = 0; i < REPORT_LOCK_POLLS; i++) {
		/* Acquire: pairs with the release in report_unlock(). */
		if (!READ_ONCE(report_lock_word) && !xchg_acquire(&report_lock_word, 1))
			return true;
		cpu_relax();
	}
	return false;
}

static void report_unlock(bool locked)
{
	if (locked)
		smp_store_release(&report_lock_word, 0);
}

bool lockdep_problem_new(enum lockdep_problem_kind kind, const void *a, const void *b)
{
	for (unsigned i = 0; i < nr_problems; i++)
		if (problems[i].kind == kind && problems[i].a == a && problems[i].b == b)
			return false;
	if (nr_problems == LOCKDEP_MAX_PROBLEMS) {
		problems_full = true;
		return false;
	}
	problems[nr_problems++] = (struct problem){kind, a, b};
	return true;
}

void lockdep_forget_problems(void)
{
	unsigned long flags = arch_irq_save();
	lockdep_graph_lock();
	nr_problems = 0;
	problems_full = false;
	lockdep_graph_unlock();
	arch_irq_restore(flags);
}

u64 lockdep_problem_count(enum lockdep_problem_kind kind)
{
	return READ_ONCE(problem_counts[kind]);
}

bool lockdep_last_problem(enum lockdep_problem_kind kind, struct lockdep_problem *out)
{
	unsigned long flags = arch_irq_save();
	bool locked = report_lock();
	*out = last_problem[kind];
	bool any = problem_counts[kind] != 0;
	report_unlock(locked);
	arch_irq_restore(flags);
	return any;
}

static const char *const problem_titles[NR_LOCKDEP_PROBLEMS] = {
    [LOCKDEP_CIRCULAR] = "possible circular locking dependency detected",
    [LOCKDEP_RECURSIVE] = "possible recursive locking detected",
    [LOCKDEP_INCONSISTENT_HARDIRQ] = "inconsistent lock state: HARDIRQ-safe and -unsafe",
    [LOCKDEP_INCONSISTENT_SOFTIRQ] = "inconsistent lock state: SOFTIRQ-safe and -unsafe",
    [LOCKDEP_HARDIRQ_INVERSION] = "HARDIRQ-safe -> HARDIRQ-unsafe lock order detected",
    [LOCKDEP_SOFTIRQ_INVERSION] = "SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected",
    [LOCKDEP_SLEEP_UNDER_SPINLOCK] = "sleeping function called with a spinning lock held",
    [LOCKDEP_SLEEP_IN_RCU] = "sleeping function called inside an RCU read-side critical section",
    [LOCKDEP_SLEEP_IN_IRQ] = "sleeping function called in an interrupt handler",
    [LOCKDEP_SLEEP_IRQS_OFF] = "sleeping function called with interrupts off",
    [LOCKDEP_UNLOCK_NOT_HELD] = "bad unlock: the lock is not held",
    [LOCKDEP_LOCKS_AT_SCHEDULE] = "schedule() with a spinning lock held",
    [LOCKDEP_LOCKS_AT_EXIT] = "a thread exits holding locks",
    [LOCKDEP_LOCKS_AT_IRQ_EXIT] = "an interrupt handler returns holding locks",
    [LOCKDEP_LOCKS_AT_SOFTIRQ_EXIT] = "a softirq handler returns holding locks",
    [LOCKDEP_NOT_HELD] = "lockdep_assert_held() failed",
    [LOCKDEP_NO_CLASS] = "a lock without a class",
    [LOCKDEP_RCU_UNBALANCED] = "unbalanced rcu_read_unlock()",
    [LOCKDEP_LIMIT] = "a validator table is full",
};

static const char *const usage_names[NR_LOCK_USAGE] = {
    [USED_IN_HARDIRQ] = "HARDIRQ-safe (taken in a hard interrupt handler)",
    [ENABLED_HARDIRQ] = "HARDIRQ-unsafe (held with interrupts on)",
    [USED_IN_SOFTIRQ] = "SOFTIRQ-safe (taken by a softirq handler)",
    [ENABLED_SOFTIRQ] = "SOFTIRQ-unsafe (held preemptible, where softirqd can run)",
};

/* A class's name with its subclass: "rq->lock/1". */
static const char *class_label(const struct lock_class *c, char *buf, size_t size)
{
	if (!c)
		snprintf(buf, size, "(none)");
	else if (!c->subclass)
		snprintf(buf, size, "%s", lock_class_name(c));
	else
		snprintf(buf, size, "%s/%u", lock_class_name(c), c->subclass);
	return buf;
}

#define NAME_BUF 96

static void print_ip_line(const char *prefix, uintptr_t ip)
{
	char where[NAME_BUF];
	lockdep_snprint_ip(where, sizeof(where), ip);
	pr_err("lockdep: %s%s\n", prefix, where);
}

static void print_trace(const uintptr_t *trace)
{
	for (unsigned i = 0; i < LOCKDEP_TRACE_DEPTH && trace[i]; i++)
		print_ip_line("      ", trace[i]);
}

static const char *context_name(void)
{
	if (in_interrupt())
		return "a hard interrupt handler";
	return current->lockdep.in_softirq ? "a softirq handler" : "thread context";
}

static void print_held(const struct held_lock *h, unsigned i)
{
	char name[NAME_BUF], where[NAME_BUF];
	lockdep_snprint_ip(where, sizeof(where), h->ip);
	const char *label = h->class ? class_label(h->class, name, sizeof(name)) : "(no class)";
	pr_err("lockdep:  #%u: %s%s%s%s%s, acquired at %s\n", i, label,
	       h->flags & LOCK_SLEEPING ? " (mutex)" : "", h->flags & LOCK_READ ? " (read)" : "",
	       h->flags & LOCK_TRY ? " (trylock)" : "",
	       h->flags & HELD_HARDIRQ ? " (in a hard interrupt)" : "", where);
}

static void print_held_locks(const struct held_lock *acquiring)
{
	struct task_lockdep *ld = &current->lockdep;
	unsigned n = ld->depth;
	pr_err("lockdep: %u lock%s held by '%s' on CPU %u, in %s%s:\n", n, n == 1 ? "" : "s",
	       current->name, smp_processor_id(), context_name(),
	       ld->rcu_depth ? ", inside rcu_read_lock()" : "");
	for (unsigned i = 0; i < n; i++)
		print_held(&ld->held[i], i);
	if (acquiring) {
		pr_err("lockdep: and acquiring:\n");
		print_held(acquiring, n);
	}
}

/* One dependency of a chain: "#k from -> to", where to was taken, with from held. */
static void print_dep(unsigned k, u32 index)
{
	const struct lock_dep *d = &lock_deps[index];
	char a[NAME_BUF], b[NAME_BUF], where[NAME_BUF];
	lockdep_snprint_ip(where, sizeof(where), d->from_ip);
	class_label(&lock_classes[d->from], a, sizeof(a));
	class_label(&lock_classes[d->to], b, sizeof(b));
	pr_err("lockdep:  #%u %s -> %s: %s taken at %s, then %s at:\n", k, a, b, a, where, b);
	print_trace(d->trace);
}

/* The new dependency r->held -> r->next, as one link of a chain, with today's stack. */
static void print_new_dep(const struct lockdep_report *r, unsigned k)
{
	char a[NAME_BUF], b[NAME_BUF], where[NAME_BUF];
	lockdep_snprint_ip(where, sizeof(where), r->held->ip);
	class_label(r->held->class, a, sizeof(a));
	class_label(r->next->class, b, sizeof(b));
	pr_err("lockdep:  #%u %s -> %s (new): %s taken at %s, then %s now, at:\n", k, a, b, a,
	       where, b);
	print_trace(r->trace);
}

static void print_chain(const struct lockdep_report *r)
{
	unsigned k = 0;
	for (unsigned i = 0; i < r->nr_chain; i++) {
		if (r->new_at == (int)i)
			print_new_dep(r, k++);
		print_dep(k++, r->chain[i]);
	}
	if (r->new_at == (int)r->nr_chain)
		print_new_dep(r, k++);
	if (r->chain_cut)
		pr_err("lockdep:  ... (the chain is longer; cut at %u)\n", LOCKDEP_REPORT_PATH);
}

/* Where class c entered usage state u: its recorded stack, or now's if it did not yet. */
static void print_usage(const struct lockdep_report *r, const struct lock_class *c,
			enum lock_usage u, const char *verb)
{
	char name[NAME_BUF];
	pr_err("lockdep: %s %s %s at:\n", class_label(c, name, sizeof(name)), verb, usage_names[u]);
	print_trace(READ_ONCE(c->usage) & (1u << u) ? c->usage_trace[u] : r->trace);
}

static void report_begin(enum lockdep_problem_kind kind)
{
	pr_err("lockdep: ======================================================\n");
	pr_err("lockdep: %s\n", problem_titles[kind]);
}

static void report_end(enum lockdep_problem_kind kind, const char *a, const char *b, uintptr_t ip)
{
	if (problems_full && !problems_full_said) {
		problems_full_said = true;
		pr_err("lockdep: %u problems reported; no more will be\n", LOCKDEP_MAX_PROBLEMS);
	}
	pr_err("lockdep: ------------------------------------------------------\n");
	problem_counts[kind]++;
	last_problem[kind] = (struct lockdep_problem){kind, a, b, ip};
}

void lockdep_report_print(const struct lockdep_report *r)
{
	char a[NAME_BUF], b[NAME_BUF], where[NAME_BUF];
	unsigned long flags = arch_irq_save();
	bool locked = report_lock();
	report_begin(r->kind);
	lockdep_snprint_ip(where, sizeof(where), r->ip);
	const char *na = lock_class_name(r->a), *nb = r->b ? lock_class_name(r->b) : NULL;

	switch (r->kind) {
	case LOCKDEP_CIRCULAR:
		pr_err("lockdep: '%s' on CPU %u takes %s at %s while holding %s,\n", current->name,
		       smp_processor_id(), class_label(r->b, b, sizeof(b)), where,
		       class_label(r->a, a, sizeof(a)));
		pr_err("lockdep: which makes the new dependency %s -> %s; but this chain "
		       "exists already, so the two orders can deadlock on two CPUs:\n",
		       a, b);
		print_chain(r);
		pr_err("lockdep: and the new dependency, now:\n");
		print_new_dep(r, r->nr_chain);
		break;
	case LOCKDEP_RECURSIVE:
		lockdep_snprint_ip(a, sizeof(a), r->held->ip);
		pr_err("lockdep: '%s' on CPU %u takes %s at %s while it holds one, taken at %s:\n",
		       current->name, smp_processor_id(), class_label(r->b, b, sizeof(b)), where,
		       a);
		pr_err("lockdep: the same lock deadlocks; two locks of one class need an order the "
		       "validator is told of (spin_lock_nested()) or classes of their own "
		       "(lock_set_class())\n");
		print_trace(r->trace);
		break;
	case LOCKDEP_INCONSISTENT_HARDIRQ:
	case LOCKDEP_INCONSISTENT_SOFTIRQ:
		pr_err("lockdep: %s is both %s and %s:\n", class_label(r->a, a, sizeof(a)),
		       usage_names[r->usage_a], usage_names[r->usage_b]);
		if (r->kind == LOCKDEP_INCONSISTENT_HARDIRQ)
			pr_err("lockdep: the interrupt can come on a holder's CPU and spin on the "
			       "lock forever\n");
		else
			pr_err("lockdep: softirqd can preempt a holder and wait for it: every "
			       "softirq of that CPU then waits for an ordinary thread\n");
		print_usage(r, r->a, r->usage_a, "became");
		print_usage(r, r->a, r->usage_b, "becomes");
		break;
	case LOCKDEP_HARDIRQ_INVERSION:
	case LOCKDEP_SOFTIRQ_INVERSION:
		pr_err("lockdep: %s, %s,\n", class_label(r->a, a, sizeof(a)),
		       usage_names[r->usage_a]);
		pr_err("lockdep: would come before %s, %s:\n", class_label(r->b, b, sizeof(b)),
		       usage_names[r->usage_b]);
		if (r->kind == LOCKDEP_HARDIRQ_INVERSION)
			pr_err("lockdep: a CPU holding the second, interrupted by a handler that "
			       "waits for the first, held by a CPU that waits for the second, "
			       "deadlocks. The chain:\n");
		else
			pr_err("lockdep: a softirq handler holding the first waits for threads "
			       "that hold the second preemptible: every softirq of its CPU waits "
			       "with it. The chain:\n");
		print_chain(r);
		print_usage(r, r->a, r->usage_a, "became");
		print_usage(r, r->b, r->usage_b, "became");
		break;
	default:
		break;
	}
	print_held_locks(r->kind == LOCKDEP_CIRCULAR || r->kind == LOCKDEP_RECURSIVE ? r->next
										     : NULL);
	report_end(r->kind, na, nb, r->ip);
	report_unlock(locked);
	arch_irq_restore(flags);
}

void lockdep_report_simple(enum lockdep_problem_kind kind, const void *a, const void *b,
			   uintptr_t ip, const char *fmt, ...)
{
	char msg[200], where[NAME_BUF];
	uintptr_t trace[LOCKDEP_TRACE_DEPTH];
	unsigned long flags = arch_irq_save();

	lockdep_graph_lock();
	bool report = lockdep_problem_new(kind, a, b);
	lockdep_graph_unlock();
	if (report) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		lockdep_trace(trace, LOCKDEP_TRACE_DEPTH, ip);
		lockdep_snprint_ip(where, sizeof(where), ip);

		bool locked = report_lock();
		report_begin(kind);
		pr_err("lockdep: %s\n", msg);
		pr_err("lockdep: at %s:\n", where);
		print_trace(trace);
		print_held_locks(NULL);
		report_end(kind, NULL, NULL, ip);
		report_unlock(locked);
	}
	arch_irq_restore(flags);
}

#endif /* GRACE_LOCKDEP */

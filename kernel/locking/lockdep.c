/*
 * The lock validator's and statistics' common part (grace/lockdep.h): lock
 * classes, each thread's stack of held locks, and the hooks the lock primitives
 * call. The validation proper (dependencies, usage states) is in lockdep_graph.c,
 * the reports in lockdep_report.c, the statistics in lockstat.c.
 *
 * A hook runs with interrupts off, so an interrupt handler's locks never land in
 * the middle of an update of the interrupted thread's stack; a per-CPU recursion
 * count makes the locks the validator itself takes (printk's, in a report) pass
 * untracked. Classes are found without a lock: the map caches its class, and a
 * class once published never changes. Only registering a new class takes the
 * graph lock, a raw spinning lock of the validator's own.
 *
 * Lock order: the graph lock is innermost; nothing is printed while it is held.
 */
#include <grace/arch.h>
#include <grace/lockdep.h>
#include <grace/hash.h>
#include <grace/ksyms.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#include "lockdep_internal.h"

bool lockdep_enabled(void)
{
#ifdef GRACE_LOCKDEP
	return true;
#else
	return false;
#endif
}

bool lockstat_enabled(void)
{
#ifdef GRACE_LOCKSTAT
	return true;
#else
	return false;
#endif
}

#ifdef GRACE_LOCK_CLASSES

struct lock_class lock_classes[LOCKDEP_MAX_CLASSES];
u32 nr_lock_classes;
static struct lock_class *class_hash[1u << LOCKDEP_CLASS_HASH_BITS];

/* Bit-lock classes by the address range of their words (bit_spin_lock_set_class). */
struct bit_class_range {
	uintptr_t start, end;
	const void *key;
	const char *name;
};
static struct bit_class_range bit_ranges[LOCKDEP_MAX_BIT_RANGES];
static u32 nr_bit_ranges; /* published with a release store */

static bool lockdep_stopped; /* lockdep_off(), or the held-lock stack overflowed */
static DEFINE_PER_CPU(u32, lockdep_recursion);

/* The held-lock entry passing with rq->lock from one thread to the next (lock_switch_out). */
static DEFINE_PER_CPU(struct held_lock, switch_handoff);

static u32 graph_lock_word;

void lockdep_graph_lock(void)
{
	/* Acquire: pairs with the release in lockdep_graph_unlock(). */
	while (xchg_acquire(&graph_lock_word, 1))
		while (READ_ONCE(graph_lock_word))
			cpu_relax();
}

void lockdep_graph_unlock(void)
{
	smp_store_release(&graph_lock_word, 0);
}

void lockdep_off(void)
{
	WRITE_ONCE(lockdep_stopped, true);
}

/* Enter a hook: false if the validator is off or already running on this CPU. Interrupts off. */
static bool lockdep_enter(void)
{
	if (READ_ONCE(lockdep_stopped) || this_cpu(lockdep_recursion))
		return false;
	this_cpu(lockdep_recursion)++;
	return true;
}

static void lockdep_leave(void)
{
	this_cpu(lockdep_recursion)--;
}

/* ---- names and stacks ---- */

const char *lock_class_name(const struct lock_class *c)
{
	/* Without a name, the key is the init site's string "@file:line". */
	return c->name && c->name[0] ? c->name : (const char *)c->key + 1;
}

int lockdep_snprint_ip(char *buf, size_t size, uintptr_t ip)
{
	uintptr_t off;
	/* A return address may be just past its function's last call: name the caller. */
	const char *name = ip ? ksym_lookup(ip - 1, &off, NULL) : NULL;
	if (!name)
		return snprintf(buf, size, "%p", (void *)ip);
	return snprintf(buf, size, "%s+0x%lx", name, (unsigned long)(off + 1));
}

/* Frames looked through for the site before giving up on finding it. */
#define LOCKDEP_TRACE_SKIP 8

unsigned lockdep_trace(uintptr_t *out, unsigned max, uintptr_t ip)
{
	uintptr_t frames[LOCKDEP_TRACE_SKIP + LOCKDEP_TRACE_DEPTH];
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0), pc = 0;
	unsigned n = 0, start = 0, got = 0;

	while (n < ARRAY_SIZE(frames) && arch_unwind(&fp, &pc))
		frames[n++] = pc;
	/* Skip the validator's own frames: start where the lock function returns to. */
	while (start < n && start < LOCKDEP_TRACE_SKIP && frames[start] != ip)
		start++;
	if (start == n || frames[start] != ip) {
		out[got++] = ip; /* not found (a tail call): the site alone */
		start = n;
	}
	for (; start < n && got < max; start++)
		out[got++] = frames[start];
	for (unsigned i = got; i < max; i++)
		out[i] = 0;
	return got;
}

/* ---- classes ---- */

static unsigned class_hash_of(const void *key, unsigned subclass)
{
	u32 k = (u32)((uintptr_t)key >> 2) ^ subclass;
	return hash_32(k, LOCKDEP_CLASS_HASH_BITS);
}

static struct lock_class *class_find(const void *key, unsigned subclass)
{
	/* Pairs with the release stores in class_register(). */
	for (struct lock_class *c = smp_load_acquire(&class_hash[class_hash_of(key, subclass)]); c;
	     c = smp_load_acquire(&c->hash_next))
		if (c->key == key && c->subclass == subclass)
			return c;
	return NULL;
}

static bool class_table_full_said;

static struct lock_class *class_register(const void *key, unsigned subclass, const char *name,
					 u8 flags)
{
	struct lock_class *c = class_find(key, subclass);
	if (c)
		return c;
	lockdep_graph_lock();
	c = class_find(key, subclass);
	if (!c && nr_lock_classes < LOCKDEP_MAX_CLASSES) {
		unsigned h = class_hash_of(key, subclass);
		c = &lock_classes[nr_lock_classes];
		c->key = key;
		c->name = name;
		c->index = (u16)nr_lock_classes;
		c->subclass = (u8)subclass;
		c->flags = flags;
		c->hash_next = class_hash[h];
		/* The class filled before it is found: pairs with class_find()'s acquires. */
		smp_store_release(&class_hash[h], c);
		smp_store_release(&nr_lock_classes, nr_lock_classes + 1);
	}
	bool full = !c && !class_table_full_said;
	class_table_full_said |= full;
	lockdep_graph_unlock();
	if (full)
		pr_err(
		    "lockdep: the class table is full (LOCKDEP_MAX_CLASSES %u); new lock classes "
		    "go untracked\n",
		    LOCKDEP_MAX_CLASSES);
	return c;
}

static struct lock_class *map_class(struct lockdep_map *map, unsigned subclass, u8 flags)
{
	if (subclass == 0) {
		struct lock_class *c = READ_ONCE(map->class);
		if (c)
			return c;
	}
	if (!map->key)
		return NULL;
	if (subclass >= LOCKDEP_MAX_SUBCLASSES)
		subclass = LOCKDEP_MAX_SUBCLASSES - 1;
	struct lock_class *c = class_register(map->key, subclass, map->name, flags);
	if (c && subclass == 0)
		WRITE_ONCE(map->class, c);
	return c;
}

struct lock_class *lockdep_map_class(struct lockdep_map *map)
{
	unsigned long flags = arch_irq_save();
	struct lock_class *c = map_class(map, 0, 0);
	arch_irq_restore(flags);
	return c;
}

void lockdep_set_class_map(struct lockdep_map *map, const struct lock_class_key *key,
			   const char *name)
{
	map->key = key;
	map->name = name && name[0] ? name : "(lock_set_class without a name)";
	WRITE_ONCE(map->class, NULL);
}

void lockdep_set_bit_class(const void *words, size_t size, const struct lock_class_key *key,
			   const char *name)
{
	unsigned long flags = arch_irq_save();
	lockdep_graph_lock();
	u32 n = 0;
	/* A key registered again (its table moved) moves its range. */
	while (n < nr_bit_ranges && bit_ranges[n].key != key)
		n++;
	if (n < LOCKDEP_MAX_BIT_RANGES) {
		struct bit_class_range *r = &bit_ranges[n];
		WRITE_ONCE(r->start, 0);
		WRITE_ONCE(r->end, 0); /* empty while it changes: a racing lookup misses it */
		r->key = key;
		r->name = name && name[0] ? name : "(bit_spin_lock_set_class without a name)";
		WRITE_ONCE(r->start, (uintptr_t)words);
		WRITE_ONCE(r->end, (uintptr_t)words + size);
		/* Pairs with the acquire in bit_class(). */
		if (n == nr_bit_ranges)
			smp_store_release(&nr_bit_ranges, n + 1);
	}
	lockdep_graph_unlock();
	arch_irq_restore(flags);
	if (n >= LOCKDEP_MAX_BIT_RANGES)
		pr_err("lockdep: no room for bit-lock class %s (LOCKDEP_MAX_BIT_RANGES %u)\n", name,
		       LOCKDEP_MAX_BIT_RANGES);
}

static struct lock_class *bit_class(const void *word)
{
	uintptr_t w = (uintptr_t)word;
	/* The newest range first: a table registered again (reallocated) wins. */
	for (u32 i = smp_load_acquire(&nr_bit_ranges); i-- > 0;)
		if (w >= READ_ONCE(bit_ranges[i].start) && w < READ_ONCE(bit_ranges[i].end))
			return class_register(bit_ranges[i].key, 0, bit_ranges[i].name, HELD_BIT);
	return NULL;
}

/* ---- the held-lock stack ---- */

struct held_lock *lockdep_find_held(struct task *t, uintptr_t instance, unsigned bit)
{
	struct task_lockdep *ld = &t->lockdep;
	for (unsigned i = ld->depth; i-- > 0;)
		if (ld->held[i].instance == instance && ld->held[i].bit == bit)
			return &ld->held[i];
	return NULL;
}

static void held_remove(struct task_lockdep *ld, struct held_lock *hl)
{
	unsigned i = (unsigned)(hl - ld->held);
	if (i + 1 < ld->depth) /* not the last taken: the ones above move down */
		memmove(&ld->held[i], &ld->held[i + 1], (ld->depth - i - 1) * sizeof(ld->held[0]));
	ld->depth--;
}

/* The flags a held lock keeps of lock_acquire()'s. */
#define HELD_KEPT (LOCK_TRY | LOCK_READ | LOCK_SLEEPING | HELD_BIT)

static void acquire_common(uintptr_t instance, unsigned bit, struct lock_class *c, unsigned flags,
			   uintptr_t ip, bool irqs_on)
{
	struct task_lockdep *ld = &current->lockdep;

	if (ld->depth >= LOCKDEP_MAX_DEPTH) {
		lockdep_off();
		pr_err("lockdep: '%s' holds more than %u locks (LOCKDEP_MAX_DEPTH); the validator "
		       "stops\n",
		       current->name, LOCKDEP_MAX_DEPTH);
		return;
	}
	struct held_lock *hl = &ld->held[ld->depth];
	*hl = (struct held_lock){.instance = instance, .class = c, .ip = ip, .bit = (u8)bit};
	hl->flags = (u8)((flags & HELD_KEPT) | (in_interrupt() ? HELD_HARDIRQ : 0));
#ifdef GRACE_LOCKDEP
	if (c)
		lockdep_check_acquire(ld, hl, irqs_on);
	else
		lockdep_report_simple(
		    LOCKDEP_NO_CLASS, (void *)ip, NULL, ip,
		    "acquiring a lock without a class (%p): initialise it "
		    "(spin_lock_init(), an initializer, bit_spin_lock_set_class())",
		    (void *)instance);
#else
	(void)irqs_on;
#endif
	ld->depth++;
	if (flags & (LOCK_NOW | LOCK_WAITS)) {
		u64 now = arch_clock_ns();
		if (flags & LOCK_WAITS)
			hl->flags |= HELD_CONTENDED;
#ifdef GRACE_LOCKSTAT
		else if (c)
			lockstat_account_acquired(hl, now);
#endif
		hl->time_ns = now; /* the wait's start, or the hold's */
	}
}

void lock_acquire(struct lockdep_map *map, unsigned subclass, unsigned flags, uintptr_t ip)
{
	if (!ip)
		ip = (uintptr_t)__builtin_return_address(0);
	bool irqs_on = !arch_irqs_disabled();
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct lock_class *c = map_class(map, subclass, (u8)(flags & LOCK_SLEEPING));
		acquire_common((uintptr_t)map, 0, c, flags, ip, irqs_on);
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void bit_lock_acquire(const void *word, unsigned bit, unsigned flags, uintptr_t ip)
{
	if (!ip)
		ip = (uintptr_t)__builtin_return_address(0);
	bool irqs_on = !arch_irqs_disabled();
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		acquire_common((uintptr_t)word, bit, bit_class(word), flags | HELD_BIT, ip,
			       irqs_on);
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

static void contended_common(uintptr_t instance, unsigned bit)
{
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct held_lock *hl = lockdep_find_held(current, instance, bit);
		/* The first call of a wait marks its start (rwlocks call it on every retry). */
		if (hl && !(hl->flags & HELD_CONTENDED)) {
			hl->flags |= HELD_CONTENDED;
			hl->time_ns = arch_clock_ns();
		}
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void lock_contended(struct lockdep_map *map)
{
	contended_common((uintptr_t)map, 0);
}

static void acquired_common(uintptr_t instance, unsigned bit)
{
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct held_lock *hl = lockdep_find_held(current, instance, bit);
		if (hl) {
			u64 now = arch_clock_ns();
#ifdef GRACE_LOCKSTAT
			if (hl->class)
				lockstat_account_acquired(hl, now);
#endif
			hl->time_ns = now;
		}
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void lock_acquired(struct lockdep_map *map)
{
	acquired_common((uintptr_t)map, 0);
}

void bit_lock_acquired(const void *word, unsigned bit)
{
	acquired_common((uintptr_t)word, bit);
}

static void release_common(uintptr_t instance, unsigned bit, uintptr_t ip)
{
	bool irqs_on = !arch_irqs_disabled();
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct task_lockdep *ld = &current->lockdep;
		struct held_lock *hl = lockdep_find_held(current, instance, bit);
		if (hl) {
#ifdef GRACE_LOCKDEP
			if (irqs_on && !(hl->flags & HELD_HARDIRQ))
				lockdep_mark_held_irqs_on(ld);
#endif
#ifdef GRACE_LOCKSTAT
			if (hl->class)
				lockstat_account_released(hl, arch_clock_ns());
#endif
			held_remove(ld, hl);
		} else {
#ifdef GRACE_LOCKDEP
			lockdep_report_simple(LOCKDEP_UNLOCK_NOT_HELD, (void *)ip, NULL, ip,
					      "releasing a lock '%s' does not hold (%p)",
					      current->name, (void *)instance);
#endif
		}
		lockdep_leave();
	}
	(void)irqs_on;
	arch_irq_restore(irq);
}

void lock_release(struct lockdep_map *map, uintptr_t ip)
{
	release_common((uintptr_t)map, 0, ip ? ip : (uintptr_t)__builtin_return_address(0));
}

void bit_lock_release(const void *word, unsigned bit, uintptr_t ip)
{
	release_common((uintptr_t)word, bit, ip ? ip : (uintptr_t)__builtin_return_address(0));
}

/*
 * The context switch: __schedule() takes rq->lock as the thread switched away from,
 * finish_switch() releases it as the thread switched to. Interrupts are off from
 * one to the other, and both run on this CPU, so a per-CPU slot carries the entry.
 */
void lock_switch_out(struct lockdep_map *map)
{
	if (!lockdep_enter())
		return;
	struct held_lock *hl = lockdep_find_held(current, (uintptr_t)map, 0);
	struct held_lock *slot = this_cpu_ptr(&switch_handoff);
	slot->instance = 0;
	if (hl) {
		*slot = *hl;
		held_remove(&current->lockdep, hl);
	}
	lockdep_leave();
}

void lock_switch_in(struct lockdep_map *map)
{
	if (!lockdep_enter())
		return;
	struct held_lock *slot = this_cpu_ptr(&switch_handoff);
	struct task_lockdep *ld = &current->lockdep;
	if (slot->instance == (uintptr_t)map && ld->depth < LOCKDEP_MAX_DEPTH)
		ld->held[ld->depth++] = *slot;
	slot->instance = 0;
	lockdep_leave();
}

void lock_assert_held(const struct lockdep_map *map, uintptr_t ip)
{
#ifdef GRACE_LOCKDEP
	if (!ip)
		ip = (uintptr_t)__builtin_return_address(0);
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		if (!lockdep_find_held(current, (uintptr_t)map, 0)) {
			const char *name = map->name && map->name[0] ? map->name
					   : map->key		     ? (const char *)map->key + 1
								     : "?";
			lockdep_report_simple(
			    LOCKDEP_NOT_HELD, (void *)ip, NULL, ip,
			    "lockdep_assert_held(%s) failed: '%s' does not hold it", name,
			    current->name);
		}
		lockdep_leave();
	}
	arch_irq_restore(irq);
#else
	(void)map;
	(void)ip;
#endif
}

void lockdep_hardirqs_restored(void)
{
#ifdef GRACE_LOCKDEP
	if (arch_irqs_disabled() || !current->lockdep.depth)
		return;
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		lockdep_mark_held_irqs_on(&current->lockdep);
		lockdep_leave();
	}
	arch_irq_restore(irq);
#endif
}

#ifdef GRACE_LOCKDEP
/* ---- the events that are not lock operations ---- */

static void report_held_kind(enum lockdep_problem_kind kind, uintptr_t ip, const char *what)
{
	struct task_lockdep *ld = &current->lockdep;
	uintptr_t first = ld->depth ? ld->held[0].ip : ip;
	lockdep_report_simple(kind, (void *)first, NULL, ip, "%s: '%s' holds %u lock%s", what,
			      current->name, ld->depth, ld->depth == 1 ? "" : "s");
}

/* The first spinning (not sleeping) lock held, or NULL. */
static struct held_lock *held_spinning(struct task_lockdep *ld)
{
	for (unsigned i = 0; i < ld->depth; i++)
		if (ld->held[i].class && !(ld->held[i].flags & LOCK_SLEEPING))
			return &ld->held[i];
	return NULL;
}

void lockdep_might_sleep(uintptr_t ip)
{
	if (!ip)
		ip = (uintptr_t)__builtin_return_address(0);
	bool irqs_off = arch_irqs_disabled();
	unsigned long irq = arch_irq_save();
	if (!lockdep_enter()) {
		arch_irq_restore(irq);
		return;
	}
	struct task_lockdep *ld = &current->lockdep;
	struct held_lock *spin = held_spinning(ld);
	if (in_interrupt())
		lockdep_report_simple(LOCKDEP_SLEEP_IN_IRQ, (void *)ip, NULL, ip,
				      "a function that may sleep called in an interrupt handler");
	else if (spin)
		lockdep_report_simple(LOCKDEP_SLEEP_UNDER_SPINLOCK, (void *)ip, NULL, ip,
				      "a function that may sleep called by '%s' holding the "
				      "spinning lock %s",
				      current->name, lock_class_name(spin->class));
	else if (ld->rcu_depth)
		lockdep_report_simple(LOCKDEP_SLEEP_IN_RCU, (void *)ip, NULL, ip,
				      "a function that may sleep called by '%s' inside an RCU "
				      "read-side critical section (rcu_read_lock() depth %u)",
				      current->name, ld->rcu_depth);
	else if (irqs_off && !(current->flags & TASK_IDLE) && current != &boot_task)
		lockdep_report_simple(
		    LOCKDEP_SLEEP_IRQS_OFF, (void *)ip, NULL, ip,
		    "a function that may sleep called by '%s' with interrupts off", current->name);
	lockdep_leave();
	arch_irq_restore(irq);
}

void lockdep_sched_check(void)
{
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct task_lockdep *ld = &current->lockdep;
		uintptr_t ip = (uintptr_t)__builtin_return_address(0);
		if (held_spinning(ld))
			report_held_kind(LOCKDEP_LOCKS_AT_SCHEDULE, ip,
					 "schedule() with a spinning lock held");
		else if (ld->rcu_depth)
			lockdep_report_simple(LOCKDEP_SLEEP_IN_RCU, (void *)ip, NULL, ip,
					      "schedule() by '%s' inside an RCU read-side "
					      "critical section",
					      current->name);
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void lockdep_exit_check(void)
{
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		struct task_lockdep *ld = &current->lockdep;
		if (ld->depth)
			report_held_kind(LOCKDEP_LOCKS_AT_EXIT,
					 (uintptr_t)__builtin_return_address(0),
					 "a thread exits holding locks");
		ld->depth = 0; /* they are no one's now */
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void lockdep_rcu_read_lock(void)
{
	current->lockdep.rcu_depth++;
}

void lockdep_rcu_read_unlock(void)
{
	struct task_lockdep *ld = &current->lockdep;
	if (likely(ld->rcu_depth)) {
		ld->rcu_depth--;
		return;
	}
	uintptr_t ip = (uintptr_t)__builtin_return_address(0);
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		lockdep_report_simple(LOCKDEP_RCU_UNBALANCED, (void *)ip, NULL, ip,
				      "rcu_read_unlock() by '%s' outside rcu_read_lock()",
				      current->name);
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

void lockdep_softirq_enter(void)
{
	current->lockdep.in_softirq = 1;
}

void lockdep_softirq_exit(void)
{
	struct task_lockdep *ld = &current->lockdep;
	ld->in_softirq = 0;
	if (likely(!ld->depth))
		return;
	unsigned long irq = arch_irq_save();
	if (lockdep_enter()) {
		report_held_kind(LOCKDEP_LOCKS_AT_SOFTIRQ_EXIT, ld->held[0].ip,
				 "a softirq handler returned holding locks");
		lockdep_leave();
	}
	arch_irq_restore(irq);
}

/* The held-lock depth at each interrupt's entry, by nesting level (this CPU's). */
#define LOCKDEP_IRQ_NESTING 4
static DEFINE_PER_CPU(u16[LOCKDEP_IRQ_NESTING], irq_entry_depth);
static DEFINE_PER_CPU(u32, irq_nesting);

void lockdep_hardirq_enter(void)
{
	u32 n = this_cpu(irq_nesting)++;
	if (n < LOCKDEP_IRQ_NESTING)
		this_cpu(irq_entry_depth)[n] = current->lockdep.depth;
}

void lockdep_hardirq_exit(void)
{
	u32 n = --this_cpu(irq_nesting);
	struct task_lockdep *ld = &current->lockdep;
	if (n >= LOCKDEP_IRQ_NESTING || ld->depth <= this_cpu(irq_entry_depth)[n])
		return;
	if (lockdep_enter()) {
		struct held_lock *hl = &ld->held[this_cpu(irq_entry_depth)[n]];
		lockdep_report_simple(LOCKDEP_LOCKS_AT_IRQ_EXIT, (void *)hl->ip, NULL, hl->ip,
				      "an interrupt handler returned holding %s",
				      hl->class ? lock_class_name(hl->class) : "a lock");
		lockdep_leave();
	}
}
#endif /* GRACE_LOCKDEP */

#endif /* GRACE_LOCK_CLASSES */

/*
 * Per-CPU timers (grace/timer.h).
 *
 * Each CPU has a timer_base: its pending timers in a pairing heap ordered by
 * expires, under the base's ticket spinlock, taken irqsave. Why a pairing heap:
 * it is intrusive (the links live in struct timer), so adding a timer never
 * allocates and cannot fail, from any context, with any number of timers; it is
 * exact (a timer fires at its own deadline, not at a wheel bucket's); and the
 * earliest deadline, which is what the hardware is armed for and all a tickless
 * idle CPU needs, is the root. Insert is O(1); removing the root or any timer is
 * O(log n) amortized. A hierarchical wheel would make cancel O(1) too, but rounds
 * deadlines to buckets and needs a scan to find the next event.
 *
 * The hardware timer is armed only by its own CPU (arch_timer_arm is local), for
 * the root of its heap. A CPU that makes another CPU's root earlier than what that
 * CPU armed sets the target's kick flag and sends an IPI; timer_ipi() there
 * re-arms. That works from interrupt context too (smp_call does not).
 *
 * base->running names the timer whose fn this CPU is running (compared, never
 * dereferenced: fn may free its timer, so nothing here touches a timer after its
 * fn returned). A timer never changes CPU while its fn runs: timer_add_on() to
 * another CPU in that window only records the move (base->migrate), done when fn
 * returns. So under its base's lock, "not pending and not base->running" means
 * fn is not running anywhere, which is what timer_cancel_sync() waits for, and a
 * timer never runs on two CPUs at once.
 *
 * Lock order: docs/locking.md. Two bases' locks are held together only to move a
 * timer between CPUs, the lower CPU's first. fn runs with no lock held.
 */
#include <grace/arch.h>
#include <grace/cpumask.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <grace/timer.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "timer_internal.h"

enum { TIMER_IDLE, TIMER_QUEUED, TIMER_MIGRATING };

/*
 * Expired timers run per interrupt at most: bounds the time with interrupts off
 * when thousands expire at once, and stops a fn that keeps re-adding its timer
 * with a past deadline from holding the CPU in one interrupt; the rest run in
 * the next one, which follows at once (the hardware is armed for the past).
 */
#define TIMER_BATCH_MAX 256

struct timer_base {
	spinlock_t lock;       /* protects what is marked "under lock", its timers' links, state */
	struct timer *root;    /* pending timers, earliest first; under lock */
	struct timer *running; /* whose fn this CPU runs now; under lock */
	struct timer *migrate; /* running timer added to another CPU meanwhile; under lock */
	u32 migrate_cpu;       /* where migrate goes; under lock */
	bool in_irq;	       /* timer_interrupt() re-arms before it returns; under lock */
	bool kick;	       /* another CPU made the root earlier than armed; under lock */
	u64 armed;	       /* deadline the hardware holds (U64_MAX: none); under lock */
	u64 fired;	       /* timer interrupts taken; this CPU only */
	struct regs *irq_regs; /* the interrupted context, during timer_interrupt(); this CPU */
};

static DEFINE_PER_CPU_ALIGNED(struct timer_base, timer_bases) = {
    .lock = SPINLOCK_INIT,
    .armed = UINT64_MAX,
};

/* ---- the pairing heap; every function here runs under the base's lock ---- */

/* Meld two heap roots (prev and next NULL); the earlier becomes the other's first child. */
static struct timer *heap_link(struct timer *a, struct timer *b)
{
	if (b->expires < a->expires) {
		struct timer *tmp = a;
		a = b;
		b = tmp;
	}
	/* prev is the parent for a first child, the left sibling otherwise. */
	b->prev = a;
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/*
 * Meld a list of sibling subtrees into one heap by the two-pass rule (pair them
 * left to right, then meld the pairs right to left), which gives the amortized
 * O(log n). Iterative: a root may have thousands of children.
 */
static struct timer *heap_merge_pairs(struct timer *first)
{
	struct timer *pairs = NULL, *root = NULL;

	while (first) {
		struct timer *a = first, *b = a->next;
		first = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b) {
			b->next = b->prev = NULL;
			a = heap_link(a, b);
		}
		a->next = pairs; /* a stack, so the second pass goes right to left */
		pairs = a;
	}
	while (pairs) {
		struct timer *next = pairs->next;
		pairs->next = NULL;
		root = root ? heap_link(root, pairs) : pairs;
		pairs = next;
	}
	return root;
}

static void heap_insert(struct timer_base *base, struct timer *t)
{
	lockdep_assert_held(&base->lock);
	t->child = t->next = t->prev = NULL;
	base->root = base->root ? heap_link(base->root, t) : t;
}

static void heap_remove(struct timer_base *base, struct timer *t)
{
	lockdep_assert_held(&base->lock);
	struct timer *sub = heap_merge_pairs(t->child);

	if (t == base->root) {
		base->root = sub;
	} else {
		if (t->prev->child == t)
			t->prev->child = t->next;
		else
			t->prev->next = t->next;
		if (t->next)
			t->next->prev = t->prev;
		if (sub)
			base->root = heap_link(base->root, sub);
	}
	t->child = t->next = t->prev = NULL;
}

/* ---- arming the hardware ---- */

/* This CPU's base, interrupts off: arm the hardware for the root. */
static void timer_program_locked(struct timer_base *base)
{
	lockdep_assert_held(&base->lock);
	u64 next = base->root ? base->root->expires : UINT64_MAX;

	base->kick = false; /* whatever another CPU queued is in the heap now */
	if (next != base->armed) {
		base->armed = next;
		arch_timer_arm(next);
	}
}

/*
 * After a change to cpu's heap: re-arm if it is this CPU's; if another's, true when
 * that CPU must be sent an IPI (its root is now earlier than what it armed).
 */
static bool timer_update_locked(struct timer_base *base, unsigned cpu)
{
	lockdep_assert_held(&base->lock);
	if (cpu == smp_processor_id()) {
		if (!base->in_irq)
			timer_program_locked(base);
		return false;
	}
	if (!base->root || base->root->expires >= base->armed || base->kick || base->in_irq)
		return false;
	base->kick = true;
	return true;
}

static void timer_kick(unsigned cpu)
{
	struct cpumask mask;
	cpumask_clear(&mask);
	cpumask_set_cpu(&mask, cpu);
	/* arch_send_ipi() makes our stores (kick, the heap) visible before the IPI. */
	arch_send_ipi(&mask);
}

void timer_ipi(void)
{
	struct timer_base *base = this_cpu_ptr(&timer_bases);

	if (!READ_ONCE(base->kick))
		return;
	unsigned long flags = spin_lock_irqsave(&base->lock);
	if (!base->in_irq)
		timer_program_locked(base);
	spin_unlock_irqrestore(&base->lock, flags);
}

void timer_rearm_this_cpu(void)
{
	struct timer_base *base = this_cpu_ptr(&timer_bases);
	unsigned long flags = spin_lock_irqsave(&base->lock);
	arch_timer_arm(base->armed);
	spin_unlock_irqrestore(&base->lock, flags);
}

/* ---- the API ---- */

void timer_init(struct timer *t, void (*fn)(struct timer *t))
{
	*t = (struct timer)TIMER_INITIALIZER(fn);
}

bool timer_pending(const struct timer *t)
{
	return READ_ONCE(t->state) != TIMER_IDLE;
}

/* Lock the base t belongs to (t->cpu is stable while it is held); NULL if never added. */
static struct timer_base *timer_lock_base(struct timer *t, unsigned long *flags)
{
	for (;;) {
		u32 cpu = READ_ONCE(t->cpu);
		if (cpu == TIMER_NO_CPU)
			return NULL;
		struct timer_base *base = &per_cpu(timer_bases, cpu);
		*flags = spin_lock_irqsave(&base->lock);
		if (READ_ONCE(t->cpu) == cpu)
			return base;
		spin_unlock_irqrestore(&base->lock, *flags); /* it moved meanwhile */
	}
}

/* Take t off its base (heap or pending move); true if it was pending. */
static bool timer_detach_locked(struct timer_base *base, struct timer *t)
{
	lockdep_assert_held(&base->lock);
	switch (t->state) {
	case TIMER_QUEUED:
		heap_remove(base, t);
		break;
	case TIMER_MIGRATING:
		base->migrate = NULL;
		break;
	default:
		return false;
	}
	WRITE_ONCE(t->state, TIMER_IDLE);
	return true;
}

/* Queue t on cpu's heap, cpu's lock held; true if cpu needs an IPI. */
static bool timer_enqueue_locked(struct timer_base *base, unsigned cpu, struct timer *t,
				 u64 expires)
{
	lockdep_assert_held(&base->lock);
	t->expires = expires;
	WRITE_ONCE(t->state, TIMER_QUEUED);
	heap_insert(base, t);
	return timer_update_locked(base, cpu);
}

/*
 * Lock the bases of from and to (irqs saved in *flags), the lower CPU first: two
 * locks of one class in a fixed order, nested for the validator.
 */
static void timer_lock_two(unsigned from, unsigned to, unsigned long *flags)
{
	*flags = arch_irq_save();
	spin_lock(&per_cpu(timer_bases, MIN(from, to)).lock);
	if (from != to)
		spin_lock_nested(&per_cpu(timer_bases, MAX(from, to)).lock, SINGLE_DEPTH_NESTING);
}

static void timer_unlock_two(unsigned from, unsigned to, unsigned long flags)
{
	if (from != to)
		spin_unlock(&per_cpu(timer_bases, MAX(from, to)).lock);
	spin_unlock(&per_cpu(timer_bases, MIN(from, to)).lock);
	arch_irq_restore(flags);
}

/* Queue t on cpu, taking it off wherever it was pending first; true if it was. */
static bool timer_queue(struct timer *t, u64 expires, unsigned cpu)
{
	struct timer_base *to = &per_cpu(timer_bases, cpu);
	unsigned long flags;
	u32 from;

	for (;;) {
		from = READ_ONCE(t->cpu);
		if (from == TIMER_NO_CPU)
			from = cpu; /* never added: nothing to take it off */
		timer_lock_two(from, cpu, &flags);
		u32 now_on = READ_ONCE(t->cpu);
		if (now_on == from || (now_on == TIMER_NO_CPU && from == cpu))
			break;
		timer_unlock_two(from, cpu, flags); /* it moved meanwhile */
	}

	struct timer_base *old = &per_cpu(timer_bases, from);
	bool was_pending = timer_detach_locked(old, t), kick = false;
	if (from != cpu && old->running == t) {
		/* Its fn runs on from: move it when fn returns (see the file comment). */
		t->expires = expires;
		WRITE_ONCE(t->state, TIMER_MIGRATING);
		old->migrate = t;
		old->migrate_cpu = cpu;
	} else {
		WRITE_ONCE(t->cpu, cpu);
		kick = timer_enqueue_locked(to, cpu, t, expires);
	}
	timer_unlock_two(from, cpu, flags);
	if (kick)
		timer_kick(cpu);
	return was_pending;
}

void timer_add_on(struct timer *t, u64 expires_ns, unsigned cpu)
{
	unsigned long flags = arch_irq_save();
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(&cpu_online_mask, cpu)) {
		pr_warn("timer: %p added on CPU %u, which is not online; queued on CPU %u\n",
			(void *)t->fn, cpu, smp_processor_id());
		cpu = smp_processor_id();
	}
	timer_queue(t, expires_ns, cpu);
	arch_irq_restore(flags);
}

void timer_add(struct timer *t, u64 expires_ns)
{
	unsigned long flags = arch_irq_save();
	timer_queue(t, expires_ns, smp_processor_id());
	arch_irq_restore(flags);
}

bool timer_modify(struct timer *t, u64 expires_ns)
{
	unsigned long flags;
	struct timer_base *base = timer_lock_base(t, &flags);

	if (!base) {
		timer_add(t, expires_ns); /* never added: its CPU is this one */
		return false;
	}
	unsigned cpu = t->cpu;
	bool was_pending = t->state != TIMER_IDLE, kick = false;
	if (t->state == TIMER_MIGRATING) {
		t->expires = expires_ns; /* still bound for base->migrate_cpu */
	} else {
		if (was_pending)
			heap_remove(base, t);
		kick = timer_enqueue_locked(base, cpu, t, expires_ns);
	}
	spin_unlock_irqrestore(&base->lock, flags);
	if (kick)
		timer_kick(cpu);
	return was_pending;
}

bool timer_cancel(struct timer *t)
{
	unsigned long flags;
	struct timer_base *base = timer_lock_base(t, &flags);

	if (!base)
		return false;
	bool was_pending = timer_detach_locked(base, t);
	/* A remote CPU keeps its hardware armed: one early interrupt, which just re-arms. */
	if (was_pending)
		timer_update_locked(base, t->cpu);
	spin_unlock_irqrestore(&base->lock, flags);
	return was_pending;
}

bool timer_cancel_sync(struct timer *t)
{
	bool was_pending = false;

	for (;;) {
		unsigned long flags;
		struct timer_base *base = timer_lock_base(t, &flags);
		if (!base)
			return was_pending;
		/* Cancel every round: fn may have re-added t while we waited. */
		if (timer_detach_locked(base, t)) {
			was_pending = true;
			timer_update_locked(base, t->cpu);
		}
		bool running = base->running == t;
		bool own_fn = running && base == this_cpu_ptr(&timer_bases);
		spin_unlock_irqrestore(&base->lock, flags);
		if (!running)
			return was_pending;
		if (own_fn) {
			/* Waiting for ourselves never ends; t is not touched after fn returns. */
			pr_warn("timer: timer_cancel_sync() from its own fn %p\n", (void *)t->fn);
			return was_pending;
		}
		cpu_relax();
	}
}

/*
 * fn of base->running returned having added its timer on another CPU: move it there
 * now. Called without base's lock; base->running still names the timer, so it
 * cannot have been freed.
 */
static void timer_finish_migrate(struct timer_base *base, unsigned self)
{
	for (;;) {
		unsigned long flags = spin_lock_irqsave(&base->lock);
		struct timer *t = base->migrate;
		u32 cpu = base->migrate_cpu;
		spin_unlock_irqrestore(&base->lock, flags);
		if (!t)
			return; /* cancelled, or re-added here, meanwhile */

		timer_lock_two(self, cpu, &flags);
		bool kick = false, done = base->migrate == t && base->migrate_cpu == cpu;
		if (done) {
			base->migrate = NULL;
			WRITE_ONCE(t->cpu, cpu);
			kick = timer_enqueue_locked(&per_cpu(timer_bases, cpu), cpu, t, t->expires);
		}
		timer_unlock_two(self, cpu, flags);
		if (kick)
			timer_kick(cpu);
		if (done)
			return;
	}
}

/* ---- the interrupt ---- */

u64 timer_interrupts(unsigned cpu)
{
	return READ_ONCE(per_cpu(timer_bases, cpu).fired);
}

struct regs *timer_irq_regs(void)
{
	return this_cpu(timer_bases).irq_regs;
}

void timer_interrupt(struct regs *regs)
{
	struct timer_base *base = this_cpu_ptr(&timer_bases);
	unsigned self = smp_processor_id();
	struct timer *t;

	WRITE_ONCE(base->fired, base->fired + 1);
	base->irq_regs = regs;

	spin_lock(&base->lock);
	base->armed = UINT64_MAX; /* one-shot: the hardware is disarmed once it fired */
	base->in_irq = true;	  /* adds meanwhile need no re-arm or IPI: done below */
	/* One clock reading: every timer run has expires <= now <= the clock in its fn. */
	u64 now = arch_clock_ns();
	for (unsigned n = 0; n < TIMER_BATCH_MAX && (t = base->root) && t->expires <= now; n++) {
		void (*fn)(struct timer *) = t->fn;
		heap_remove(base, t);
		WRITE_ONCE(t->state, TIMER_IDLE);
		base->running = t;
		spin_unlock(&base->lock);

		fn(t); /* may re-add, modify, cancel or free t */

		spin_lock(&base->lock);
		if (base->migrate) {
			spin_unlock(&base->lock);
			timer_finish_migrate(base, self);
			spin_lock(&base->lock);
		}
		base->running = NULL;
	}
	base->in_irq = false;
	/* Also covers an interrupt that came early: nothing expired, re-arm for the root. */
	timer_program_locked(base);
	spin_unlock(&base->lock);
	base->irq_regs = NULL;
}

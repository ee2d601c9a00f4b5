/*
 * Lock validator selftests (LOCKDEP=1; each skips in other builds). Each provokes
 * one problem on purpose, on lock classes of its own, in a way that never
 * deadlocks or sleeps (the two orders of an ABBA run one after the other; a mutex
 * "slept on" under a spinlock is free): it announces the report (every report
 * line starts "lockdep: "), then checks that the report of that kind came, naming
 * its classes. Since a problem is reported once per boot, each test first makes the
 * validator forget what it reported, so a rerun (tests/shell/rerun.txt) sees its
 * report again. Negative controls show what must not be reported: two locks of a
 * class with a nesting annotation, classes set apart with lock_set_class(), and a
 * spinlock shared with a softirq handler (harmless in Grace, where softirqs run in
 * threads: docs/locking.md).
 */
#include <grace/bit_spinlock.h>
#include <grace/kthread.h>
#include <grace/lockdep.h>
#include <grace/mutex.h>
#include <grace/rcupdate.h>
#include <grace/rwlock.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <grace/wait.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#include <kernel/locking/lockdep_internal.h>

#define NEEDS_LOCKDEP "needs LOCKDEP=1 (the lock validator)"

#ifdef GRACE_LOCKDEP

/* How long a helper context (a timer, softirqd, another CPU's thread) may take to run. */
#define LOCKDEP_TEST_WAIT_NS (5 * NSEC_PER_SEC)

/* The validator reports start so: the runner excuses such lines while the test runs. */
#define REPORT_TEXT "lockdep: "

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The last report of kind is about classes a and b (b NULL: not checked). */
static bool last_is(enum lockdep_problem_kind kind, const char *a, const char *b)
{
	struct lockdep_problem p;
	if (!EXPECT_TRUE(lockdep_last_problem(kind, &p)))
		return false;
	bool ok = streq(p.a, a) && (!b || streq(p.b, b));
	if (!ok)
		test_fail(__FILE__, __LINE__, "last report names %s and %s, expected %s and %s",
			  p.a ? p.a : "-", p.b ? p.b : "-", a, b ? b : "-");
	return ok;
}

/* ---- running a function elsewhere: another CPU's thread, a hard interrupt, softirqd ---- */

struct elsewhere {
	void (*fn)(void);
	u32 done;
};

static int elsewhere_thread(void *arg)
{
	struct elsewhere *e = arg;
	e->fn();
	return 0;
}

/* fn in a thread on another CPU than this one (this one if it is alone), to its end. */
static void run_on_other_cpu(void (*fn)(void))
{
	static struct elsewhere e;
	unsigned self = smp_processor_id(), cpu = self, c;
	for_each_online_cpu(c)
		if (c != self) {
			cpu = c;
			break;
		}
	e = (struct elsewhere){.fn = fn};
	struct task *t = kthread_create_on_cpu(elsewhere_thread, &e, cpu, "lockdep_test");
	if (!EXPECT_TRUE(t != NULL))
		return;
	wake_up_process(t);
	kthread_join(t);
}

static bool wait_done(u32 *done)
{
	u64 end = arch_clock_ns() + LOCKDEP_TEST_WAIT_NS;
	/* Pairs with the smp_store_release() of done in the helper. */
	while (!smp_load_acquire(done) && arch_clock_ns() < end)
		msleep(1);
	return EXPECT_TRUE(smp_load_acquire(done));
}

static struct elsewhere in_irq;

static void irq_timer_fn(struct timer *t)
{
	(void)t;
	in_irq.fn();
	smp_store_release(&in_irq.done, 1);
}

/* fn in a hard interrupt handler (a timer's) on this CPU. */
static void run_in_hardirq(void (*fn)(void))
{
	static struct timer timer;
	in_irq = (struct elsewhere){.fn = fn};
	timer_init(&timer, irq_timer_fn);
	timer_add(&timer, arch_clock_ns());
	wait_done(&in_irq.done);
	timer_cancel_sync(&timer);
}

static struct elsewhere in_softirq;

static void softirq_fn(void)
{
	in_softirq.fn();
	smp_store_release(&in_softirq.done, 1);
}

/* fn in a softirq handler (softirqd on this CPU). */
static void run_in_softirq(void (*fn)(void))
{
	in_softirq = (struct elsewhere){.fn = fn};
	open_softirq(SOFTIRQ_SELFTEST, softirq_fn);
	raise_softirq(SOFTIRQ_SELFTEST);
	wait_done(&in_softirq.done);
}

/* ---- ABBA ---- */

static DEFINE_SPINLOCK(ld_abba_a);
static DEFINE_SPINLOCK(ld_abba_b);

static void abba_b_then_a(void)
{
	spin_lock(&ld_abba_b);
	spin_lock(&ld_abba_a); /* the report: ld_abba_a -> ld_abba_b exists */
	spin_unlock(&ld_abba_a);
	spin_unlock(&ld_abba_b);
}
#endif /* GRACE_LOCKDEP */

TEST(lockdep, abba_on_two_cpus_is_reported_though_it_never_deadlocked)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	u64 before = lockdep_problem_count(LOCKDEP_CIRCULAR);
	/* A then B here; B then A on another CPU, after: never at the same time. */
	spin_lock(&ld_abba_a);
	spin_lock(&ld_abba_b);
	spin_unlock(&ld_abba_b);
	spin_unlock(&ld_abba_a);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before);
	run_on_other_cpu(abba_b_then_a);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before + 1);
	/* The new dependency's classes: held, then taken. */
	last_is(LOCKDEP_CIRCULAR, "ld_abba_b", "ld_abba_a");
	/* Once per problem: the same orders again say nothing more. */
	run_on_other_cpu(abba_b_then_a);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before + 1);
#endif
}

#ifdef GRACE_LOCKDEP
static DEFINE_RWLOCK(ld_rw);
static DEFINE_SPINLOCK(ld_rw_spin);
static DEFINE_MUTEX(ld_mutex_a);
static DEFINE_MUTEX(ld_mutex_b);
static unsigned long ld_bit_a, ld_bit_b;
static struct lock_class_key ld_bit_a_key, ld_bit_b_key;
#endif

TEST(lockdep, rwlock_mutex_and_bit_lock_cycles_are_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	u64 before = lockdep_problem_count(LOCKDEP_CIRCULAR);

	/*
	 * Readers too: Grace's rwlock holds new readers back behind a waiting writer, so
	 * read(A) -> B on one CPU and B -> read(A) on another deadlock once a third
	 * waits to write A.
	 */
	read_lock(&ld_rw);
	spin_lock(&ld_rw_spin);
	spin_unlock(&ld_rw_spin);
	read_unlock(&ld_rw);
	spin_lock(&ld_rw_spin);
	read_lock(&ld_rw);
	read_unlock(&ld_rw);
	spin_unlock(&ld_rw_spin);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before + 1);
	last_is(LOCKDEP_CIRCULAR, "ld_rw_spin", "ld_rw");

	mutex_lock(&ld_mutex_a);
	mutex_lock(&ld_mutex_b);
	mutex_unlock(&ld_mutex_b);
	mutex_unlock(&ld_mutex_a);
	mutex_lock(&ld_mutex_b);
	mutex_lock(&ld_mutex_a);
	mutex_unlock(&ld_mutex_a);
	mutex_unlock(&ld_mutex_b);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before + 2);
	last_is(LOCKDEP_CIRCULAR, "ld_mutex_b", "ld_mutex_a");

	/* Bit locks are of their word's class. */
	bit_spin_lock_set_class(&ld_bit_a, sizeof(ld_bit_a), &ld_bit_a_key, "ld_bit_a");
	bit_spin_lock_set_class(&ld_bit_b, sizeof(ld_bit_b), &ld_bit_b_key, "ld_bit_b");
	bit_spin_lock(0, &ld_bit_a);
	bit_spin_lock(0, &ld_bit_b);
	bit_spin_unlock(0, &ld_bit_b);
	bit_spin_unlock(0, &ld_bit_a);
	bit_spin_lock(0, &ld_bit_b);
	bit_spin_lock(0, &ld_bit_a);
	bit_spin_unlock(0, &ld_bit_a);
	bit_spin_unlock(0, &ld_bit_b);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_CIRCULAR), before + 3);
	last_is(LOCKDEP_CIRCULAR, "ld_bit_b", "ld_bit_a");
#endif
}

#ifdef GRACE_LOCKDEP
static spinlock_t ld_pair[2];
static struct mutex ld_mutex_pair[2];
static spinlock_t ld_apart[2];
static struct lock_class_key ld_apart_key;
#endif

TEST(lockdep, two_locks_of_a_class_need_the_nesting_annotation)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	/* One init site, so one class (an array of buckets is initialised this way). */
	for (unsigned i = 0; i < ARRAY_SIZE(ld_pair); i++)
		spin_lock_init(&ld_pair[i]);
	ASSERT_TRUE(lockdep_map_class(&ld_pair[0].dep_map) ==
		    lockdep_map_class(&ld_pair[1].dep_map));
	lockdep_forget_problems();
	u64 before = lockdep_problem_count(LOCKDEP_RECURSIVE);

	/* Annotated: the second is subclass 1, a class of its own to the validator. */
	spin_lock(&ld_pair[0]);
	spin_lock_nested(&ld_pair[1], SINGLE_DEPTH_NESTING);
	spin_unlock(&ld_pair[1]);
	spin_unlock(&ld_pair[0]);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_RECURSIVE), before);

	/* Not annotated: as good as taking one lock twice. */
	test_expect_message(REPORT_TEXT);
	spin_lock(&ld_pair[0]);
	spin_lock(&ld_pair[1]);
	spin_unlock(&ld_pair[1]);
	spin_unlock(&ld_pair[0]);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_RECURSIVE), before + 1);
	last_is(LOCKDEP_RECURSIVE, "&ld_pair[i]", NULL);
#endif
}

TEST(lockdep, two_mutexes_of_a_class_need_the_nesting_annotation)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	/* One init site, so one class (a parent directory's mutex and its child's). */
	for (unsigned i = 0; i < ARRAY_SIZE(ld_mutex_pair); i++)
		mutex_init(&ld_mutex_pair[i]);
	lockdep_forget_problems();
	u64 before = lockdep_problem_count(LOCKDEP_RECURSIVE);

	mutex_lock(&ld_mutex_pair[0]);
	mutex_lock_nested(&ld_mutex_pair[1], SINGLE_DEPTH_NESTING);
	mutex_unlock(&ld_mutex_pair[1]);
	mutex_unlock(&ld_mutex_pair[0]);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_RECURSIVE), before);

	/* The control: without the annotation, the second is the first taken twice. */
	test_expect_message(REPORT_TEXT);
	mutex_lock(&ld_mutex_pair[0]);
	mutex_lock(&ld_mutex_pair[1]);
	mutex_unlock(&ld_mutex_pair[1]);
	mutex_unlock(&ld_mutex_pair[0]);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_RECURSIVE), before + 1);
	last_is(LOCKDEP_RECURSIVE, "&ld_mutex_pair[i]", NULL);
#endif
}

TEST(lockdep, lock_set_class_gives_a_lock_a_class_of_its_own)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	for (unsigned i = 0; i < ARRAY_SIZE(ld_apart); i++)
		spin_lock_init(&ld_apart[i]);
	lock_set_class(&ld_apart[1], &ld_apart_key, "ld_apart[1]");
	struct lock_class *c0 = lockdep_map_class(&ld_apart[0].dep_map);
	struct lock_class *c1 = lockdep_map_class(&ld_apart[1].dep_map);
	ASSERT_TRUE(c0 && c1);
	EXPECT_TRUE(c0 != c1);
	EXPECT_TRUE(streq(lock_class_name(c0), "&ld_apart[i]"));
	EXPECT_TRUE(streq(lock_class_name(c1), "ld_apart[1]"));
	u64 before = lockdep_problem_count(LOCKDEP_RECURSIVE);
	spin_lock(&ld_apart[0]);
	spin_lock(&ld_apart[1]);
	spin_unlock(&ld_apart[1]);
	spin_unlock(&ld_apart[0]);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_RECURSIVE), before);
#endif
}

/* ---- interrupts ---- */

#ifdef GRACE_LOCKDEP
static DEFINE_SPINLOCK(ld_irq_safe);
static DEFINE_SPINLOCK(ld_irq_unsafe);
static DEFINE_SPINLOCK(ld_irq_mixed);

static void take_irq_safe(void)
{
	spin_lock(&ld_irq_safe);
	spin_unlock(&ld_irq_safe);
}

static void take_irq_mixed(void)
{
	spin_lock(&ld_irq_mixed);
	spin_unlock(&ld_irq_mixed);
}
#endif

TEST(lockdep, irq_safe_lock_before_an_irq_unsafe_one_is_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	/* ld_irq_unsafe held with interrupts on; ld_irq_safe taken in an interrupt. */
	spin_lock(&ld_irq_unsafe);
	spin_unlock(&ld_irq_unsafe);
	run_in_hardirq(take_irq_safe);
	u64 before = lockdep_problem_count(LOCKDEP_HARDIRQ_INVERSION);

	/* Then ld_irq_safe -> ld_irq_unsafe, interrupts off, never at the same time as the rest. */
	test_expect_message(REPORT_TEXT);
	unsigned long flags = spin_lock_irqsave(&ld_irq_safe);
	spin_lock(&ld_irq_unsafe);
	spin_unlock(&ld_irq_unsafe);
	spin_unlock_irqrestore(&ld_irq_safe, flags);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_HARDIRQ_INVERSION), before + 1);
	last_is(LOCKDEP_HARDIRQ_INVERSION, "ld_irq_safe", "ld_irq_unsafe");
#endif
}

TEST(lockdep, lock_taken_in_an_interrupt_and_with_interrupts_on_is_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	run_in_hardirq(take_irq_mixed);
	u64 before = lockdep_problem_count(LOCKDEP_INCONSISTENT_HARDIRQ);
	test_expect_message(REPORT_TEXT);
	spin_lock(&ld_irq_mixed); /* interrupts on: the timer could have come now */
	spin_unlock(&ld_irq_mixed);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_INCONSISTENT_HARDIRQ), before + 1);
	last_is(LOCKDEP_INCONSISTENT_HARDIRQ, "ld_irq_mixed", "ld_irq_mixed");
#endif
}

#ifdef GRACE_LOCKDEP
static DEFINE_SPINLOCK(ld_irq_outer);
static DEFINE_SPINLOCK(ld_irq_across);

static void take_irq_across(void)
{
	spin_lock(&ld_irq_across);
	spin_unlock(&ld_irq_across);
}
#endif

TEST(lockdep, lock_held_across_an_irqrestore_is_reported_as_interrupts_come_on)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	run_in_hardirq(take_irq_across); /* ld_irq_across: HARDIRQ-safe */
	u64 before = lockdep_problem_count(LOCKDEP_INCONSISTENT_HARDIRQ);
	test_expect_message(REPORT_TEXT);
	/* Taken with interrupts off: so far as an interrupt handler's lock should be. */
	unsigned long flags = spin_lock_irqsave(&ld_irq_outer);
	spin_lock(&ld_irq_across);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_INCONSISTENT_HARDIRQ), before);
	/*
	 * The outer lock's irqrestore turns interrupts on with ld_irq_across still held:
	 * the report comes now, where the window opens, not at the later release.
	 */
	spin_unlock_irqrestore(&ld_irq_outer, flags);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_INCONSISTENT_HARDIRQ), before + 1);
	spin_unlock(&ld_irq_across);
	last_is(LOCKDEP_INCONSISTENT_HARDIRQ, "ld_irq_across", "ld_irq_across");
#endif
}

/* ---- softirqs ---- */

#ifdef GRACE_LOCKDEP
static DEFINE_MUTEX(ld_softirq_safe);
static DEFINE_MUTEX(ld_softirq_unsafe);
static DEFINE_SPINLOCK(ld_softirq_spin);

static void softirq_takes_safe_then_unsafe(void)
{
	mutex_lock(&ld_softirq_safe);
	mutex_lock(&ld_softirq_unsafe);
	mutex_unlock(&ld_softirq_unsafe);
	mutex_unlock(&ld_softirq_safe);
}

static void softirq_takes_spin(void)
{
	spin_lock(&ld_softirq_spin);
	spin_unlock(&ld_softirq_spin);
}
#endif

TEST(lockdep, softirq_safe_lock_before_a_softirq_unsafe_one_is_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	/* Held preemptible by a thread: softirqd could run on its CPU meanwhile. */
	mutex_lock(&ld_softirq_unsafe);
	mutex_unlock(&ld_softirq_unsafe);
	u64 before = lockdep_problem_count(LOCKDEP_SOFTIRQ_INVERSION);
	u64 inconsistent = lockdep_problem_count(LOCKDEP_INCONSISTENT_SOFTIRQ);
	/*
	 * A handler taking ld_softirq_safe, then waiting for what such a thread holds:
	 * every softirq of its CPU then waits for an ordinary thread. ld_softirq_unsafe,
	 * now taken by a handler too, is also reported on its own.
	 */
	test_expect_message(REPORT_TEXT);
	run_in_softirq(softirq_takes_safe_then_unsafe);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SOFTIRQ_INVERSION), before + 1);
	last_is(LOCKDEP_SOFTIRQ_INVERSION, "ld_softirq_safe", "ld_softirq_unsafe");
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_INCONSISTENT_SOFTIRQ), inconsistent + 1);
	last_is(LOCKDEP_INCONSISTENT_SOFTIRQ, "ld_softirq_unsafe", "ld_softirq_unsafe");
#endif
}

TEST(lockdep, spinlock_shared_with_a_softirq_handler_is_not_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	/* A spinlock's holder cannot be preempted, so softirqd never runs under it. */
	u64 inconsistent = lockdep_problem_count(LOCKDEP_INCONSISTENT_SOFTIRQ);
	u64 inversions = lockdep_problem_count(LOCKDEP_SOFTIRQ_INVERSION);
	lockdep_forget_problems();
	spin_lock(&ld_softirq_spin);
	spin_unlock(&ld_softirq_spin);
	run_in_softirq(softirq_takes_spin);
	spin_lock(&ld_softirq_spin);
	spin_unlock(&ld_softirq_spin);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_INCONSISTENT_SOFTIRQ), inconsistent);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SOFTIRQ_INVERSION), inversions);
#endif
}

/* ---- sleeping ---- */

#ifdef GRACE_LOCKDEP
static DEFINE_SPINLOCK(ld_sleep_spin);
static DEFINE_MUTEX(ld_sleep_mutex);
static DEFINE_WAIT_QUEUE_HEAD(ld_sleep_wq);
#endif

TEST(lockdep, sleeping_under_a_spinlock_is_reported_even_when_it_would_not_sleep)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	u64 before = lockdep_problem_count(LOCKDEP_SLEEP_UNDER_SPINLOCK);
	/* Each would sleep another time: a held mutex, a false condition, a longer sleep. */
	spin_lock(&ld_sleep_spin);
	mutex_lock(&ld_sleep_mutex); /* free: takes it without sleeping */
	mutex_unlock(&ld_sleep_mutex);
	spin_unlock(&ld_sleep_spin);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_UNDER_SPINLOCK), before + 1);

	spin_lock(&ld_sleep_spin);
	wait_event(ld_sleep_wq, true);
	spin_unlock(&ld_sleep_spin);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_UNDER_SPINLOCK), before + 2);

	spin_lock(&ld_sleep_spin);
	msleep(0); /* its deadline has passed as it starts: returns without sleeping */
	spin_unlock(&ld_sleep_spin);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_UNDER_SPINLOCK), before + 3);
#endif
}

TEST(lockdep, sleeping_inside_an_rcu_read_side_section_is_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	u64 before = lockdep_problem_count(LOCKDEP_SLEEP_IN_RCU);
	rcu_read_lock();
	mutex_lock(&ld_sleep_mutex);
	mutex_unlock(&ld_sleep_mutex);
	rcu_read_unlock();
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_IN_RCU), before + 1);
	rcu_read_lock();
	msleep(0);
	rcu_read_unlock();
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_IN_RCU), before + 2);
#endif
}

#ifdef GRACE_LOCKDEP
static DEFINE_MUTEX(ld_sleep_irqs_off_mutex);
static DEFINE_MUTEX(ld_sleep_in_irq_mutex);

/* The site each report must name: its own function, kept out of line to be found. */
static __noinline void ld_sleeps_with_irqs_off(void)
{
	unsigned long flags = arch_irq_save();
	mutex_lock(&ld_sleep_irqs_off_mutex); /* free: taken without sleeping */
	mutex_unlock(&ld_sleep_irqs_off_mutex);
	arch_irq_restore(flags);
}

static __noinline void ld_sleeps_in_an_interrupt(void)
{
	mutex_lock(&ld_sleep_in_irq_mutex); /* free, and no thread ever takes it */
	mutex_unlock(&ld_sleep_in_irq_mutex);
}

/* The last report of kind was made at a site in the function called name. */
static void last_site_is(enum lockdep_problem_kind kind, const char *name)
{
	struct lockdep_problem p;
	char where[96];
	if (!EXPECT_TRUE(lockdep_last_problem(kind, &p)))
		return;
	lockdep_snprint_ip(where, sizeof(where), p.ip);
	size_t n = strlen(name);
	if (strncmp(where, name, n) || where[n] != '+')
		test_fail(__FILE__, __LINE__, "the report names the site %s, expected %s+...",
			  where, name);
}
#endif

TEST(lockdep, sleeping_with_interrupts_off_is_reported_naming_the_caller)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	/* The report's site line, symbolized: the caller of mutex_lock(). */
	test_expect_message(REPORT_TEXT "at ld_sleeps_with_irqs_off+");
	u64 before = lockdep_problem_count(LOCKDEP_SLEEP_IRQS_OFF);
	ld_sleeps_with_irqs_off();
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_IRQS_OFF), before + 1);
	last_site_is(LOCKDEP_SLEEP_IRQS_OFF, "ld_sleeps_with_irqs_off");
	/* The same call with interrupts on is no problem. */
	mutex_lock(&ld_sleep_irqs_off_mutex);
	mutex_unlock(&ld_sleep_irqs_off_mutex);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_IRQS_OFF), before + 1);
#endif
}

TEST(lockdep, sleeping_in_an_interrupt_handler_is_reported_naming_the_caller)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	test_expect_message(REPORT_TEXT "at ld_sleeps_in_an_interrupt+");
	u64 before = lockdep_problem_count(LOCKDEP_SLEEP_IN_IRQ);
	run_in_hardirq(ld_sleeps_in_an_interrupt);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_SLEEP_IN_IRQ), before + 1);
	last_site_is(LOCKDEP_SLEEP_IN_IRQ, "ld_sleeps_in_an_interrupt");
#endif
}

/* ---- holding and releasing ---- */

#ifdef GRACE_LOCKDEP
static DEFINE_SPINLOCK(ld_orphan);
static DEFINE_SPINLOCK(ld_assert);

static int exit_holding(void *arg)
{
	(void)arg;
	spin_lock(&ld_orphan);
	return 0; /* the report: a thread exits holding locks */
}
#endif

TEST(lockdep, exit_with_a_lock_held_and_a_foreign_unlock_are_reported)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	test_expect_message(REPORT_TEXT);
	u64 exits = lockdep_problem_count(LOCKDEP_LOCKS_AT_EXIT);
	u64 unlocks = lockdep_problem_count(LOCKDEP_UNLOCK_NOT_HELD);
	struct task *t = kthread_run(exit_holding, NULL, "lockdep_orphan");
	ASSERT_TRUE(t != NULL);
	kthread_join(t);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_LOCKS_AT_EXIT), exits + 1);
	EXPECT_TRUE(spin_is_locked(&ld_orphan));
	/* Release it for the thread that is gone: ours is the preemption count it takes back. */
	preempt_disable();
	spin_unlock(&ld_orphan);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_UNLOCK_NOT_HELD), unlocks + 1);
#endif
}

TEST(lockdep, assert_held_reports_only_a_lock_not_held)
{
#ifndef GRACE_LOCKDEP
	test_skip(NEEDS_LOCKDEP);
#else
	lockdep_forget_problems();
	u64 before = lockdep_problem_count(LOCKDEP_NOT_HELD);
	spin_lock(&ld_assert);
	lockdep_assert_held(&ld_assert);
	spin_unlock(&ld_assert);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_NOT_HELD), before);
	test_expect_message(REPORT_TEXT);
	lockdep_assert_held(&ld_assert);
	EXPECT_EQ(lockdep_problem_count(LOCKDEP_NOT_HELD), before + 1);
#endif
}

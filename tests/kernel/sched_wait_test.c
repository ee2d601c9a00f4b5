/*
 * Scheduler selftests, sleeping and waking: the sleeping mutex and its FIFO hand-off,
 * wait queues, sleeps and completions. Every concurrency test runs threads on all
 * CPUs at once and checks counts and ownership; waits are bounded by generous
 * deadlines (64 vCPUs may share two host cores) and compared as orderings, never as
 * speeds. Threads and where they run is sched_threads_test.c's.
 */
#include <grace/completion.h>
#include <grace/kthread.h>
#include <grace/mutex.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/test.h>
#include "lock_sizing.h"
#include <grace/time.h>
#include <asm/cpu.h>
#include "sched_test_util.h"

/* ---- the mutex ---- */

static struct mutex_test {
	struct mutex lock;
	u64 counter;
	atomic_t inside; /* threads inside the critical section: must stay 0 or 1 */
	atomic_t violations;
	unsigned iterations;
} mt;

static int mutex_worker(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < mt.iterations; i++) {
		mutex_lock(&mt.lock);
		if (!mutex_is_mine(&mt.lock) || atomic_fetch_add_relaxed(&mt.inside, 1) != 0)
			atomic_inc(&mt.violations);
		u64 c = READ_ONCE(mt.counter);
		/* Sometimes give the CPU away while holding it, so waiters really sleep. */
		if (i % 4 == 0)
			yield();
		WRITE_ONCE(mt.counter, c + 1);
		atomic_dec(&mt.inside);
		mutex_unlock(&mt.lock);
	}
	return 0;
}

TEST(sched, mutex_counter_exact_with_4_threads_per_cpu)
{
	unsigned n = 4 * num_online_cpus();
	struct task **t = threads_alloc(n);
	ASSERT_TRUE(t != NULL);
	mutex_init(&mt.lock);
	mt.counter = 0;
	atomic_set(&mt.violations, 0);
	/*
	 * A fixed total of hand-offs where they are dear (64 vCPUs share two host cores),
	 * the SMP=4 share per thread where paravirtual spinlock waits make them cheap.
	 */
	mt.iterations = lock_sized_share(512, n, 2);
	for (unsigned i = 0; i < n; i++)
		t[i] = kthread_run(mutex_worker, NULL, "mutex%u", i);
	EXPECT_EQ(join_all(t, n), n);
	EXPECT_EQ(mt.counter, (u64)n * mt.iterations);
	EXPECT_EQ(atomic_read(&mt.violations), 0);
	EXPECT_TRUE(mutex_owner(&mt.lock) == NULL);
}

TEST(sched, mutex_trylock_and_owner)
{
	DEFINE_MUTEX(m);
	EXPECT_TRUE(mutex_trylock(&m));
	EXPECT_TRUE(mutex_is_mine(&m));
	EXPECT_FALSE(mutex_trylock(&m));
	mutex_unlock(&m);
	EXPECT_TRUE(mutex_owner(&m) == NULL);
}

/*
 * Hand-off in FIFO order: the test holds the mutex while waiters queue one at a
 * time (the next is started only once the previous one is on the mutex's wait
 * list), spread over every CPU. Then it unlocks: the mutex goes to the oldest
 * waiter before anyone else can take it (a trylock right after the unlock fails),
 * and each waiter, once it owns the mutex, takes the next place in the order
 * served, which must be its place in the queue.
 */
#define MUTEX_FIFO_WAITERS 16

static struct mutex_fifo_test {
	struct mutex lock;
	u32 served;		       /* waiters that got the mutex so far; under lock */
	u32 place[MUTEX_FIFO_WAITERS]; /* the order waiter i was served in */
} mf;

static int mutex_fifo_waiter(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	mutex_lock(&mf.lock);
	mf.place[i] = mf.served++;
	mutex_unlock(&mf.lock);
	return 0;
}

/* Threads queued on m, counted under its wait_lock. */
static unsigned mutex_queued(struct mutex *m)
{
	unsigned n = 0;
	struct list_head *p;
	unsigned long flags = spin_lock_irqsave(&m->wait_lock);
	for (p = m->waiters.next; p != &m->waiters; p = p->next)
		n++;
	spin_unlock_irqrestore(&m->wait_lock, flags);
	return n;
}

TEST(sched, mutex_hands_off_to_waiters_in_the_order_they_queued)
{
	struct task **t = threads_alloc(MUTEX_FIFO_WAITERS);
	unsigned cpu, queued = 0;
	ASSERT_TRUE(t != NULL);
	preempt_disable();
	cpu = smp_processor_id(); /* the first waiter goes to the next CPU */
	preempt_enable();
	mutex_init(&mf.lock);
	mf.served = 0;
	mutex_lock(&mf.lock);
	for (unsigned i = 0; i < MUTEX_FIFO_WAITERS; i++) {
		cpu = cpumask_next(&cpu_online_mask, cpu + 1);
		if (cpu >= MAX_CPUS)
			cpu = cpumask_next(&cpu_online_mask, 0);
		t[i] = kthread_create(mutex_fifo_waiter, (void *)(uintptr_t)i, "mfifo%u", i);
		ASSERT_TRUE(t[i] != NULL);
		kthread_bind(t[i], cpu);
		wake_up_process(t[i]);
		/* Waiter i is queued behind waiters 0..i-1 before waiter i + 1 starts. */
		if (!EXPECT_TRUE(wait_until(mutex_queued(&mf.lock) == i + 1)))
			break;
		queued++;
	}
	mutex_unlock(&mf.lock);
	/*
	 * Handed off: the oldest waiter owns it already, nobody can barge in. Unless
	 * every waiter has been served already (a host that stopped this vCPU long
	 * enough): taking it then, with served read under it, is no barging.
	 */
	bool got = mutex_trylock(&mf.lock);
	bool barged = got && mf.served < queued;
	EXPECT_FALSE(barged);
	if (got)
		mutex_unlock(&mf.lock);
	EXPECT_EQ(join_all(t, MUTEX_FIFO_WAITERS), MUTEX_FIFO_WAITERS);
	EXPECT_EQ(queued, MUTEX_FIFO_WAITERS);
	EXPECT_EQ(mf.served, MUTEX_FIFO_WAITERS);
	for (unsigned place_queued = 0; place_queued < queued; place_queued++) {
		unsigned place_served = mf.place[place_queued];
		EXPECT_EQ(place_served, place_queued);
	}
	EXPECT_TRUE(mutex_owner(&mf.lock) == NULL);
}

/* ---- wait/wake storm: a token passed around a ring of threads on all CPUs ---- */

struct ring_node {
	struct wait_queue_head wq;
	atomic_t tokens; /* tokens received so far */
} __cacheline_aligned;

static struct ring_test {
	struct ring_node *nodes;
	unsigned n, rounds;
	atomic_t passes;
	u32 stop;
} rt;

static int ring_worker(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg, next = (i + 1) % rt.n;
	for (unsigned r = 0; r < rt.rounds; r++) {
		wait_event(rt.nodes[i].wq,
			   (unsigned)atomic_read(&rt.nodes[i].tokens) > r || READ_ONCE(rt.stop));
		if (READ_ONCE(rt.stop))
			return 1;
		atomic_inc(&rt.passes);
		atomic_fetch_add_release(&rt.nodes[next].tokens, 1);
		wake_up(&rt.nodes[next].wq);
	}
	return 0;
}

TEST(sched, wait_wake_storm_loses_no_wakeup)
{
	unsigned cpus = num_online_cpus();
	rt.n = 2 * cpus;
	rt.rounds = lock_sized_share(1024, rt.n, 8); /* tokens each thread passes on */
	atomic_set(&rt.passes, 0);
	rt.stop = 0;
	rt.nodes = kzalloc(rt.n * sizeof(*rt.nodes));
	struct task **t = threads_alloc(rt.n);
	ASSERT_TRUE(rt.nodes && t);
	for (unsigned i = 0; i < rt.n; i++)
		wait_queue_init(&rt.nodes[i].wq);
	for (unsigned i = 0; i < rt.n; i++)
		t[i] = kthread_run(ring_worker, (void *)(uintptr_t)i, "ring%u", i);
	/* Thread 0 starts with the token. */
	atomic_fetch_add_release(&rt.nodes[0].tokens, 1);
	wake_up(&rt.nodes[0].wq);

	u32 expected = rt.n * rt.rounds;
	bool done = wait_until((u32)atomic_read(&rt.passes) == expected);
	if (!done) {
		printk("# ring stalled after %d of %u passes: a lost wake-up\n",
		       atomic_read(&rt.passes), expected);
		WRITE_ONCE(rt.stop, 1);
		for (unsigned i = 0; i < rt.n; i++)
			wake_up(&rt.nodes[i].wq);
	}
	EXPECT_TRUE(done);
	EXPECT_EQ(join_all(t, rt.n), rt.n);
	EXPECT_EQ(atomic_read(&rt.passes), expected);
	kfree(rt.nodes);
}

/*
 * A wake-up that comes between set_current_state(TASK_SLEEPING) and schedule() is
 * not lost: the waker finds TASK_SLEEPING and makes the thread runnable, and its
 * schedule() returns at once (grace/sched.h). A sleeper bound to another CPU waits
 * with wait_event_timeout(); the first look at its condition each round, made after
 * prepare_to_wait(), finds it false and then holds the sleeper right there, before
 * schedule(), until the waker (the test thread) is done: the waker sees the sleeper
 * TASK_SLEEPING and in that window, makes the condition true, calls wake_up(), and
 * reads the sleeper's state. Nothing else writes it while the sleeper is held, so it
 * must read TASK_RUNNING, however slow the host. A lost wake-up leaves it
 * TASK_SLEEPING; the sleeper then sleeps to its timeout instead of for ever, and
 * the test stops.
 */
#define WAKE_WINDOW_ROUNDS 16
#define WAKE_WINDOW_TIMEOUT_NS (2 * NSEC_PER_SEC) /* what a lost wake-up costs */

static struct wake_window_test {
	struct wait_queue_head wq;
	u32 token;     /* rounds the waker has woken for */
	u32 held;      /* the sleeper held itself in the window this round */
	u32 in_window; /* round + 1: the sleeper is held before schedule() */
	u32 woken;     /* round + 1: the waker is done with the round */
	u32 stop;
	u32 rounds_done;
} ww;

/* The sleeper's condition; its first false look in a round holds it in the window. */
static bool wake_window_cond(unsigned r)
{
	bool ok = smp_load_acquire(&ww.token) > r || READ_ONCE(ww.stop);
	if (!ok && !ww.held) {
		ww.held = 1;
		smp_store_release(&ww.in_window, r + 1);
		while (smp_load_acquire(&ww.woken) <= r && !READ_ONCE(ww.stop))
			cpu_relax();
	}
	return ok;
}

static int wake_window_sleeper(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < WAKE_WINDOW_ROUNDS && !READ_ONCE(ww.stop); r++) {
		ww.held = 0;
		wait_event_timeout(ww.wq, wake_window_cond(r), WAKE_WINDOW_TIMEOUT_NS);
		WRITE_ONCE(ww.rounds_done, r + 1);
	}
	return 0;
}

TEST(sched, wake_up_between_sleeping_and_schedule_is_not_lost)
{
	unsigned self, cpu, other = 0;
	u32 lost = 0;

	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	preempt_disable();
	self = smp_processor_id();
	preempt_enable();
	for_each_online_cpu(cpu)
		if (cpu != self) {
			other = cpu;
			break;
		}
	ww = (struct wake_window_test){0};
	wait_queue_init(&ww.wq);
	struct task *p = kthread_create_on_cpu(wake_window_sleeper, NULL, other, "wakewin");
	ASSERT_TRUE(p != NULL);
	wake_up_process(p);

	/* The waker spins: a lost wake-up must not take the waker's own sleeps with it. */
	u64 deadline = arch_clock_ns() + SCHED_TEST_TIMEOUT_NS;
	for (unsigned r = 0; r < WAKE_WINDOW_ROUNDS && !lost; r++) {
		while ((smp_load_acquire(&ww.in_window) <= r ||
			READ_ONCE(p->state) != TASK_SLEEPING) &&
		       arch_clock_ns() < deadline)
			cpu_relax();
		if (!EXPECT_EQ(READ_ONCE(ww.in_window), r + 1))
			break;
		smp_store_release(&ww.token, r + 1);
		wake_up(&ww.wq);
		if (READ_ONCE(p->state) != TASK_RUNNING) {
			printk("# round %u: the sleeper is still sleeping after its wake-up\n", r);
			lost++;
		}
		smp_store_release(&ww.woken, r + 1);
	}
	WRITE_ONCE(ww.stop, 1);
	/* Its last sleep ends by its timeout at worst; join only once it is gone. */
	while (smp_load_acquire(&p->state) != TASK_DEAD && arch_clock_ns() < deadline)
		cpu_relax();
	ASSERT_EQ(READ_ONCE(p->state), TASK_DEAD);
	EXPECT_EQ(kthread_join(p), 0);
	EXPECT_EQ(lost, 0);
	EXPECT_EQ(ww.rounds_done, WAKE_WINDOW_ROUNDS);
}

static struct broadcast_test {
	struct wait_queue_head wq, ack_wq;
	u32 generation, stop;
	atomic_t acks;
	unsigned rounds, n;
} bt;

static int broadcast_waiter(void *arg)
{
	(void)arg;
	for (unsigned r = 1; r <= bt.rounds; r++) {
		wait_event(bt.wq, READ_ONCE(bt.generation) >= r || READ_ONCE(bt.stop));
		if (READ_ONCE(bt.stop))
			return 1;
		/* The last one of the round wakes the controller: one waker, not a convoy of n. */
		if ((unsigned)atomic_inc_return(&bt.acks) == r * bt.n)
			wake_up(&bt.ack_wq);
	}
	return 0;
}

TEST(sched, wake_up_all_reaches_every_waiter_each_round)
{
	unsigned n = num_online_cpus() + 1;
	struct task **t = threads_alloc(n);
	ASSERT_TRUE(t != NULL);
	wait_queue_init(&bt.wq);
	wait_queue_init(&bt.ack_wq);
	bt.generation = bt.stop = 0;
	atomic_set(&bt.acks, 0);
	/*
	 * Every waiter contends for one lock each round: rounds few at 64 CPUs where
	 * hand-offs are dear, as at SMP=4 where they are cheap (lock_sizing.h).
	 */
	bt.rounds = lock_sized_share(128, n, 2);
	bt.n = n;
	for (unsigned i = 0; i < n; i++)
		t[i] = kthread_run(broadcast_waiter, NULL, "bcast%u", i);
	for (unsigned r = 1; r <= bt.rounds; r++) {
		smp_store_release(&bt.generation, r);
		wake_up_all(&bt.wq);
		if (!wait_event_timeout(bt.ack_wq, (unsigned)atomic_read(&bt.acks) == r * n,
					SCHED_TEST_TIMEOUT_NS)) {
			EXPECT_EQ(atomic_read(&bt.acks), r * n);
			break;
		}
	}
	WRITE_ONCE(bt.stop, 1);
	wake_up_all(&bt.wq);
	EXPECT_EQ(join_all(t, n), n);
	EXPECT_EQ(atomic_read(&bt.acks), bt.rounds * n);
}

/* ---- sleeping, completions ---- */

TEST(sched, msleep_sleeps_at_least_the_time_asked)
{
	static const u64 ms[] = {1, 2, 5, 10, 20};
	for (unsigned i = 0; i < ARRAY_SIZE(ms); i++) {
		u64 start = arch_clock_ns();
		msleep(ms[i]);
		EXPECT_GE(arch_clock_ns() - start, ms[i] * NSEC_PER_MSEC);
	}
}

TEST(sched, schedule_timeout_sleeps_until_the_deadline)
{
	u64 start = arch_clock_ns();
	set_current_state(TASK_SLEEPING);
	u64 left = schedule_timeout(5 * NSEC_PER_MSEC);
	/* Nobody wakes us: only the timer can, at or after the deadline. */
	EXPECT_EQ(left, 0);
	EXPECT_GE(arch_clock_ns() - start, 5 * NSEC_PER_MSEC);
	EXPECT_EQ(READ_ONCE(current->state), TASK_RUNNING);
}

TEST(sched, wait_event_timeout_times_out_and_succeeds)
{
	DEFINE_WAIT_QUEUE_HEAD(wq);
	u64 start = arch_clock_ns();
	EXPECT_FALSE(wait_event_timeout(wq, false, 5 * NSEC_PER_MSEC));
	EXPECT_GE(arch_clock_ns() - start, 5 * NSEC_PER_MSEC);
	EXPECT_TRUE(wait_event_timeout(wq, true, 5 * NSEC_PER_MSEC));
}

static struct completion_test {
	struct completion go, done;
	atomic_t passed;
} ct;

static int completion_waiter(void *arg)
{
	(void)arg;
	wait_for_completion(&ct.go);
	atomic_inc(&ct.passed);
	complete(&ct.done);
	return 0;
}

TEST(sched, complete_lets_one_through_complete_all_the_rest)
{
	unsigned n = num_online_cpus() + 1;
	struct task **t = threads_alloc(n);
	ASSERT_TRUE(t != NULL);
	completion_init(&ct.go);
	completion_init(&ct.done);
	atomic_set(&ct.passed, 0);
	for (unsigned i = 0; i < n; i++)
		t[i] = kthread_run(completion_waiter, NULL, "compl%u", i);
	complete(&ct.go);
	EXPECT_TRUE(wait_for_completion_timeout(&ct.done, SCHED_TEST_TIMEOUT_NS));
	msleep(5);
	EXPECT_EQ(atomic_read(&ct.passed), 1); /* exactly one, however many wait */
	complete_all(&ct.go);
	EXPECT_EQ(join_all(t, n), n);
	EXPECT_EQ(atomic_read(&ct.passed), n);
}

/*
 * Futex selftests (kernel/proc/futex.c), from kernel threads running on a test
 * address space: the answers of a wait that must not sleep, a wait that times
 * out, a requeue onto the same word and the wake after it; and the wake that
 * comes between a waiter's check of the word and its sleep. For that one a race point parks
 * the waiter after its check, holding its bucket's lock; a waker changes the
 * word meanwhile and calls futex_wake(), which must wait for that lock and
 * then find the waiter queued. A waiter that let the lock go between its
 * check and its queueing would miss that wake and sleep to its timeout.
 */
#include <grace/futex.h>
#include <grace/kthread.h>
#include <grace/time.h>
#include <grace/uaccess.h>
#include "as_test.h"
#include "race_test_util.h"

#define FUTEX_TEST_VA (16 * MiB)
/* Long for a test that passes (it is woken at once), bounded for one that fails. */
#define FUTEX_TEST_TIMEOUT_NS (2ULL * 1000 * 1000 * 1000)

static struct mm *futex_test_mm(void)
{
	struct mm *mm = mm_create();
	if (mm && vma_map(mm, FUTEX_TEST_VA, PAGE_SIZE, PROT_READ | PROT_WRITE, 0)) {
		mm_destroy(mm);
		return NULL;
	}
	return mm;
}

static u32 __user *futex_test_word(void)
{
	return (u32 __user *)FUTEX_TEST_VA;
}

static int futex_test_store(u32 v)
{
	return copy_to_user(futex_test_word(), &v, sizeof(v)) ? -EFAULT : 0;
}

TEST(futex, wait_answers_without_sleeping_when_it_must)
{
	struct mm *mm = futex_test_mm();
	ASSERT_TRUE(mm != NULL);
	mm_switch(mm);
	EXPECT_EQ(futex_test_store(1), 0);
	EXPECT_EQ(futex_wait(futex_test_word(), 0, FUTEX_BITSET_ANY, UINT64_MAX), -EAGAIN);
	EXPECT_EQ(futex_wait((u32 __user *)(FUTEX_TEST_VA + 2), 1, FUTEX_BITSET_ANY, UINT64_MAX),
		  -EINVAL);
	EXPECT_EQ(futex_wait(futex_test_word(), 1, 0, UINT64_MAX), -EINVAL);
	EXPECT_EQ(
	    futex_wait((u32 __user *)(FUTEX_TEST_VA + PAGE_SIZE), 1, FUTEX_BITSET_ANY, UINT64_MAX),
	    -EFAULT);
	u64 start = arch_clock_ns();
	EXPECT_EQ(futex_wait(futex_test_word(), 1, FUTEX_BITSET_ANY, start + 10 * 1000 * 1000),
		  -ETIMEDOUT);
	EXPECT_TRUE(arch_clock_ns() >= start + 10 * 1000 * 1000);
	EXPECT_EQ(futex_wake(futex_test_word(), 1, FUTEX_BITSET_ANY), 0);
	mm_switch(NULL);
	mm_destroy(mm);
}

struct futex_race {
	struct mm *mm;
	int wait_ret; /* the racer's futex_wait() */
	int wake_ret; /* the waker's futex_wake() */
	int stored;   /* the waker has changed the word and is about to wake */
	struct task *waker;
};

static void futex_racer(void *arg)
{
	struct futex_race *f = arg;
	mm_switch(f->mm);
	f->wait_ret = futex_wait(futex_test_word(), 0, FUTEX_BITSET_ANY,
				 arch_clock_ns() + FUTEX_TEST_TIMEOUT_NS);
	mm_switch(NULL);
}

static int futex_waker(void *arg)
{
	struct futex_race *f = arg;
	mm_switch(f->mm);
	futex_test_store(1);
	smp_store_release(&f->stored, 1);
	f->wake_ret = futex_wake(futex_test_word(), 1, FUTEX_BITSET_ANY);
	mm_switch(NULL);
	return 0;
}

/* While the racer is parked: a waker that changes the word and wakes it, left waiting. */
static void futex_change(void *arg)
{
	struct futex_race *f = arg;
	f->waker = kthread_run(futex_waker, f, "futex_waker");
	if (!f->waker)
		return;
	while (!smp_load_acquire(&f->stored))
		yield();
	/* Time for the waker to reach the bucket's lock the racer holds, and wait there. */
	u64 until = arch_clock_ns() + 20 * 1000 * 1000;
	while (arch_clock_ns() < until)
		yield();
}

TEST(futex, wake_between_check_and_sleep_is_not_lost)
{
	struct futex_race f = {.mm = futex_test_mm(), .wait_ret = 1, .wake_ret = -1};
	ASSERT_TRUE(f.mm != NULL);
	struct race race = {.point = "futex.wait_checked",
			    .key = f.mm,
			    .racer = futex_racer,
			    .change = futex_change,
			    .arg = &f};
	if (race_run(&race)) {
		ASSERT_TRUE(f.waker != NULL);
		kthread_join(f.waker);
		EXPECT_EQ(f.wait_ret, 0);
		EXPECT_EQ(f.wake_ret, 1);
	}
	mm_destroy(f.mm);
}

/* Waiters that a slow machine (SMP=64 on two host cores) may take seconds to start. */
#define FUTEX_SLEEPER_TIMEOUT_NS (20ULL * 1000 * 1000 * 1000)

struct futex_sleeper {
	struct mm *mm;
	int ret;
};

static int futex_sleeper_fn(void *arg)
{
	struct futex_sleeper *s = arg;
	mm_switch(s->mm);
	s->ret = futex_wait(futex_test_word(), 0, FUTEX_BITSET_ANY,
			    arch_clock_ns() + FUTEX_SLEEPER_TIMEOUT_NS);
	mm_switch(NULL);
	return 0;
}

/*
 * A requeue from a word to itself (glibc's old broadcast shape, all to one word)
 * moves each waiter once: it counts them and returns, and a wake then finds them.
 */
TEST(futex, requeue_onto_the_same_word_counts_each_waiter_once)
{
	struct mm *mm = futex_test_mm();
	ASSERT_TRUE(mm != NULL);
	mm_switch(mm);
	EXPECT_EQ(futex_test_store(0), 0);
	struct futex_sleeper s[2] = {{mm, 1}, {mm, 1}};
	struct task *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = kthread_run(futex_sleeper_fn, &s[i], "futex_sleeper");
		ASSERT_TRUE(t[i] != NULL);
	}
	/*
	 * Each requeue counts the waiters queued so far, moving none elsewhere: until
	 * both are (a slow machine may take a while to start them), or their timeout.
	 */
	int n;
	u64 until = arch_clock_ns() + FUTEX_SLEEPER_TIMEOUT_NS / 2;
	while ((n = futex_requeue(futex_test_word(), 0, futex_test_word(), INT32_MAX, false, 0)) <
		   2 &&
	       arch_clock_ns() < until)
		yield();
	EXPECT_EQ(n, 2);
	EXPECT_EQ(futex_wake(futex_test_word(), INT32_MAX, FUTEX_BITSET_ANY), 2);
	for (int i = 0; i < 2; i++) {
		kthread_join(t[i]);
		EXPECT_EQ(s[i].ret, 0);
	}
	mm_switch(NULL);
	mm_destroy(mm);
}

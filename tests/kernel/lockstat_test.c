/*
 * Lock statistics selftests (LOCKSTAT=1 or LOCKDEP=1; each skips in other builds):
 * acquisitions and hold times are counted exactly for a lock only this test takes,
 * and a contended acquisition is counted with its wait and the site that waited.
 */
#include <grace/kthread.h>
#include <grace/ksyms.h>
#include <grace/lockdep.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#include <kernel/locking/lockdep_internal.h>

#define NEEDS_LOCKSTAT "needs LOCKSTAT=1 or LOCKDEP=1 (the lock statistics)"

#ifdef GRACE_LOCKSTAT
#define LOCKSTAT_TEST_ACQUISITIONS 100
#define LOCKSTAT_TEST_HOLD_LOOPS 1000
#define LOCKSTAT_TEST_WAIT_NS (5 * NSEC_PER_SEC)

static DEFINE_SPINLOCK(ls_counted);
static DEFINE_SPINLOCK(ls_contended);

static void figures(spinlock_t *lock, struct lockstat_figures *f)
{
	struct lock_class *c = lockdep_map_class(&lock->dep_map);
	memset(f, 0, sizeof(*f));
	if (EXPECT_TRUE(c != NULL))
		lockstat_read(c, f);
}
#endif

TEST(lockstat, counts_each_acquisition_and_its_hold)
{
#ifndef GRACE_LOCKSTAT
	test_skip(NEEDS_LOCKSTAT);
#else
	struct lockstat_figures before, after;
	figures(&ls_counted, &before);
	for (unsigned i = 0; i < LOCKSTAT_TEST_ACQUISITIONS; i++) {
		spin_lock(&ls_counted);
		for (unsigned j = 0; j < LOCKSTAT_TEST_HOLD_LOOPS; j++)
			cpu_relax();
		spin_unlock(&ls_counted);
	}
	figures(&ls_counted, &after);
	EXPECT_EQ(after.acquired - before.acquired, LOCKSTAT_TEST_ACQUISITIONS);
	EXPECT_EQ(after.contended - before.contended, 0);
	EXPECT_GT(after.hold_ns - before.hold_ns, 0);
	EXPECT_GT(after.hold_max_ns, 0);
	EXPECT_LE(after.hold_max_ns, after.hold_ns);
#endif
}

#ifdef GRACE_LOCKSTAT
static u32 holder_ready;

/* Hold ls_contended until the test's thread has queued on it (its ticket drawn). */
static int hold_until_queued(void *arg)
{
	(void)arg;
	spin_lock(&ls_contended);
	/* Pairs with the smp_load_acquire() in the test. */
	smp_store_release(&holder_ready, 1);
	u64 end = arch_clock_ns() + LOCKSTAT_TEST_WAIT_NS;
	while (spin_tickets_out(&ls_contended) < 2 && arch_clock_ns() < end)
		cpu_relax();
	spin_unlock(&ls_contended);
	return 0;
}
#endif

TEST(lockstat, contended_acquisition_counts_its_wait_and_site)
{
#ifndef GRACE_LOCKSTAT
	test_skip(NEEDS_LOCKSTAT);
#else
	unsigned self = smp_processor_id(), other = self, cpu;
	for_each_online_cpu(cpu)
		if (cpu != self) {
			other = cpu;
			break;
		}
	if (other == self) {
		test_skip("needs two CPUs to contend");
		return;
	}
	struct lockstat_figures before, after;
	figures(&ls_contended, &before);
	holder_ready = 0;
	struct task *t = kthread_create_on_cpu(hold_until_queued, NULL, other, "lockstat_holder");
	ASSERT_TRUE(t != NULL);
	wake_up_process(t);
	while (!smp_load_acquire(&holder_ready))
		cpu_relax();
	spin_lock(&ls_contended); /* waits for the holder */
	spin_unlock(&ls_contended);
	kthread_join(t);
	figures(&ls_contended, &after);

	EXPECT_EQ(after.acquired - before.acquired, 2);
	EXPECT_EQ(after.contended - before.contended, 1);
	EXPECT_GT(after.wait_ns - before.wait_ns, 0);
	EXPECT_GT(after.wait_max_ns, 0);
	/* The site that waited is this function. */
	bool found = false;
	for (unsigned i = 0; i < LOCKSTAT_SITES && after.sites[i].ip; i++) {
		const char *fn = ksym_lookup(after.sites[i].ip - 1, NULL, NULL);
		found |= fn && !strcmp(fn, __func__);
	}
	EXPECT_TRUE(found);
#endif
}

/* Reader-writer lock selftests: readers really share it; writers exclude everyone. */
#include <grace/rwlock.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>

#define RW_ALL_INSIDE_TIMEOUT_NS (20 * NSEC_PER_SEC)	/* every vCPU must get scheduled once */
#define RW_TEST_TOTAL 3000
#define RW_WRITE_EVERY 4				/* one operation in four is a write */

static rwlock_t rw = RWLOCK_INIT;

struct readers_test {
	struct smp_sync start;
	u32 inside;		/* readers holding the lock */
	u32 all_met;		/* readers that saw every CPU inside at once */
};

static void readers_worker(void *arg)
{
	struct readers_test *t = arg;
	unsigned n = num_online_cpus();

	smp_sync_wait(&t->start, n);
	read_lock(&rw);
	__atomic_fetch_add(&t->inside, 1, __ATOMIC_ACQ_REL);
	u64 deadline = arch_clock_ns() + RW_ALL_INSIDE_TIMEOUT_NS;
	while (__atomic_load_n(&t->inside, __ATOMIC_ACQUIRE) < n && arch_clock_ns() < deadline)
		cpu_relax();
	if (__atomic_load_n(&t->inside, __ATOMIC_ACQUIRE) == n)
		__atomic_fetch_add(&t->all_met, 1, __ATOMIC_RELAXED);
	read_unlock(&rw);
}

TEST(rwlock, readers_in_parallel)
{
	static struct readers_test t;
	t = (struct readers_test){ 0 };
	smp_run_all(readers_worker, &t);
	EXPECT_EQ(t.all_met, num_online_cpus());
	EXPECT_EQ(rw.state, 0);
}

struct mixed_test {
	struct smp_sync start;
	unsigned iters;
	u32 readers, writers;	/* inside, by kind */
	u32 violations;
	u64 writes;		/* plain counter, under the write lock */
	u64 writes_done;	/* atomic count of the same */
};

static void mixed_worker(void *arg)
{
	struct mixed_test *t = arg;
	unsigned cpu = smp_processor_id();

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		if ((i + cpu) % RW_WRITE_EVERY == 0) {
			write_lock(&rw);
			if (__atomic_add_fetch(&t->writers, 1, __ATOMIC_ACQ_REL) != 1 ||
			    __atomic_load_n(&t->readers, __ATOMIC_ACQUIRE) != 0)
				__atomic_fetch_add(&t->violations, 1, __ATOMIC_RELAXED);
			WRITE_ONCE(t->writes, t->writes + 1);
			__atomic_fetch_sub(&t->writers, 1, __ATOMIC_RELEASE);
			write_unlock(&rw);
			__atomic_fetch_add(&t->writes_done, 1, __ATOMIC_RELAXED);
		} else {
			read_lock(&rw);
			__atomic_fetch_add(&t->readers, 1, __ATOMIC_ACQ_REL);
			if (__atomic_load_n(&t->writers, __ATOMIC_ACQUIRE) != 0)
				__atomic_fetch_add(&t->violations, 1, __ATOMIC_RELAXED);
			__atomic_fetch_sub(&t->readers, 1, __ATOMIC_RELEASE);
			read_unlock(&rw);
		}
	}
}

TEST(rwlock, writers_exclusive)
{
	static struct mixed_test t;
	unsigned n = num_online_cpus();
	t = (struct mixed_test){ .iters = MAX(RW_TEST_TOTAL / n, 16u) };
	smp_run_all(mixed_worker, &t);
	EXPECT_EQ(t.violations, 0);
	EXPECT_EQ(t.writes, t.writes_done);
	EXPECT_GT(t.writes, 0);
	EXPECT_EQ(rw.state, 0);
}

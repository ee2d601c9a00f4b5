/*
 * Reader-writer lock selftests: readers really share it; writers exclude everyone;
 * a reader that comes while a writer holds the lock gets in only after it let go,
 * by ordering; a writer that waits gets in ahead of the readers that come after it.
 */
#include <grace/rwlock.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>

/*
 * How long a reader waits with no other reader coming in before it gives up (and
 * every other reader with it): 20 s, or 100 ms per CPU where that is longer. The
 * wait for all of them grows with the CPUs (at 512 vCPUs on two host cores it
 * passed 20 s); so, more slowly, does the longest wait for the next one: in a whole
 * make test SMP=512 run, one reader waited more than 20 s.
 */
#define RW_NONE_CAME_TIMEOUT_NS (20 * NSEC_PER_SEC)
#define RW_NONE_CAME_PER_CPU_NS (100 * NSEC_PER_MSEC)
#define RW_TEST_TOTAL 3000
#define RW_WRITE_EVERY 4 /* one operation in four is a write */

static rwlock_t rw = RWLOCK_INIT;

struct readers_test {
	struct smp_sync start;
	atomic_t inside;  /* readers that got the lock */
	atomic_t all_met; /* readers that saw every CPU inside at once */
	atomic_t gave_up; /* a reader waited its patience out for the next in vain */
};

static void readers_worker(void *arg)
{
	struct readers_test *t = arg;
	unsigned n = num_online_cpus();
	u64 patience = MAX(RW_NONE_CAME_TIMEOUT_NS, n * RW_NONE_CAME_PER_CPU_NS);

	smp_sync_wait(&t->start, n);
	read_lock(&rw);
	unsigned seen = (unsigned)atomic_inc_return(&t->inside);
	u64 deadline = arch_clock_ns() + patience;
	while (seen < n && !atomic_read(&t->gave_up)) {
		unsigned now_inside = (unsigned)atomic_read_acquire(&t->inside);
		if (now_inside != seen) {
			seen = now_inside;
			deadline = arch_clock_ns() + patience;
		} else if (arch_clock_ns() >= deadline) {
			atomic_set(&t->gave_up, 1); /* readers exclude each other: stop them all */
		}
		cpu_relax();
	}
	if ((unsigned)atomic_read_acquire(&t->inside) == n)
		atomic_inc(&t->all_met);
	read_unlock(&rw);
}

TEST(rwlock, readers_in_parallel)
{
	static struct readers_test t;
	t = (struct readers_test){0};
	smp_run_all(readers_worker, &t);
	EXPECT_EQ(atomic_read(&t.all_met), num_online_cpus());
	EXPECT_EQ(rw.state, 0);
}

struct mixed_test {
	struct smp_sync start;
	unsigned iters;
	atomic_t readers, writers; /* inside, by kind */
	atomic_t violations;
	u64 writes;		/* plain counter, under the write lock */
	atomic64_t writes_done; /* atomic count of the same */
};

static void mixed_worker(void *arg)
{
	struct mixed_test *t = arg;
	unsigned cpu = smp_processor_id();

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->iters; i++) {
		if ((i + cpu) % RW_WRITE_EVERY == 0) {
			write_lock(&rw);
			if (atomic_inc_return(&t->writers) != 1 ||
			    atomic_read_acquire(&t->readers) != 0)
				atomic_inc(&t->violations);
			WRITE_ONCE(t->writes, t->writes + 1);
			atomic_fetch_sub_release(&t->writers, 1);
			write_unlock(&rw);
			atomic64_inc(&t->writes_done);
		} else {
			read_lock(&rw);
			atomic_inc_return(&t->readers);
			if (atomic_read_acquire(&t->writers) != 0)
				atomic_inc(&t->violations);
			atomic_fetch_sub_release(&t->readers, 1);
			read_unlock(&rw);
		}
	}
}

TEST(rwlock, writers_exclusive)
{
	static struct mixed_test t;
	unsigned n = num_online_cpus();
	t = (struct mixed_test){.iters = MAX(RW_TEST_TOTAL / n, 16u)};
	smp_run_all(mixed_worker, &t);
	EXPECT_EQ(atomic_read(&t.violations), 0);
	EXPECT_EQ(t.writes, atomic64_read(&t.writes_done));
	EXPECT_GT(t.writes, 0);
	EXPECT_EQ(rw.state, 0);
}

/*
 * A reader that comes while a writer holds the lock gets in only after the writer
 * let go. The writer (the CPU running the test) takes write_lock(), lets the readers
 * go and sets `releasing` just before write_unlock(); each reader reads the flag
 * once its read_lock() returned, and a clear flag means it got in under the writer.
 * A reader spinning in read_lock() leaves the lock word alone, so the writer cannot
 * see it wait: it holds until every reader has said it is calling read_lock(), then
 * RW_HOLD_NS longer or until a reader got in (only a broken lock lets one). The hold
 * only gives a broken lock its chance; with a working one every reader finds the
 * flag set however slow the host. Rounds, so that one reader vCPU the host stopped
 * just before its read_lock() cannot let a broken lock through.
 *
 * RW_HOLD_READERS readers at most: each round costs a hand-off per reader, and a
 * few readers that all arrive before the release are what the test is about.
 */
#define RW_HOLD_READERS 3
#define RW_HOLD_ROUNDS 8
#define RW_HOLD_NS (2 * NSEC_PER_MSEC)

struct hold_test {
	unsigned writer; /* the CPU running the test */
	unsigned readers;
	u32 locked;	       /* the writer holds the lock */
	atomic_t calling;      /* readers about to call read_lock() */
	atomic_t entered;      /* readers whose read_lock() returned */
	u32 releasing;	       /* set by the writer just before write_unlock() */
	atomic_t under_writer; /* readers that got in while the writer held it */
};

static void hold_worker(void *arg)
{
	struct hold_test *t = arg;

	if (smp_processor_id() == t->writer) {
		write_lock(&rw);
		smp_store_release(&t->locked, 1);
		while ((unsigned)atomic_read_acquire(&t->calling) < t->readers)
			cpu_relax();
		u64 end = arch_clock_ns() + RW_HOLD_NS;
		while (!atomic_read_acquire(&t->entered) && arch_clock_ns() < end)
			cpu_relax();
		smp_store_release(&t->releasing, 1);
		write_unlock(&rw);
		return;
	}
	while (!smp_load_acquire(&t->locked))
		cpu_relax();
	atomic_fetch_add_release(&t->calling, 1);
	read_lock(&rw);
	/* Pairs with the writer's release: a reader that got in after write_unlock() sees it. */
	if (!smp_load_acquire(&t->releasing))
		atomic_inc(&t->under_writer);
	atomic_fetch_add_release(&t->entered, 1);
	read_unlock(&rw);
}

TEST(rwlock, readers_wait_until_the_writer_holding_it_releases)
{
	static struct hold_test t;
	u32 under_writer = 0, entered = 0;

	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	unsigned readers = MIN(num_online_cpus() - 1, RW_HOLD_READERS);
	for (unsigned r = 0; r < RW_HOLD_ROUNDS; r++) {
		t = (struct hold_test){.readers = readers};
		preempt_disable();
		t.writer = smp_processor_id();
		preempt_enable();
		smp_run_on(readers + 1, hold_worker, &t);
		under_writer += atomic_read(&t.under_writer);
		entered += atomic_read(&t.entered);
	}
	EXPECT_EQ(under_writer, 0);
	EXPECT_EQ(entered, readers * RW_HOLD_ROUNDS);
	EXPECT_EQ(rw.state, 0);
}

/*
 * A stream of readers does not starve a writer: once a writer waits (it set
 * RW_WRITER_WAITING), no reader that comes after gets in before it. Readers on
 * the other CPUs take the lock back to back with long sections, so that they
 * overlap and the count alone would rarely drop to zero; the writer starts each
 * write_lock() while at least two are inside, so it has to wait and mark it.
 * Before each read_lock() a reader notes the writer's completed sections and the
 * lock word; if the word had the mark, the count it reads inside must have moved:
 * the writer got in first. Readers stop when the writer is done, or after one got
 * past it (it would starve otherwise), or at a deadline that only a hang reaches.
 *
 * At most RW_STARVE_CPUS take part: every write waits for the readers inside to
 * drain, and a reader vCPU the host stopped inside holds it up for a host time
 * slice; with 63 readers on 2 host cores that was 3.5 to 5.5 s for 8 writes.
 */
#define RW_STARVE_CPUS 5
#define RW_STARVE_WRITES 8
#define RW_STARVE_READ_SPINS 200 /* inside a read section: long, so readers overlap */
#define RW_STARVE_TIMEOUT_NS (60 * NSEC_PER_SEC)

struct starve_test {
	struct smp_sync start;
	unsigned writer;     /* the CPU running the test */
	u32 writes_done;     /* write sections completed, written inside them */
	u32 stop;	     /* the writer is done, or a reader got past it */
	atomic_t overtook;   /* read sections entered past a waiting writer */
	atomic_t marks_seen; /* read_lock() calls made with the waiting mark set */
	u32 timed_out;
	unsigned cpus; /* taking part */
};

static void starve_worker(void *arg)
{
	struct starve_test *t = arg;
	u64 deadline = arch_clock_ns() + RW_STARVE_TIMEOUT_NS;

	smp_sync_wait(&t->start, t->cpus);
	if (smp_processor_id() == t->writer) {
		for (u32 w = 0; w < RW_STARVE_WRITES && !READ_ONCE(t->stop); w++) {
			while ((READ_ONCE(rw.state) & RW_READER_MASK) < 2 && !READ_ONCE(t->stop))
				if (arch_clock_ns() > deadline) {
					WRITE_ONCE(t->timed_out, 1);
					break;
				}
			write_lock(&rw);
			/* Pairs with the acquire of the next read_lock(), after write_unlock(). */
			WRITE_ONCE(t->writes_done, w + 1);
			write_unlock(&rw);
		}
		smp_store_release(&t->stop, 1);
		return;
	}
	while (!smp_load_acquire(&t->stop)) {
		u32 before = smp_load_acquire(&t->writes_done);
		u32 state = READ_ONCE(rw.state);
		read_lock(&rw);
		u32 inside = READ_ONCE(t->writes_done);
		for (unsigned i = 0; i < RW_STARVE_READ_SPINS; i++)
			cpu_relax();
		read_unlock(&rw);
		if (state & RW_WRITER_WAITING) {
			atomic_inc(&t->marks_seen);
			if (inside == before) {
				atomic_inc(&t->overtook);
				WRITE_ONCE(t->stop, 1);
			}
		}
		if (arch_clock_ns() > deadline) {
			WRITE_ONCE(t->timed_out, 1);
			WRITE_ONCE(t->stop, 1);
		}
	}
}

TEST(rwlock, writer_gets_in_ahead_of_readers_that_come_after_it)
{
	static struct starve_test t;

	if (num_online_cpus() < 3) {
		test_skip("needs 3 CPUs: a writer and two readers whose sections overlap");
		return;
	}
	t = (struct starve_test){.cpus = MIN(num_online_cpus(), RW_STARVE_CPUS)};
	preempt_disable();
	t.writer = smp_processor_id();
	preempt_enable();
	smp_run_on(t.cpus, starve_worker, &t);
	EXPECT_EQ(atomic_read(&t.overtook), 0);
	EXPECT_EQ(t.timed_out, 0);
	EXPECT_EQ(t.writes_done, RW_STARVE_WRITES);
	/* The readers did meet a waiting writer: what the test is about happened. */
	EXPECT_GT(atomic_read(&t.marks_seen), 0);
	EXPECT_EQ(rw.state, 0);
}

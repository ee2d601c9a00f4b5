/*
 * seqlock selftest: one CPU writes a pair that must always satisfy b == ~a, the
 * others read it under read_seqbegin/read_seqretry and must never see a torn pair.
 * A negative control reads without the retry loop and must see torn pairs. Then
 * writers on several CPUs at once: the seqlock's spinlock serialises them, so the
 * readers still never see a torn pair and no writer's update is lost.
 */
#include <grace/seqlock.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/time.h>

#define SEQ_WRITES 20000
/*
 * The writer goes on until the readers, together, have read this often: on a
 * loaded 2-core host a reader's vCPU may not run at all during the first writes.
 */
#define SEQ_MIN_READS 2000
#define SEQ_MAX_NS (20 * NSEC_PER_SEC)
#define SEQ_READS_BATCH 64
#define SEQ_WIDE_LOOPS 20 /* between the two halves of a write, to make tearing visible */

struct seq_test {
	seqlock_t lock;
	struct smp_sync start;
	u64 a, b; /* written under lock; b == ~a between writes */
	u32 writer_done;
	bool checked;	 /* readers use the seqlock (true) or read raw (false) */
	unsigned writer; /* the CPU that writes: the one running the test */
	u64 writes;	 /* by the writer */
	/* Added up by the readers as they go, on a line of their own. */
	atomic64_t reads __cacheline_aligned, torn;
};

static void seq_worker(void *arg)
{
	struct seq_test *t = arg;
	smp_sync_wait(&t->start, num_online_cpus());

	if (smp_processor_id() == t->writer) {
		u64 i = 0, deadline = arch_clock_ns() + SEQ_MAX_NS;
		while (i < SEQ_WRITES ||
		       (atomic64_read(&t->reads) < SEQ_MIN_READS && arch_clock_ns() < deadline)) {
			i++;
			write_seqlock(&t->lock);
			WRITE_ONCE(t->a, i);
			for (int j = 0; j < SEQ_WIDE_LOOPS; j++)
				cpu_relax();
			WRITE_ONCE(t->b, ~i);
			write_sequnlock(&t->lock);
		}
		t->writes = i;
		smp_store_release(&t->writer_done, 1);
		return;
	}
	u64 reads = 0;
	while (!smp_load_acquire(&t->writer_done)) {
		u64 a, b;
		if (t->checked) {
			u32 seq;
			do {
				seq = read_seqbegin(&t->lock);
				a = READ_ONCE(t->a);
				b = READ_ONCE(t->b);
			} while (read_seqretry(&t->lock, seq));
		} else {
			a = READ_ONCE(t->a);
			b = READ_ONCE(t->b);
		}
		if (b != ~a)
			atomic64_inc(&t->torn);
		/* Publish in batches, so counting does not bounce a line on every read. */
		if (++reads % SEQ_READS_BATCH == 0)
			atomic64_add(&t->reads, SEQ_READS_BATCH);
	}
	atomic64_add(&t->reads, reads % SEQ_READS_BATCH);
}

static struct seq_test seq_test;

static void seq_run(bool checked)
{
	seq_test = (struct seq_test){
	    .lock = SEQLOCK_INIT, .b = ~0ULL, .checked = checked, .writer = smp_processor_id()};
	smp_run_all(seq_worker, &seq_test);
}

TEST(seqlock, readers_never_see_torn_pair)
{
	if (num_online_cpus() < 2) {
		test_skip("needs a reader CPU beside the writer");
		return;
	}
	seq_run(true);
	EXPECT_GE(atomic64_read(&seq_test.reads), SEQ_MIN_READS);
	EXPECT_EQ(atomic64_read(&seq_test.torn), 0);
	EXPECT_EQ(seq_test.lock.count.seq, 2 * seq_test.writes);
}

TEST(seqlock, negative_control_raw_reads_tear)
{
	if (num_online_cpus() < 2) {
		test_skip("needs a reader CPU beside the writer");
		return;
	}
	u64 torn = 0, deadline = arch_clock_ns() + SEQ_MAX_NS;
	do {
		seq_run(false);
		torn = atomic64_read(&seq_test.torn);
	} while (!torn && arch_clock_ns() < deadline);
	EXPECT_GT(torn, 0);
}

/*
 * Writers on several CPUs. Each write reads a, then writes a + 1 and b = ~(a + 1):
 * two writers inside at once would tear the pair for the readers and both write
 * the same a, losing an update. Half the CPUs taking part write, half read, with a
 * fixed total of writes split over the writers.
 *
 * Whether two writers ever are inside at once without the lock would be up to the
 * host, so a writer's first SEQ_MULTI_MEET writes wait inside, between the read of a
 * and the write, until another writer shows up: queued on the writers' spinlock
 * (it cannot get in; the ticket it drew says so) or, were the lock not taken,
 * inside with us; or until every other writer is done. Each writer counts the
 * writers inside when it enters: it must always be itself alone.
 *
 * At most SEQ_MULTI_CPUS take part, and few writes: the writers hand their
 * spinlock on at almost every write, each hand-off to a vCPU that must be running
 * to take it. With all 64 vCPUs busy on 2 host cores that took 6 ms per write; with
 * 6 busy and the rest idle, 8 ms on riscv64 still (its cpu_relax() is a pause,
 * slow under TCG, and the backoff spins on it), well under 1 ms on x86_64.
 */
#define SEQ_MULTI_CPUS 6
#define SEQ_MULTI_WRITES 96
#define SEQ_MULTI_MEET 8

struct seq_multi {
	seqlock_t lock;
	struct smp_sync start;
	unsigned cpus;	    /* taking part: smp_pick_cpus(SEQ_MULTI_CPUS) */
	unsigned writers;   /* CPUs of rank below this write, the others read */
	s32 rank[MAX_CPUS]; /* position among the CPUs taking part */
	u64 a, b;	    /* written under lock; b == ~a between writes */
	atomic_t inside;    /* writers between write_seqlock and write_sequnlock */
	atomic_t crowded;   /* writes that found another writer inside */
	atomic_t writers_done;
	atomic64_t writes __cacheline_aligned; /* added up by the writers when done */
	atomic64_t reads __cacheline_aligned, torn;
};

/* Is anyone queued behind the holder of lock? (Tickets drawn minus served: holder + waiters.) */
static bool spin_has_waiters(spinlock_t *lock)
{
	return spin_tickets_out(lock) > 1;
}

static void seq_multi_write(struct seq_multi *t, bool meet)
{
	write_seqlock(&t->lock);
	if (atomic_inc_return(&t->inside) != 1)
		atomic_inc(&t->crowded);
	u64 a = READ_ONCE(t->a) + 1;
	while (meet && !spin_has_waiters(&t->lock.lock) && atomic_read_acquire(&t->inside) == 1 &&
	       (unsigned)atomic_read_acquire(&t->writers_done) < t->writers - 1)
		cpu_relax();
	WRITE_ONCE(t->a, a);
	for (int j = 0; j < SEQ_WIDE_LOOPS; j++)
		cpu_relax();
	WRITE_ONCE(t->b, ~a);
	atomic_fetch_sub_release(&t->inside, 1);
	write_sequnlock(&t->lock);
}

static void seq_multi_worker(void *arg)
{
	struct seq_multi *t = arg;
	s32 rank = t->rank[smp_processor_id()];
	smp_sync_wait(&t->start, t->cpus);

	if (rank < (s32)t->writers) {
		u64 i = 0, mine = SEQ_MULTI_WRITES / t->writers;
		u64 deadline = arch_clock_ns() + SEQ_MAX_NS;
		/* Our share, then (as in seq_worker) on until the readers have read enough. */
		while (i < mine ||
		       (atomic64_read(&t->reads) < SEQ_MIN_READS && arch_clock_ns() < deadline)) {
			seq_multi_write(t, i < SEQ_MULTI_MEET);
			i++;
		}
		atomic64_add(&t->writes, i);
		atomic_fetch_add_release(&t->writers_done, 1);
		return;
	}
	/*
	 * read_seqbegin() spins while the count is odd. Writers racing without their
	 * lock can leave it odd for good; so look first, and stop once they are done.
	 */
	u64 reads = 0;
	while ((unsigned)atomic_read_acquire(&t->writers_done) < t->writers) {
		u64 a, b;
		u32 seq;
		if (READ_ONCE(t->lock.count.seq) & 1) {
			cpu_relax();
			continue;
		}
		seq = read_seqbegin(&t->lock);
		a = READ_ONCE(t->a);
		b = READ_ONCE(t->b);
		if (read_seqretry(&t->lock, seq))
			continue;
		if (b != ~a)
			atomic64_inc(&t->torn);
		if (++reads % SEQ_READS_BATCH == 0)
			atomic64_add(&t->reads, SEQ_READS_BATCH);
	}
	atomic64_add(&t->reads, reads % SEQ_READS_BATCH);
}

TEST(seqlock, writers_on_several_cpus_never_tear_a_pair_or_lose_a_write)
{
	static struct seq_multi t;
	struct cpumask cpus;
	unsigned cpu, r = 0;

	if (num_online_cpus() < 3) {
		test_skip("needs 3 CPUs: two writers and a reader");
		return;
	}
	t = (struct seq_multi){.lock = SEQLOCK_INIT, .b = ~0ULL};
	preempt_disable();
	t.cpus = smp_pick_cpus(SEQ_MULTI_CPUS, &cpus);
	preempt_enable();
	t.writers = MAX(t.cpus / 2, 2u);
	for_each_cpu(cpu, &cpus)
		t.rank[cpu] = (s32)r++;
	smp_run_on(t.cpus, seq_multi_worker, &t);
	EXPECT_GE(atomic64_read(&t.reads), SEQ_MIN_READS);
	/* Never two writers inside, never a torn pair for the readers. */
	EXPECT_EQ(atomic_read(&t.crowded), 0);
	EXPECT_EQ(atomic64_read(&t.torn), 0);
	/* Every write counted once: none lost to another writer inside at the same time. */
	EXPECT_EQ(t.a, atomic64_read(&t.writes));
	EXPECT_EQ(t.b, ~t.a);
	EXPECT_EQ(t.lock.count.seq, 2 * atomic64_read(&t.writes));
}

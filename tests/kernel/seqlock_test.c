/*
 * seqlock selftest: one CPU writes a pair that must always satisfy b == ~a, the
 * others read it under read_seqbegin/read_seqretry and must never see a torn pair.
 * A negative control reads without the retry loop and must see torn pairs.
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
#define SEQ_WIDE_LOOPS 20	/* between the two halves of a write, to make tearing visible */

struct seq_test {
	seqlock_t lock;
	struct smp_sync start;
	u64 a, b;		/* written under lock; b == ~a between writes */
	u32 writer_done;
	bool checked;		/* readers use the seqlock (true) or read raw (false) */
	unsigned writer;	/* the CPU that writes: the one running the test */
	u64 writes;		/* by the writer */
	/* Added up by the readers as they go, on a line of their own. */
	u64 reads __cacheline_aligned, torn;
};

static void seq_worker(void *arg)
{
	struct seq_test *t = arg;
	smp_sync_wait(&t->start, num_online_cpus());

	if (smp_processor_id() == t->writer) {
		u64 i = 0, deadline = arch_clock_ns() + SEQ_MAX_NS;
		while (i < SEQ_WRITES || (READ_ONCE(t->reads) < SEQ_MIN_READS && arch_clock_ns() < deadline)) {
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
			__atomic_fetch_add(&t->torn, 1, __ATOMIC_RELAXED);
		/* Publish in batches, so counting does not bounce a line on every read. */
		if (++reads % SEQ_READS_BATCH == 0)
			__atomic_fetch_add(&t->reads, SEQ_READS_BATCH, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&t->reads, reads % SEQ_READS_BATCH, __ATOMIC_RELAXED);
}

static struct seq_test seq_test;

static void seq_run(bool checked)
{
	seq_test = (struct seq_test){ .lock = SEQLOCK_INIT, .b = ~0ULL, .checked = checked,
				     .writer = smp_processor_id() };
	smp_run_all(seq_worker, &seq_test);
}

TEST(seqlock, readers_never_see_torn_pair)
{
	if (num_online_cpus() < 2) {
		test_skip("needs a reader CPU beside the writer");
		return;
	}
	seq_run(true);
	EXPECT_GE(seq_test.reads, SEQ_MIN_READS);
	EXPECT_EQ(seq_test.torn, 0);
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
		torn = seq_test.torn;
	} while (!torn && arch_clock_ns() < deadline);
	EXPECT_GT(torn, 0);
}

/*
 * Bit-locked hash list (list_bl) selftests: every CPU inserts into and deletes
 * from a few buckets under their bit locks while walking them as RCU readers,
 * and no reader finds garbage, a node of another bucket, a poisoned or locked
 * next pointer, or a chain that does not strictly age (which a loop or a lost
 * link would break); afterwards each bucket holds exactly the nodes that were
 * not deleted, each linked back to by its pprev, and no lock bit is left. And
 * deleting a bucket's first node keeps the bucket locked.
 */
#include <grace/list_bl.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>

#define LISTBL_BUCKETS 4
/*
 * Inserts over all CPUs, each with a delete and a walk: bit-lock hand-offs whose
 * waiters spin, so a fixed total split over the CPUs (as bit_spinlock_test.c).
 */
#define LISTBL_TOTAL 2048
#define LISTBL_MIN_PER_CPU 16
#define LISTBL_KEEP_DIV 4 /* each CPU's last quarter of its nodes stays on the lists */
#define LISTBL_MAGIC 0x6c6973u

struct lb_item {
	struct hlist_bl_node node;
	u64 seq;       /* the bucket's insertion number, set under its lock before publication */
	u32 magic;     /* LISTBL_MAGIC once initialised */
	u32 bucket;    /* the one bucket it is ever added to */
	u32 in;	       /* on its bucket now; written by its CPU only */
	u32 found;     /* seen by the final check */
	bool del_init; /* deleted with hlist_bl_del_init_rcu() rather than _del_rcu() */
};

static struct hlist_bl_head lb_heads[LISTBL_BUCKETS];
static u64 lb_seq[LISTBL_BUCKETS]; /* under the bucket's lock */
static struct lock_class_key lb_heads_key;

struct lb_test {
	struct lb_item *items; /* per_cpu for each CPU, CPU by CPU */
	unsigned per_cpu, keep, nr_items;
	struct smp_sync start;
	atomic_t garbage, wrong_bucket, locked_next, poisoned_next, not_aging, too_long;
	atomic64_t walked;
};

static void lb_setup(void)
{
	/* The validator's class for the buckets' locks: the whole table, in bytes. */
	bit_spin_lock_set_class(lb_heads, sizeof(lb_heads), &lb_heads_key, "list_bl_test.heads");
	for (unsigned b = 0; b < LISTBL_BUCKETS; b++) {
		hlist_bl_init_head(&lb_heads[b]);
		lb_seq[b] = 0;
	}
}

/* An RCU reader's walk of bucket b, checking every node it reaches. */
static void lb_walk(struct lb_test *t, unsigned b)
{
	struct lb_item *it;
	u64 prev = ~0ULL;
	unsigned steps = 0;
	rcu_read_lock();
	hlist_bl_for_each_entry_rcu(it, &lb_heads[b], node)
	{
		if (++steps > t->nr_items) {
			atomic_inc(&t->too_long); /* more nodes than exist: a loop */
			break;
		}
		if (it->magic != LISTBL_MAGIC) {
			atomic_inc(&t->garbage);
			break;
		}
		if (it->bucket != b)
			atomic_inc(&t->wrong_bucket);
		/* Head insertion: each step goes to an older node, or a link went wrong. */
		if (it->seq >= prev)
			atomic_inc(&t->not_aging);
		prev = it->seq;
		uintptr_t next = (uintptr_t)rcu_dereference(it->node.next);
		if (next & HLIST_BL_LOCK_MASK) {
			atomic_inc(&t->locked_next);
			break; /* not a pointer to follow */
		}
		if (next == (uintptr_t)RCU_LIST_POISON) {
			atomic_inc(&t->poisoned_next);
			break;
		}
	}
	rcu_read_unlock();
	atomic64_add(&t->walked, steps);
}

static void lb_worker(void *arg)
{
	struct lb_test *t = arg;
	unsigned cpu = smp_processor_id();
	struct lb_item *mine = &t->items[(size_t)cpu * t->per_cpu];

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned i = 0; i < t->per_cpu; i++) {
		struct lb_item *it = &mine[i];
		struct hlist_bl_head *h = &lb_heads[it->bucket];
		hlist_bl_lock(h);
		it->seq = ++lb_seq[it->bucket];
		hlist_bl_add_head_rcu(&it->node, h);
		hlist_bl_unlock(h);
		it->in = 1;

		/* Each node stays for `keep` inserts of its CPU, then goes: the last stay. */
		if (i >= t->keep) {
			struct lb_item *old = &mine[i - t->keep];
			h = &lb_heads[old->bucket];
			hlist_bl_lock(h);
			if (old->del_init)
				hlist_bl_del_init_rcu(&old->node);
			else
				hlist_bl_del_rcu(&old->node);
			hlist_bl_unlock(h);
			old->in = 0;
		}
		lb_walk(t, (cpu + i) % LISTBL_BUCKETS);
	}
}

/* Under bucket b's lock: its nodes are the ones marked in, each linked back to. */
static unsigned lb_check_bucket(struct lb_test *t, unsigned b)
{
	struct hlist_bl_head *h = &lb_heads[b];
	struct lb_item *it;
	unsigned n = 0;
	hlist_bl_lock(h);
	hlist_bl_for_each_entry(it, h, node)
	{
		if (!EXPECT_LE(++n, t->nr_items))
			break;
		EXPECT_EQ(it->magic, LISTBL_MAGIC);
		EXPECT_EQ(it->bucket, b);
		EXPECT_EQ(it->in, 1);
		EXPECT_EQ(it->found, 0);
		it->found = 1;
		EXPECT_EQ((uintptr_t)it->node.next & HLIST_BL_LOCK_MASK, 0);
		EXPECT_TRUE(it->node.pprev != (struct hlist_bl_node **)RCU_LIST_POISON);
		EXPECT_TRUE(hlist_bl_unmask(*it->node.pprev) == &it->node);
	}
	hlist_bl_unlock(h);
	EXPECT_FALSE(hlist_bl_is_locked(h));
	return n;
}

TEST(list_bl, concurrent_inserts_deletes_and_rcu_walks_keep_every_bucket_exact)
{
	static struct lb_test t;
	unsigned ncpus = num_online_cpus();
	lb_setup();
	t = (struct lb_test){.per_cpu = MAX(LISTBL_TOTAL / ncpus, (unsigned)LISTBL_MIN_PER_CPU)};
	t.keep = t.per_cpu / LISTBL_KEEP_DIV;
	unsigned cpu, slots = 0;
	for_each_online_cpu(cpu)
		slots = MAX(slots, cpu + 1);
	t.nr_items = slots * t.per_cpu;
	t.items = kzalloc((size_t)t.nr_items * sizeof(*t.items));
	ASSERT_TRUE(t.items != NULL);
	for (unsigned i = 0; i < t.nr_items; i++) {
		struct lb_item *it = &t.items[i];
		hlist_bl_init_node(&it->node);
		it->magic = LISTBL_MAGIC;
		/* A CPU's consecutive nodes in different buckets, CPUs shifted apart. */
		it->bucket = (i / t.per_cpu + i) % LISTBL_BUCKETS;
		it->del_init = i % 2;
	}

	smp_run_all(lb_worker, &t);

	EXPECT_EQ(atomic_read(&t.garbage), 0);
	EXPECT_EQ(atomic_read(&t.wrong_bucket), 0);
	EXPECT_EQ(atomic_read(&t.locked_next), 0);
	EXPECT_EQ(atomic_read(&t.poisoned_next), 0);
	EXPECT_EQ(atomic_read(&t.not_aging), 0);
	EXPECT_EQ(atomic_read(&t.too_long), 0);
	EXPECT_GT(atomic64_read(&t.walked), 0);

	unsigned listed = 0;
	for (unsigned b = 0; b < LISTBL_BUCKETS; b++)
		listed += lb_check_bucket(&t, b);
	EXPECT_EQ(listed, ncpus * t.keep);
	for_each_online_cpu(cpu)
		for (unsigned i = 0; i < t.per_cpu; i++) {
			struct lb_item *it = &t.items[(size_t)cpu * t.per_cpu + i];
			bool kept = i >= t.per_cpu - t.keep;
			EXPECT_EQ(it->found, kept);
			if (kept)
				continue;
			/* Deleted: unhashed, or poisoned behind and still pointing ahead. */
			if (it->del_init)
				EXPECT_TRUE(hlist_bl_unhashed(&it->node));
			else
				EXPECT_TRUE(it->node.pprev ==
					    (struct hlist_bl_node **)RCU_LIST_POISON);
			if (test_failed())
				break;
		}

	/* Nobody walks any more (smp_run_all returned): take the rest off and free. */
	for (unsigned b = 0; b < LISTBL_BUCKETS; b++) {
		hlist_bl_lock(&lb_heads[b]);
		struct hlist_bl_node *n;
		while ((n = hlist_bl_first(&lb_heads[b])))
			hlist_bl_del_init_rcu(n);
		hlist_bl_unlock(&lb_heads[b]);
		EXPECT_TRUE(lb_heads[b].first == NULL);
	}
	kfree(t.items);
}

TEST(list_bl, deleting_the_first_node_keeps_the_bucket_locked)
{
	static struct hlist_bl_node a, b;
	struct hlist_bl_head *h = &lb_heads[0];
	lb_setup();
	hlist_bl_init_node(&a);
	hlist_bl_init_node(&b);
	EXPECT_TRUE(hlist_bl_unhashed(&a));

	hlist_bl_lock(h);
	EXPECT_TRUE(hlist_bl_is_locked(h));
	EXPECT_TRUE(hlist_bl_first(h) == NULL);
	hlist_bl_add_head_rcu(&a, h);
	hlist_bl_add_head_rcu(&b, h);
	EXPECT_TRUE(hlist_bl_is_locked(h));
	EXPECT_TRUE(hlist_bl_first(h) == &b);
	EXPECT_TRUE(hlist_bl_first_rcu(h) == &b);
	EXPECT_TRUE(b.next == &a);
	EXPECT_TRUE(a.pprev == &b.next);
	EXPECT_FALSE(hlist_bl_unhashed(&a));

	/* b's pprev is the head's word, which holds the lock bit too. */
	hlist_bl_del_rcu(&b);
	EXPECT_TRUE(hlist_bl_is_locked(h));
	EXPECT_TRUE(hlist_bl_first(h) == &a);
	EXPECT_TRUE(a.pprev == &h->first);
	EXPECT_TRUE(b.next == &a); /* a reader on b still steps to a */
	EXPECT_TRUE(b.pprev == (struct hlist_bl_node **)RCU_LIST_POISON);

	hlist_bl_del_init_rcu(&a);
	EXPECT_TRUE(hlist_bl_unhashed(&a));
	EXPECT_TRUE(hlist_bl_is_locked(h));
	EXPECT_TRUE(hlist_bl_first(h) == NULL);
	hlist_bl_del_init_rcu(&a); /* already off: nothing */
	EXPECT_TRUE(hlist_bl_is_locked(h));
	hlist_bl_unlock(h);

	EXPECT_FALSE(hlist_bl_is_locked(h));
	EXPECT_TRUE(h->first == NULL);
}

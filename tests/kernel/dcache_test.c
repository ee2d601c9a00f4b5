/*
 * White-box tests of the dentry cache's mechanisms, each made to fail by one
 * of tests/mutants: the d_seq check of the lockless lookup, the grace period
 * before a dentry's memory is reused, the bucket lock on insert, and the
 * per-CPU counters' slots.
 */
#include <grace/atomic.h>
#include <grace/cpumask.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>

#include <asm/cpu.h>

#include <fs/internal.h>

/* Another online CPU than this one, or -1 on a single CPU. */
static int other_cpu(void)
{
	unsigned cpu, me = smp_processor_id();
	for_each_online_cpu(cpu)
		if (cpu != me)
			return cpu;
	return -1;
}

/* Run fn(arg) in a thread on cpu and wait for it. */
static int run_thread_on(int (*fn)(void *), void *arg, unsigned cpu)
{
	struct task *t = kthread_create_on_cpu(fn, arg, cpu, "dcache_test");
	if (!t)
		return -ENOMEM;
	wake_up_process(t);
	return kthread_join(t);
}

/*
 * A call on another CPU that the caller releases and waits for without sleeping:
 * from inside an RCU read-side section, where the caller must not schedule.
 */
struct remote_call {
	int (*fn)(void *);
	void *arg;
	u32 go, done;
	int ret;
	struct task *t;
};

static int remote_call_thread(void *arg)
{
	struct remote_call *rc = arg;
	while (!smp_load_acquire(&rc->go))
		cpu_relax();
	rc->ret = rc->fn(rc->arg);
	smp_store_release(&rc->done, 1);
	return 0;
}

static bool remote_call_prepare(struct remote_call *rc, unsigned cpu)
{
	rc->go = rc->done = 0;
	rc->t = kthread_create_on_cpu(remote_call_thread, rc, cpu, "dcache_test");
	if (rc->t)
		wake_up_process(rc->t);
	return rc->t != NULL;
}

/* Run it now and spin until it returned. */
static int remote_call_run(struct remote_call *rc)
{
	smp_store_release(&rc->go, 1);
	while (!smp_load_acquire(&rc->done))
		cpu_relax();
	return rc->ret;
}

/*
 * At the end of each test: free the unused dentries it left and wait for every
 * deferred free, so that later tests counting free memory see none of it happen.
 */
static void dcache_test_settle(void)
{
	while (dcache_shrink(~0UL))
		;
	rcu_barrier();
}

static struct qstr qstr_of(const char *name)
{
	return (struct qstr){name_hash(name, strlen(name)), strlen(name), name};
}

/* The dentry of path's directory, with a reference. */
static struct dentry *dentry_of(const char *path)
{
	struct path p;
	if (path_lookup(path, LOOKUP_FOLLOW, &p))
		return NULL;
	mnt_put(p.mnt);
	return p.dentry;
}

static int make_file(const char *path)
{
	int fd = vfs_open(path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return fd;
	return vfs_close(fd);
}

struct rename_args {
	const char *from, *to;
};

static int rename_fn(void *arg)
{
	struct rename_args *a = arg;
	return vfs_rename(a->from, a->to, 0);
}

/* A dentry in the middle of a d_seq write (a rename, an unlink) is never returned as valid. */
TEST(dcache, lookup_rcu_rejects_dentry_being_written)
{
	ASSERT_EQ(vfs_mkdir("/dc-seq", 0755), 0);
	ASSERT_EQ(make_file("/dc-seq/x"), 0);
	struct dentry *dir = dentry_of("/dc-seq");
	ASSERT_TRUE(dir != NULL);
	struct qstr q = qstr_of("x");
	u32 seq;

	rcu_read_lock();
	struct dentry *d = d_lookup_rcu(dir, &q, &seq);
	EXPECT_TRUE(d != NULL);
	EXPECT_TRUE(d && d_seq_valid(d, seq));
	rcu_read_unlock();

	if (d) {
		d_lock(d);
		write_seqcount_begin(&d->d_seq);
		rcu_read_lock();
		struct dentry *again = d_lookup_rcu(dir, &q, &seq);
		EXPECT_TRUE(again == NULL || !d_seq_valid(again, seq));
		rcu_read_unlock();
		write_seqcount_end(&d->d_seq);
		d_unlock(d);
	}
	dput(dir);
	EXPECT_EQ(vfs_unlink("/dc-seq/x"), 0);
	EXPECT_EQ(vfs_rmdir("/dc-seq"), 0);
	dcache_test_settle();
}

/* A walker that found a dentry before a rename sees its d_seq changed after it. */
TEST(dcache, rename_invalidates_walkers_seq)
{
	int cpu = other_cpu();
	if (cpu < 0) {
		test_skip("needs a second CPU");
		return;
	}
	ASSERT_EQ(vfs_mkdir("/dc-ren", 0755), 0);
	ASSERT_EQ(make_file("/dc-ren/a"), 0);
	struct dentry *dir = dentry_of("/dc-ren");
	ASSERT_TRUE(dir != NULL);
	struct qstr q = qstr_of("a");
	struct rename_args args = {"/dc-ren/a", "/dc-ren/b"};
	u32 seq;

	/* Hold a reference so the dentry stays this one whatever the rename does. */
	struct dentry *d = d_lookup(dir, &q);
	ASSERT_TRUE(d != NULL);
	rcu_read_lock();
	struct dentry *seen = d_lookup_rcu(dir, &q, &seq);
	rcu_read_unlock();
	EXPECT_TRUE(seen == d);
	EXPECT_EQ(run_thread_on(rename_fn, &args, cpu), 0);
	EXPECT_FALSE(d_seq_valid(d, seq));
	EXPECT_EQ(d->d_name.len, 1);
	EXPECT_EQ(d->d_name.name[0], 'b');
	dput(d);
	dput(dir);
	EXPECT_EQ(vfs_unlink("/dc-ren/b"), 0);
	EXPECT_EQ(vfs_rmdir("/dc-ren"), 0);
	dcache_test_settle();
}

/*
 * A reader inside rcu_read_lock keeps a dentry it found from being freed, even
 * after a rename on another CPU replaces it and drops its last reference.
 */
TEST(dcache, freed_only_after_readers)
{
	int cpu = other_cpu();
	if (cpu < 0) {
		test_skip("needs a second CPU");
		return;
	}
	ASSERT_EQ(vfs_mkdir("/dc-free", 0755), 0);
	ASSERT_EQ(make_file("/dc-free/a"), 0);
	ASSERT_EQ(make_file("/dc-free/b"), 0);
	struct dentry *dir = dentry_of("/dc-free");
	ASSERT_TRUE(dir != NULL);
	struct qstr q = qstr_of("b");
	struct rename_args args = {"/dc-free/a", "/dc-free/b"};
	u32 seq;

	struct remote_call rc = {.fn = rename_fn, .arg = &args};
	ASSERT_TRUE(remote_call_prepare(&rc, cpu));
	rcu_barrier();
	long before = vfs_count_sum(NR_DENTRY);
	rcu_read_lock();
	struct dentry *victim = d_lookup_rcu(dir, &q, &seq);
	EXPECT_TRUE(victim != NULL);
	/* The rename unhashes b's dentry and its last dput frees it: after a grace period. */
	EXPECT_EQ(remote_call_run(&rc), 0);
	EXPECT_EQ(vfs_count_sum(NR_DENTRY), before);
	if (victim) {
		EXPECT_EQ(victim->d_name.len, 1);
		EXPECT_EQ(victim->d_name.name[0], 'b');
		EXPECT_TRUE(victim->d_parent == dir);
	}
	rcu_read_unlock();
	kthread_join(rc.t);
	rcu_barrier();
	EXPECT_EQ(vfs_count_sum(NR_DENTRY), before - 1);
	dput(dir);
	EXPECT_EQ(vfs_unlink("/dc-free/b"), 0);
	EXPECT_EQ(vfs_rmdir("/dc-free"), 0);
	dcache_test_settle();
}

/* Every CPU hashes dentries of one name under one parent: one bucket, hammered. */
#define SAME_BUCKET_PER_CPU 64
static struct dentry *same_bucket_dir;
static struct dentry *same_bucket[MAX_CPUS][SAME_BUCKET_PER_CPU];

static void same_bucket_insert(void *arg)
{
	unsigned cpu = smp_processor_id();
	struct qstr q = qstr_of("same");
	for (unsigned i = 0; i < SAME_BUCKET_PER_CPU; i++) {
		struct dentry *d = d_alloc(same_bucket_dir, &q);
		if (d)
			d_add(d, NULL);
		same_bucket[cpu][i] = d;
	}
}

TEST(dcache, bucket_insert_keeps_every_entry)
{
	ASSERT_EQ(vfs_mkdir("/dc-bucket", 0755), 0);
	same_bucket_dir = dentry_of("/dc-bucket");
	ASSERT_TRUE(same_bucket_dir != NULL);
	memset(same_bucket, 0, sizeof(same_bucket));
	smp_run_all(same_bucket_insert, NULL);

	/* Count, in the chain d_lookup_rcu walks, the dentries that were made. */
	struct qstr q = qstr_of("same");
	unsigned made = 0, found = 0, cpu;
	for_each_online_cpu(cpu)
		for (unsigned i = 0; i < SAME_BUCKET_PER_CPU; i++)
			made += same_bucket[cpu][i] != NULL;
	rcu_read_lock();
	struct dentry *first;
	u32 seq;
	first = d_lookup_rcu(same_bucket_dir, &q, &seq);
	if (first) {
		struct hlist_bl_node *n = &first->d_hash;
		/* Bounded: a chain broken by an unlocked insert could loop. */
		for (unsigned steps = 0; n && steps < 4 * made + 64; steps++) {
			struct dentry *d = container_of(n, struct dentry, d_hash);
			found += d->d_parent == same_bucket_dir && d->d_name.len == q.len &&
				 !memcmp(d->d_name.name, q.name, q.len);
			n = rcu_dereference(n->next);
		}
	}
	rcu_read_unlock();
	EXPECT_EQ(found, made);
	EXPECT_EQ(made, SAME_BUCKET_PER_CPU * cpumask_weight(&cpu_online_mask));

	for_each_online_cpu(cpu)
		for (unsigned i = 0; i < SAME_BUCKET_PER_CPU; i++)
			if (same_bucket[cpu][i]) {
				d_drop(same_bucket[cpu][i]);
				dput(same_bucket[cpu][i]);
			}
	dput(same_bucket_dir);
	EXPECT_EQ(vfs_rmdir("/dc-bucket"), 0);
	dcache_test_settle();
}

struct slot_args {
	long before[MAX_CPUS], after_create[MAX_CPUS], after_unlink[MAX_CPUS];
	int err;
};

static void snapshot(long *slots)
{
	unsigned cpu;
	for_each_online_cpu(cpu)
		slots[cpu] = vfs_count_slot(NR_INODE, cpu);
}

static int slot_fn(void *arg)
{
	struct slot_args *a = arg;
	snapshot(a->before);
	a->err = make_file("/dc-slot");
	snapshot(a->after_create);
	if (!a->err)
		a->err = vfs_unlink("/dc-slot");
	snapshot(a->after_unlink);
	return 0;
}

/* A count changes in the slot of the CPU that counts it, and in no other. */
TEST(dcache, counters_update_own_slot)
{
	int cpu = other_cpu();
	if (cpu < 0)
		cpu = smp_processor_id();
	static struct slot_args a;
	unsigned c;

	/* Inodes: made and (typesafe) freed by the calls themselves, on the calling CPU. */
	enum inode_free_mode saved = inode_get_free_mode();
	inode_set_free_mode(INODE_FREE_TYPESAFE);
	rcu_barrier();
	ASSERT_EQ(run_thread_on(slot_fn, &a, cpu), 0);
	inode_set_free_mode(saved);
	ASSERT_EQ(a.err, 0);
	for_each_online_cpu(c) {
		long made = (long)(c == (unsigned)cpu);
		EXPECT_EQ(a.after_create[c] - a.before[c], made);
		EXPECT_EQ(a.after_unlink[c] - a.before[c], 0);
	}
	dcache_test_settle();
}

/*
 * A create makes a negative dentry on the LRU positive and pins it: vfs=scalable
 * leaves it on the LRU (no global lock), and the shrinker takes it off without
 * freeing it; vfs=global takes it off at once.
 */
static void pin_on_lru(enum vfs_mode mode)
{
	struct stat st;
	enum vfs_mode saved = vfs_get_mode();
	vfs_set_mode(mode);
	EXPECT_EQ(vfs_stat("/dc-pin", &st), -ENOENT); /* a negative dentry, unused: on the LRU */
	EXPECT_EQ(make_file("/dc-pin"), 0);
	struct dentry *d = dentry_of("/dc-pin");
	ASSERT_TRUE(d != NULL);
	EXPECT_TRUE(d->d_flags & DCACHE_PINNED);
	EXPECT_EQ(!!(d->d_flags & DCACHE_LRU), mode == VFS_SCALABLE);
	dput(d);
	while (dcache_shrink(~0UL))
		;
	EXPECT_FALSE(d->d_flags & DCACHE_LRU);
	EXPECT_EQ(vfs_stat("/dc-pin", &st), 0);
	EXPECT_EQ(vfs_unlink("/dc-pin"), 0);
	vfs_set_mode(saved);
	dcache_test_settle();
}

TEST(dcache, create_leaves_pinned_dentry_on_lru_until_shrink)
{
	pin_on_lru(VFS_SCALABLE);
	pin_on_lru(VFS_GLOBAL);
}

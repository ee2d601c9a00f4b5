/*
 * White-box tests of the inode cache: lookups by number, and the revalidation
 * that lets a lockless lookup stand on memory a SLAB_TYPESAFE_BY_RCU cache has
 * already handed to another inode.
 */
#include <grace/atomic.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/smp.h>
#include <grace/test.h>
#include <asm/cpu.h>

#include <fs/internal.h>

static struct inode *inode_of(const char *path)
{
	struct path p;
	if (path_lookup(path, 0, &p))
		return NULL;
	struct inode *inode = igrab(p.dentry->d_inode);
	path_put(&p);
	return inode;
}

static int make_file(const char *path)
{
	int fd = vfs_open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	return fd < 0 ? fd : vfs_close(fd);
}

/* ilookup finds a live inode by number, and nothing once it is gone. */
TEST(icache, ilookup_finds_live_inodes_only)
{
	ASSERT_EQ(make_file("/ic-live"), 0);
	struct inode *inode = inode_of("/ic-live");
	ASSERT_TRUE(inode != NULL);
	u64 ino = inode->i_ino;
	struct super_block *sb = inode->i_sb;

	struct inode *found = ilookup(sb, ino);
	EXPECT_TRUE(found == inode);
	if (found)
		iput(found);
	iput(inode);
	EXPECT_EQ(vfs_unlink("/ic-live"), 0);
	EXPECT_TRUE(ilookup(sb, ino) == NULL);
	EXPECT_TRUE(ilookup(sb, ~0ull) == NULL);
}

/*
 * A lookup that found an inode's memory before the inode was freed, and looks
 * at it after (the cache may have made it another inode meanwhile), must not
 * take it: typesafe memory stays an inode, not the same one.
 */
TEST(icache, revalidation_refuses_freed_and_reused_memory)
{
	enum inode_free_mode saved = inode_get_free_mode();
	inode_set_free_mode(INODE_FREE_TYPESAFE);
	ASSERT_EQ(make_file("/ic-old"), 0);
	struct inode *old = inode_of("/ic-old");
	ASSERT_TRUE(old != NULL);
	u64 ino = old->i_ino;
	struct super_block *sb = old->i_sb;

	/* A reader's view: the memory, found under RCU, while the inode goes away. */
	rcu_read_lock();
	EXPECT_TRUE(inode_take_if(old, sb, ino));
	iput(old); /* the reference just taken */
	rcu_read_unlock();
	iput(old);
	EXPECT_EQ(vfs_unlink("/ic-old"), 0);
	/* Freed: the memory is an inode of the cache, marked on its way out. */
	EXPECT_FALSE(inode_take_if(old, sb, ino));

	/* New inodes may reuse the memory: none may pass for the old number. */
	bool reused = false;
	char name[32];
	for (unsigned i = 0; i < 16 && !reused; i++) {
		snprintf(name, sizeof(name), "/ic-new%u", i);
		EXPECT_EQ(make_file(name), 0);
		struct inode *n = inode_of(name);
		if (n) {
			reused |= n == old;
			iput(n);
		}
	}
	EXPECT_FALSE(inode_take_if(old, sb, ino));
	for (unsigned i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "/ic-new%u", i);
		vfs_unlink(name);
	}
	inode_set_free_mode(saved);
	rcu_barrier();
	/* Reused or not, the checks above hold; the line says which case this run saw. */
	printk("# icache: freed inode's memory %s\n", reused ? "reused" : "not reused");
}

/* Two CPUs make inodes in turn: A, B, A, B. */
static struct ino_turns {
	struct super_block *sb;
	atomic_t sides, turn;
	struct inode *made[4];
} turns;

static void ino_turns_side(void *arg)
{
	unsigned side = (unsigned)atomic_inc_return(&turns.sides) - 1;
	if (side > 1)
		return;
	for (unsigned t = side; t < 4; t += 2) {
		while (atomic_read(&turns.turn) != (int)t)
			cpu_relax();
		turns.made[t] = new_inode(turns.sb, S_IFREG | 0644);
		atomic_inc(&turns.turn);
	}
}

/*
 * vfs=scalable: each CPU takes its inode numbers from its own batch, so a CPU's
 * next number follows its last one whatever the other CPUs made meanwhile (one
 * of the two may have reached the end of its batch). vfs=global takes each from
 * the shared counter.
 */
TEST(icache, inode_numbers_come_from_a_per_cpu_batch)
{
	if (num_online_cpus() < 2) {
		test_skip("needs two CPUs");
		return;
	}
	enum vfs_mode saved = vfs_get_mode();
	for (unsigned m = 0; m < 2; m++) {
		enum vfs_mode mode = m ? VFS_GLOBAL : VFS_SCALABLE;
		vfs_set_mode(mode);
		turns = (struct ino_turns){.sb = root_mnt.mnt_sb};
		smp_run_on(2, ino_turns_side, NULL);
		u64 n[4];
		for (unsigned t = 0; t < 4; t++) {
			ASSERT_TRUE(turns.made[t] != NULL);
			n[t] = turns.made[t]->i_ino;
		}
		bool own_run = n[2] == n[0] + 1 || n[3] == n[1] + 1;
		EXPECT_EQ(own_run, mode == VFS_SCALABLE);
		if (mode == VFS_GLOBAL)
			EXPECT_TRUE(n[1] == n[0] + 1 && n[2] == n[1] + 1 && n[3] == n[2] + 1);
		for (unsigned t = 0; t < 4; t++)
			for (unsigned u = t + 1; u < 4; u++)
				EXPECT_TRUE(n[t] != n[u]);
		for (unsigned t = 0; t < 4; t++)
			iput(turns.made[t]);
	}
	vfs_set_mode(saved);
}

/* Four numbers in a row hash to four buckets in a row: one cache line, written by one CPU. */
TEST(icache, consecutive_numbers_share_a_line_of_buckets)
{
	struct super_block *sb = root_mnt.mnt_sb;
	unsigned far = 0;
	for (u64 base = 4096; base < 4096 + 64 * 4; base += 4) {
		u32 first = inode_hash_index(sb, base);
		for (u64 i = 1; i < 4; i++)
			EXPECT_EQ(inode_hash_index(sb, base + i), first + (u32)i);
		far += inode_hash_index(sb, base + 4) != first + 4;
	}
	/* The runs themselves are hashed, not laid end to end. */
	EXPECT_TRUE(far > 32);
}

/*
 * White-box tests of the inode cache: lookups by number, and the revalidation
 * that lets a lockless lookup stand on memory a SLAB_TYPESAFE_BY_RCU cache has
 * already handed to another inode.
 */
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/test.h>

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
	int fd = sys_open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	return fd < 0 ? fd : sys_close(fd);
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
	EXPECT_EQ(sys_unlink("/ic-live"), 0);
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
	EXPECT_EQ(sys_unlink("/ic-old"), 0);
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
		sys_unlink(name);
	}
	inode_set_free_mode(saved);
	rcu_barrier();
	/* Reused or not, the checks above hold; the line says which case this run saw. */
	printk("# icache: freed inode's memory %s\n", reused ? "reused" : "not reused");
}

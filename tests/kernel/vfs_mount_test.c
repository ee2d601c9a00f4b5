/*
 * Mounts and the operation tables: a file system defined here, with a few
 * operations of its own, mounted on a directory of the test's. Every lookup and
 * creation in it must reach it through its tables (each operation counts its
 * calls), walks must cross into it and back out through "..", and the calls
 * that would join two mounts must refuse as Linux does (EXDEV, EBUSY).
 */
#include <grace/fs.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/uio.h>

#include <fs/internal.h>

#include "vfs_test_util.h"

/*
 * testfs: a directory whose lookup knows one name, "fixed", a file whose read
 * gives fixed_text, and which makes files on create.
 */
static struct {
	int lookups, creates, reads;
	struct super_block *sb;
} tfs;

static const char fixed_text[] = "read through testfs's read_iter\n";

static const struct inode_operations tfs_file_iops = {0};

static long tfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	tfs.reads++;
	s64 left = (s64)sizeof(fixed_text) - 1 - iocb->ki_pos;
	if (left <= 0)
		return 0;
	size_t n =
	    copy_to_iter(fixed_text + iocb->ki_pos, MIN((size_t)left, iov_iter_count(to)), to);
	iocb->ki_pos += n;
	return n;
}

static const struct file_operations tfs_file_fops = {
    .read_iter = tfs_read_iter,
    .llseek = generic_file_llseek,
};

static int tfs_lookup(struct inode *dir, struct dentry *d)
{
	tfs.lookups++;
	if (d->d_name.len == 5 && !memcmp(d->d_name.name, "fixed", 5)) {
		struct inode *inode = new_inode(dir->i_sb, S_IFREG | 0444);
		if (!inode)
			return -ENOMEM;
		inode->i_op = &tfs_file_iops;
		inode->i_fop = &tfs_file_fops;
		inode->i_size = sizeof(fixed_text) - 1;
		simple_add(d, inode);
		return 0;
	}
	return simple_lookup(dir, d);
}

static int tfs_create(struct inode *dir, struct dentry *d, u32 mode)
{
	tfs.creates++;
	struct inode *inode = new_inode(dir->i_sb, mode);
	if (!inode)
		return -ENOMEM;
	inode->i_op = &tfs_file_iops;
	d_instantiate(d, inode);
	d_pin(d);
	return 0;
}

static int tfs_unlink(struct inode *dir, struct dentry *d)
{
	d_unpin(d);
	return 0;
}

static const struct inode_operations tfs_dir_iops = {
    .lookup = tfs_lookup,
    .create = tfs_create,
    .unlink = tfs_unlink,
};

static int tfs_mount_on(const char *dir, struct path *mnt_root)
{
	tfs = (typeof(tfs)){0};
	tfs.sb = sb_alloc("testfs", NULL, S_IFDIR | 0755);
	if (!tfs.sb)
		return -ENOMEM;
	tfs.sb->s_root->d_inode->i_op = &tfs_dir_iops;
	struct path where;
	int err = path_lookup(dir, LOOKUP_DIRECTORY, &where);
	if (!err)
		err = vfs_mount(tfs.sb, &where);
	if (!err)
		path_put(&where);
	if (!err)
		err = path_lookup(dir, LOOKUP_DIRECTORY, mnt_root);
	return err;
}

/* Take testfs down and free its tree: its names (pinned), root and superblock. */
static void tfs_umount(struct path *mnt_root)
{
	EXPECT_EQ(vfs_umount(mnt_root), 0);
	struct dentry *root = tfs.sb->s_root, *child, *next;
	/* Each name made negative and unused, then all of them freed with the root. */
	list_for_each_entry_safe(child, next, &root->d_subdirs, d_child) {
		if (!child->d_inode)
			continue;
		dget(child);
		d_unpin(child);
		d_delete(child);
		dput(child);
	}
	d_prune_negative_children(root);
	d_put_root(root);
	/* Every dentry and inode of it reclaimed, and no lockless walker left on one. */
	vfs_settle(true);
	kfree(tfs.sb);
	tfs.sb = NULL;
}

static void mounted_body(const char *dir)
{
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "mnt"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "other"), 0755), 0);
	struct path root;
	ASSERT_EQ(tfs_mount_on(vfs_at(dir, "mnt"), &root), 0);

	/* The walk crosses into testfs: its root, its own device, its lookup. */
	struct stat st, top;
	EXPECT_EQ(root.mnt->mnt_sb, tfs.sb);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/fixed"), &st), 0);
	EXPECT_EQ(st.st_size, (s64)sizeof(fixed_text) - 1);
	EXPECT_EQ(st.st_dev, tfs.sb->s_dev);
	EXPECT_EQ(vfs_stat(dir, &top), 0);
	EXPECT_NE(st.st_dev, top.st_dev);
	EXPECT_EQ(tfs.lookups, 1);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/missing"), &st), -ENOENT);
	EXPECT_EQ(tfs.lookups, 2);
	/* Cached now, the positive name and the negative one: no more lookups. */
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/fixed"), &st), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/missing"), &st), -ENOENT);
	EXPECT_EQ(tfs.lookups, 2);

	/* Reads go to its read_iter, positions to its llseek; a write it has none for is -EINVAL.
	 */
	char buf[64] = {0};
	int rfd = vfs_open(vfs_at(dir, "mnt/fixed"), O_RDWR, 0);
	EXPECT_GE(rfd, 0);
	EXPECT_EQ(vfs_read(rfd, buf, 5), 5);
	EXPECT_EQ(vfs_read(rfd, buf + 5, sizeof(buf) - 6), (long)sizeof(fixed_text) - 6);
	EXPECT_EQ(strcmp(buf, fixed_text), 0);
	EXPECT_EQ(tfs.reads, 2);
	EXPECT_EQ(vfs_lseek(rfd, 0, SEEK_SET), 0);
	EXPECT_EQ(vfs_pread(rfd, buf, 4, 5), 4);
	EXPECT_EQ(memcmp(buf, "thro", 4), 0);
	EXPECT_EQ(vfs_write(rfd, "x", 1), -EINVAL);
	EXPECT_EQ(vfs_close(rfd), 0);

	/* Creation goes to its create; what it has no operation for is refused. */
	int fd = vfs_open(vfs_at(dir, "mnt/made"), O_CREAT | O_RDONLY, 0644);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(tfs.creates, 1);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "mnt/d"), 0755), -EPERM);
	EXPECT_EQ(vfs_symlink("x", vfs_at(dir, "mnt/l")), -EPERM);

	/* ".." at its root is the mountpoint's parent, from outside and from a descriptor inside.
	 */
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/.."), &st), 0);
	EXPECT_EQ(st.st_ino, top.st_ino);
	EXPECT_EQ(st.st_dev, top.st_dev);
	int rootfd = vfs_open(vfs_at(dir, "mnt"), O_RDONLY | O_DIRECTORY, 0);
	EXPECT_EQ(vfs_statat(rootfd, "../other", 0, &st), 0);
	EXPECT_EQ(vfs_statat(rootfd, "fixed", 0, &st), 0);

	/* Nothing joins the two mounts, and the mountpoint stays while mounted. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "mnt/made"), vfs_at(dir, "other/made"), 0), -EXDEV);
	EXPECT_EQ(vfs_link(vfs_at(dir, "mnt/made"), vfs_at(dir, "other/made")), -EXDEV);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "mnt")), -EBUSY);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "mnt"), vfs_at(dir, "moved"), 0), -EBUSY);

	/* In use (a file open, a directory held): not taken down. */
	EXPECT_EQ(vfs_umount(&root), -EBUSY);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_close(rootfd), 0);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "mnt/made")), 0);
	rcu_barrier(); /* file_free=rcu puts a closed file's path after a grace period */
	tfs_umount(&root);

	/* Gone: the directory is the test's own again. */
	EXPECT_EQ(vfs_stat(vfs_at(dir, "mnt/fixed"), &st), -ENOENT);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "mnt")), 0);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "other")), 0);
}

TEST(vfs_mount, a_file_system_mounted_on_a_directory_is_reached_through_its_tables)
{
	vfs_test_run("vfs_mount", __func__, mounted_body);
}

/* procfs is a mount of its own on /proc: getcwd and readlink cross back to the root's names. */
static void proc_body(const char *dir)
{
	struct stat root, proc, up;
	EXPECT_EQ(vfs_stat("/", &root), 0);
	EXPECT_EQ(vfs_stat("/proc", &proc), 0);
	EXPECT_NE(proc.st_dev, root.st_dev);
	EXPECT_EQ(vfs_stat("/proc/self/..", &up), 0);
	EXPECT_EQ(up.st_ino, proc.st_ino);
	EXPECT_EQ(vfs_stat("/proc/..", &up), 0);
	EXPECT_EQ(up.st_ino, root.st_ino);
	EXPECT_EQ(up.st_dev, root.st_dev);
	char buf[64];
	EXPECT_EQ(vfs_chdir("/proc/self/fd"), 0);
	EXPECT_EQ(vfs_getcwd(buf, sizeof(buf)), 13);
	EXPECT_EQ(strcmp(buf, "/proc/self/fd"), 0);
	EXPECT_EQ(vfs_chdir("/"), 0);
}

TEST(vfs_mount, proc_is_a_mount_of_its_own_crossed_both_ways)
{
	vfs_test_run("vfs_mount", __func__, proc_body);
}

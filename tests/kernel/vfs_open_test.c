/*
 * open()'s corners that the black-box suites do not reach: the mount's per-CPU
 * reference count (white-box), O_CREAT on a directory, through a symlink to a
 * missing name, and with O_DIRECTORY.
 */
#include <grace/fs.h>
#include <grace/rcupdate.h>
#include <grace/test.h>

#include <fs/internal.h>

/* Every open takes a mount reference and every close drops it: none left over. */
TEST(vfs_open, mount_references_balance)
{
	ASSERT_EQ(vfs_mkdir("/vo-mnt", 0755), 0);
	long before = mnt_count(&root_mnt);
	int fd = vfs_open("/vo-mnt/f", O_CREAT | O_WRONLY, 0644);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(mnt_count(&root_mnt), before + 1);
	EXPECT_EQ(vfs_close(fd), 0);
	fd = vfs_open("/vo-mnt/f", O_CREAT | O_RDONLY, 0644); /* exists now */
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_open("/vo-mnt", O_CREAT | O_RDONLY, 0644), -EISDIR);
	fd = vfs_open("/vo-mnt/f", O_RDONLY, 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	rcu_barrier(); /* files release their references after a grace period */
	EXPECT_EQ(mnt_count(&root_mnt), before);
	EXPECT_EQ(vfs_unlink("/vo-mnt/f"), 0);
	EXPECT_EQ(vfs_rmdir("/vo-mnt"), 0);
}

/* O_CREAT | O_DIRECTORY is refused before anything is made (Linux 6.4). */
TEST(vfs_open, creat_with_o_directory_is_einval_and_makes_nothing)
{
	struct stat st;
	EXPECT_EQ(vfs_open("/vo-dir", O_CREAT | O_DIRECTORY | O_RDONLY, 0644), -EINVAL);
	EXPECT_EQ(vfs_stat("/vo-dir", &st), -ENOENT);
}

/* O_CREAT through a symlink to a missing name makes the name the link points at. */
TEST(vfs_open, creat_through_a_dangling_symlink_makes_its_target)
{
	struct stat st;
	ASSERT_EQ(vfs_mkdir("/vo-link", 0755), 0);
	ASSERT_EQ(vfs_symlink("target", "/vo-link/l"), 0);
	int fd = vfs_open("/vo-link/l", O_CREAT | O_WRONLY, 0644);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_write(fd, "x", 1), 1);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_stat("/vo-link/target", &st), 0);
	EXPECT_EQ(st.st_size, 1);
	EXPECT_EQ(vfs_open("/vo-link/l", O_CREAT | O_EXCL | O_WRONLY, 0644), -EEXIST);
	EXPECT_EQ(vfs_unlink("/vo-link/l"), 0);
	EXPECT_EQ(vfs_unlink("/vo-link/target"), 0);
	EXPECT_EQ(vfs_rmdir("/vo-link"), 0);
}

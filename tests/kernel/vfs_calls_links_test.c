/*
 * VFS selftests through the calls alone (suite vfs_calls): link, symlink,
 * readlink, symlinks followed in a path and not followed at its end.
 *
 * The suite vfs_calls (vfs_calls_*_test.c, a file per kind of call) checks what each
 * call does when given good input by what the other calls then see (contents read
 * back, stat's fields, listings, offsets, descriptor numbers); the errors for bad
 * input are the vfs_errors suite. Each test runs in a new thread in its own directory
 * (vfs_test_run()), so the first descriptor it opens is 0, as in a new process, and
 * it ends with the caches' counts where they were: a reference a call forgot to drop
 * fails the test that made it.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

/* ---- links ---- */

static void hard_link(const char *dir)
{
	struct stat f, g;
	const char *fp = vfs_at(dir, "f"), *gp = vfs_at(dir, "g");
	ASSERT_EQ(vfs_write_file(fp, "shared", 6), 0);
	EXPECT_EQ(vfs_link(fp, gp), 0);
	ASSERT_EQ(vfs_stat(fp, &f), 0);
	ASSERT_EQ(vfs_stat(gp, &g), 0);
	EXPECT_EQ(f.st_ino, g.st_ino);
	EXPECT_EQ(f.st_nlink, 2);
	EXPECT_EQ(g.st_nlink, 2);
	/* One file, two names: a write through one is read through the other. */
	int fd = vfs_open(gp, O_WRONLY | O_APPEND, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_write(fd, "+g", 2), 2);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_TRUE(vfs_file_is(fp, "shared+g"));
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_file(&t, "f", "shared+g", 8, 2);
	vfs_line_file(&t, "g", "shared+g", 8, 2);
	vfs_expect_listing(dir, dir, &t);
	/* Removing one name leaves the file under the other. */
	EXPECT_EQ(vfs_unlink(fp), 0);
	ASSERT_EQ(vfs_stat(gp, &g), 0);
	EXPECT_EQ(g.st_nlink, 1);
	EXPECT_EQ(g.st_ino, f.st_ino);
	EXPECT_TRUE(vfs_file_is(gp, "shared+g"));
	/* A link across directories. */
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "d"), 0755), 0);
	EXPECT_EQ(vfs_link(gp, vfs_at(dir, "d/h")), 0);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "d/h")), f.st_ino);
}

TEST(vfs_calls, link_gives_a_file_a_second_name_and_nlink_2)
{
	vfs_test_run("vfs_calls", __func__, hard_link);
}

static void symlink_readlink(const char *dir)
{
	char buf[64];
	struct stat st;
	const char *l = vfs_at(dir, "l");
	EXPECT_EQ(vfs_symlink("some/target", l), 0); /* a target need not exist */
	memset(buf, 'z', sizeof(buf));
	EXPECT_EQ(vfs_readlink(l, buf, sizeof(buf)), 11);
	EXPECT_EQ(memcmp(buf, "some/target", 11), 0);
	EXPECT_EQ(buf[11], 'z'); /* readlink writes no NUL */
	/* A short buffer gets the start of the target. */
	EXPECT_EQ(vfs_readlink(l, buf, 4), 4);
	EXPECT_EQ(memcmp(buf, "some", 4), 0);
	EXPECT_EQ(vfs_lstat(l, &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	EXPECT_EQ(st.st_size, 11);
	EXPECT_EQ(vfs_stat(l, &st), -ENOENT); /* dangling */
	EXPECT_EQ(vfs_write_file(vfs_at(dir, "f"), "x", 1), 0);
	EXPECT_EQ(vfs_readlink(vfs_at(dir, "f"), buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(vfs_readlink(vfs_at(dir, "missing"), buf, sizeof(buf)), -ENOENT);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_symlink(&t, "l", "some/target");
	vfs_line_file(&t, "f", "x", 1, 1);
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, symlink_stores_its_target_for_readlink)
{
	vfs_test_run("vfs_calls", __func__, symlink_readlink);
}

static void symlink_follow(const char *dir)
{
	struct stat st;
	char abs[VFS_AT_LEN];
	static const char *const tree[] = {
	    "a/",	  "a/b/",	"a/b/f=deep", "mid->a/b",
	    "end->a/b/f", "a/b/up->..", "chain->mid", "dang->nowhere",
	};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	snprintf(abs, sizeof(abs), "%s/a", dir);
	EXPECT_EQ(vfs_symlink(abs, vfs_at(dir, "abs")), 0);
	u64 f = vfs_ino_of(vfs_at(dir, "a/b/f"));
	ASSERT_NE(f, 0);
	/*
	 * Relative targets are read from the link's directory: this thread's is "/",
	 * where "a/b" does not exist.
	 */
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "mid/f")), f);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "mid/f"), "deep"));
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "abs/b/f")), f);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "end")), f);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "end"), "deep"));
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "a/b/up/b/f")), f);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "chain/f")), f);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "chain/up/b/up/b/f")), f);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "mid")), vfs_ino_of(vfs_at(dir, "a/b")));
	/* A link to a file in the middle of a path is not a directory. */
	EXPECT_EQ(vfs_stat(vfs_at(dir, "end/x"), &st), -ENOTDIR);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "dang"), &st), -ENOENT);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "dang/x"), &st), -ENOENT);
	/* Creating through a link in the middle creates in its target. */
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "mid/new"), 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "a/b/new"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_write_file(vfs_at(dir, "chain/new/g"), "via", 3), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "a/b/new/g"), "via"));
}

TEST(vfs_calls, symlinks_are_followed_in_the_middle_and_at_the_end_of_a_path)
{
	vfs_test_run("vfs_calls", __func__, symlink_follow);
}

static void no_follow(const char *dir)
{
	struct stat st;
	static const char *const tree[] = {"d/", "d/f=x", "lf->d/f", "ld->d"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	u64 f = vfs_ino_of(vfs_at(dir, "d/f"));
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "lf"), &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	EXPECT_NE(st.st_ino, f);
	EXPECT_EQ(st.st_size, 3);
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "ld"), &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	/* Only the last component is left alone: links before it are followed. */
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "ld/f"), &st), 0);
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(st.st_ino, f);
	EXPECT_EQ(vfs_open(vfs_at(dir, "lf"), O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
	int fd = vfs_open(vfs_at(dir, "ld/f"), O_RDONLY | O_NOFOLLOW, 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	/* unlink and rename act on the link, not on its target. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "lf"), vfs_at(dir, "lf2"), 0), 0);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "lf2")), 0);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "d/f")), f);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "d", 1, 2);
	vfs_line_file(&t, "d/f", "x", 1, 1);
	vfs_line_symlink(&t, "ld", "d");
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, lstat_unlink_and_o_nofollow_do_not_follow_the_last_symlink)
{
	vfs_test_run("vfs_calls", __func__, no_follow);
}

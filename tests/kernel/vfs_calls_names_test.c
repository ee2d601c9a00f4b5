/*
 * VFS selftests through the calls alone (suite vfs_calls): stat, fstat and lstat,
 * mkdir and rmdir, unlink of an open file, and rename in all its forms.
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

/* ---- stat, directories ---- */

static void stat_kinds(const char *dir)
{
	struct stat f, d, e, l, via, root, fs;
	static const char *const tree[] = {"f=12345", "d/", "d/e/", "l->f"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "f"), &f), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "d"), &d), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "d/e"), &e), 0);
	ASSERT_EQ(vfs_lstat(vfs_at(dir, "l"), &l), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "l"), &via), 0);
	ASSERT_EQ(vfs_stat(dir, &root), 0);
	EXPECT_TRUE(S_ISREG(f.st_mode));
	EXPECT_EQ(f.st_size, 5);
	EXPECT_EQ(f.st_nlink, 1);
	/* A directory: 2 links, plus one for each subdirectory's "..". */
	EXPECT_TRUE(S_ISDIR(d.st_mode));
	EXPECT_EQ(d.st_nlink, 3);
	EXPECT_TRUE(S_ISDIR(e.st_mode));
	EXPECT_EQ(e.st_nlink, 2);
	EXPECT_EQ(root.st_nlink, 3);
	EXPECT_TRUE(S_ISLNK(l.st_mode));
	EXPECT_EQ(l.st_size, 1); /* "f" */
	EXPECT_TRUE(S_ISREG(via.st_mode));
	EXPECT_EQ(via.st_ino, f.st_ino);
	EXPECT_EQ(via.st_size, 5);
	/* Five objects, five inode numbers. */
	u64 inos[] = {f.st_ino, d.st_ino, e.st_ino, l.st_ino, root.st_ino};
	for (unsigned i = 0; i < ARRAY_SIZE(inos); i++)
		for (unsigned k = i + 1; k < ARRAY_SIZE(inos); k++)
			EXPECT_NE(inos[i], inos[k]);
	/* fstat describes the same inode as stat. */
	int fd = vfs_open(vfs_at(dir, "f"), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &fs), 0);
	EXPECT_EQ(fs.st_ino, f.st_ino);
	EXPECT_EQ(fs.st_mode, f.st_mode);
	EXPECT_EQ(fs.st_size, f.st_size);
	EXPECT_EQ(vfs_close(fd), 0);
	fd = vfs_open(vfs_at(dir, "d"), O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &fs), 0);
	EXPECT_EQ(fs.st_ino, d.st_ino);
	EXPECT_TRUE(S_ISDIR(fs.st_mode));
	EXPECT_EQ(vfs_close(fd), 0);
	/* A directory's size counts its entries: three more, three bigger, and back. */
	for (unsigned i = 0; i < 3; i++)
		EXPECT_EQ(vfs_write_file(vfs_at(dir, "d/n%u", i), "", 0), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "d"), &fs), 0);
	EXPECT_EQ(fs.st_size, d.st_size + 3);
	for (unsigned i = 0; i < 3; i++)
		EXPECT_EQ(vfs_unlink(vfs_at(dir, "d/n%u", i)), 0);
	ASSERT_EQ(vfs_stat(vfs_at(dir, "d"), &fs), 0);
	EXPECT_EQ(fs.st_size, d.st_size);
}

TEST(vfs_calls, stat_fstat_and_lstat_give_types_sizes_and_link_counts)
{
	vfs_test_run("vfs_calls", __func__, stat_kinds);
}

static void mkdir_rmdir(const char *dir)
{
	struct stat st, parent;
	const char *d = vfs_at(dir, "d");
	ASSERT_EQ(vfs_stat(dir, &parent), 0);
	ASSERT_EQ(vfs_mkdir(d, 0755), 0);
	ASSERT_EQ(vfs_stat(d, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(st.st_nlink, 2);
	ASSERT_EQ(vfs_stat(dir, &st), 0);
	EXPECT_EQ(st.st_nlink, parent.st_nlink + 1);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "d/e"), 0755), 0);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "d", 1, 3);
	vfs_line_dir(&t, "d/e", 0, 2);
	vfs_expect_listing(dir, dir, &t);

	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "d/e")), 0);
	EXPECT_EQ(vfs_rmdir(d), 0);
	EXPECT_EQ(vfs_stat(d, &st), -ENOENT);
	ASSERT_EQ(vfs_stat(dir, &st), 0);
	EXPECT_EQ(st.st_nlink, parent.st_nlink);
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_expect_listing(dir, dir, &t);
	/* The name is free again, for a directory or a file. */
	EXPECT_EQ(vfs_mkdir(d, 0755), 0);
	EXPECT_EQ(vfs_rmdir(d), 0);
	EXPECT_EQ(vfs_write_file(d, "file", 4), 0);
	EXPECT_EQ(vfs_stat(d, &st), 0);
	EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(vfs_calls, mkdir_and_rmdir_add_and_remove_a_directory_and_its_parents_link)
{
	vfs_test_run("vfs_calls", __func__, mkdir_rmdir);
}

static void unlink_open_file(const char *dir)
{
	char buf[32];
	struct stat st;
	struct vfs_counts before, after;
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "payload", 7), 0);
	int fd = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(fd, 0);
	vfs_settle(false);
	vfs_counts(&before);
	EXPECT_EQ(vfs_unlink(f), 0);
	EXPECT_EQ(vfs_stat(f, &st), -ENOENT);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_expect_listing(dir, dir, &t); /* gone from the directory */
	/* Still a file to the descriptor: readable, writable, with no name. */
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), 7);
	EXPECT_EQ(memcmp(buf, "payload", 7), 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_nlink, 0);
	EXPECT_EQ(st.st_size, 7);
	EXPECT_EQ(vfs_pwrite(fd, "+more", 5, 7), 5);
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), 0), 12);
	EXPECT_EQ(memcmp(buf, "payload+more", 12), 0);
	/* The name can be used again, by another file. */
	EXPECT_EQ(vfs_write_file(f, "new", 3), 0);
	EXPECT_NE(vfs_ino_of(f), st.st_ino);
	EXPECT_TRUE(vfs_file_is(f, "new"));
	EXPECT_EQ(vfs_unlink(f), 0);
	/* The last close frees the nameless inode and its file. */
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_settle(false);
	vfs_counts(&after);
	EXPECT_EQ(after.inodes, before.inodes - 1);
	EXPECT_EQ(after.files, before.files - 1);
}

TEST(vfs_calls, an_unlinked_open_file_stays_readable_through_its_fd_until_closed)
{
	vfs_test_run("vfs_calls", __func__, unlink_open_file);
}

/* ---- rename ---- */

static void rename_same_dir(const char *dir)
{
	struct stat st;
	const char *a = vfs_at(dir, "a"), *b = vfs_at(dir, "b");
	ASSERT_EQ(vfs_write_file(a, "alpha", 5), 0);
	u64 ino = vfs_ino_of(a);
	int fd = vfs_open(a, O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_rename(a, b, 0), 0);
	EXPECT_EQ(vfs_stat(a, &st), -ENOENT);
	EXPECT_EQ(vfs_ino_of(b), ino);
	EXPECT_TRUE(vfs_file_is(b, "alpha"));
	/* A descriptor follows the inode, whatever its name. */
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_ino, ino);
	EXPECT_EQ(st.st_nlink, 1);
	EXPECT_EQ(vfs_close(fd), 0);
	/* Renaming a name onto itself changes nothing. */
	EXPECT_EQ(vfs_rename(b, b, 0), 0);
	EXPECT_EQ(vfs_ino_of(b), ino);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_file(&t, "b", "alpha", 5, 1);
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, rename_within_a_directory_moves_the_inode_to_the_new_name)
{
	vfs_test_run("vfs_calls", __func__, rename_same_dir);
}

static void rename_cross_dir(const char *dir)
{
	struct stat st;
	static const char *const tree[] = {"x/", "y/", "x/f=moved", "x/sub/", "x/sub/g=inner"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	u64 f = vfs_ino_of(vfs_at(dir, "x/f")), sub = vfs_ino_of(vfs_at(dir, "x/sub"));
	EXPECT_EQ(vfs_rename(vfs_at(dir, "x/f"), vfs_at(dir, "y/f"), 0), 0);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "y/f")), f);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "x/f"), &st), -ENOENT);
	/* A directory moves with what it holds, and its ".." and link counts follow. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "x/sub"), vfs_at(dir, "y/sub2"), 0), 0);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "y/sub2")), sub);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "y/sub2/..")), vfs_ino_of(vfs_at(dir, "y")));
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "y/sub2/g"), "inner"));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "x/sub/g"), &st), -ENOENT);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "x", 0, 2);
	vfs_line_dir(&t, "y", 2, 3);
	vfs_line_file(&t, "y/f", "moved", 5, 1);
	vfs_line_dir(&t, "y/sub2", 1, 2);
	vfs_line_file(&t, "y/sub2/g", "inner", 5, 1);
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, rename_across_directories_moves_files_and_directories)
{
	vfs_test_run("vfs_calls", __func__, rename_cross_dir);
}

static void rename_replace(const char *dir)
{
	char buf[8];
	struct stat st;
	struct vfs_counts before, after;
	static const char *const tree[] = {"a=new", "b=old", "d1/", "d1/in=x", "d2/"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	u64 a = vfs_ino_of(vfs_at(dir, "a")), d1 = vfs_ino_of(vfs_at(dir, "d1"));
	int fd = vfs_open(vfs_at(dir, "b"), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	vfs_settle(false);
	vfs_counts(&before);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "b"), 0), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "a"), &st), -ENOENT);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "b")), a);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "b"), "new"));
	/* The replaced file lives on, nameless, while a descriptor holds it. */
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), 3);
	EXPECT_EQ(memcmp(buf, "old", 3), 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_nlink, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_settle(false);
	vfs_counts(&after);
	EXPECT_EQ(after.inodes, before.inodes - 1);
	/* A directory replaces an empty directory. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "d1"), vfs_at(dir, "d2"), 0), 0);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "d2")), d1);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_file(&t, "b", "new", 3, 1);
	vfs_line_dir(&t, "d2", 1, 2);
	vfs_line_file(&t, "d2/in", "x", 1, 1);
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, rename_onto_an_existing_name_replaces_its_file)
{
	vfs_test_run("vfs_calls", __func__, rename_replace);
}

static void rename_noreplace(const char *dir)
{
	static const char *const tree[] = {"a=A", "b=B", "d/"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "b"), RENAME_NOREPLACE), -EEXIST);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "d"), RENAME_NOREPLACE), -EEXIST);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "d"), vfs_at(dir, "a"), RENAME_NOREPLACE), -EEXIST);
	vfs_expect_unchanged(dir, "after RENAME_NOREPLACE onto existing names");
	/* To a new name it is a plain rename. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "c"), RENAME_NOREPLACE), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "c"), "A"));
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "b"), "B"));
}

TEST(vfs_calls, rename_noreplace_refuses_an_existing_target_and_renames_to_a_new_one)
{
	vfs_test_run("vfs_calls", __func__, rename_noreplace);
}

/*
 * VFS selftests through the calls alone (suite vfs_calls): what each call of
 * <grace/fs.h> does when given good input, checked by what the other calls then
 * see (contents read back, stat's fields, listings, offsets, descriptor numbers).
 *
 * Each test runs in a new thread in its own directory (vfs_test_run()), so its
 * descriptor table starts empty and the first descriptor it opens is 0, as in a
 * new process with nothing open; and every test ends with the caches' counts
 * where they were, so a reference a call forgot to drop fails the test that made
 * it. The errors the calls give for bad input are the vfs_errors suite.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

static char expected[VFS_LISTING_MAX];

static bool all_zero(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The inode number of path, which must exist (a failure, and 0, if it does not). */
static u64 ino_of(const char *path)
{
	struct stat st;
	int err = vfs_stat(path, &st);
	if (err) {
		test_fail(__FILE__, __LINE__, "stat %s: %d", path, err);
		return 0;
	}
	return st.st_ino;
}

/* ---- open, read, write, offsets ---- */

static void read_write_round_trip(const char *dir)
{
	static const char text[] = "hello, grace";
	const size_t len = sizeof(text) - 1;
	char buf[64];
	struct stat st;
	const char *f = vfs_at(dir, "f");

	int fd = vfs_open(f, O_RDWR | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_write(fd, text, 5), 5);
	EXPECT_EQ(vfs_write(fd, text + 5, len - 5), len - 5);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), len);
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), 0); /* the offset is at the end */
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_SET), 0);
	EXPECT_EQ(vfs_read(fd, buf, 4), 4);
	EXPECT_EQ(memcmp(buf, "hell", 4), 0);
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), len - 4); /* a read stops at the end */
	EXPECT_EQ(memcmp(buf, text + 4, len - 4), 0);
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), 0);
	EXPECT_EQ(vfs_read(fd, buf, 0), 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(st.st_size, len);
	EXPECT_EQ(st.st_nlink, 1);
	EXPECT_EQ(vfs_close(fd), 0);
	/* The bytes are in the file, not in the descriptor. */
	EXPECT_TRUE(vfs_file_is(f, text));
	EXPECT_EQ(vfs_stat(f, &st), 0);
	EXPECT_EQ(st.st_size, len);
}

TEST(vfs_calls, written_bytes_read_back_and_reads_stop_at_the_end)
{
	vfs_test_run("vfs_calls", __func__, read_write_round_trip);
}

static void pread_pwrite(const char *dir)
{
	char buf[16];
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "0123456789", 10), 0);
	int fd = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_lseek(fd, 2, SEEK_SET), 2);
	EXPECT_EQ(vfs_pwrite(fd, "ab", 2, 6), 2);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 2);
	EXPECT_EQ(vfs_pread(fd, buf, 5, 4), 5);
	EXPECT_EQ(memcmp(buf, "45ab8", 5), 0);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 2);
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), 8), 2); /* stops at the end */
	EXPECT_EQ(memcmp(buf, "89", 2), 0);
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), 10), 0);
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), 1000), 0);
	/* The plain read goes on from the offset pread and pwrite left alone. */
	EXPECT_EQ(vfs_read(fd, buf, 3), 3);
	EXPECT_EQ(memcmp(buf, "234", 3), 0);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_TRUE(vfs_file_is(f, "012345ab89"));
}

TEST(vfs_calls, pread_and_pwrite_leave_the_offset_alone)
{
	vfs_test_run("vfs_calls", __func__, pread_pwrite);
}

static void lseek_whence(const char *dir)
{
	char c;
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "abcdefghij", 10), 0);
	int fd = vfs_open(f, O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_lseek(fd, 5, SEEK_SET), 5);
	EXPECT_EQ(vfs_lseek(fd, 2, SEEK_CUR), 7);
	EXPECT_EQ(vfs_lseek(fd, -3, SEEK_CUR), 4);
	EXPECT_EQ(vfs_read(fd, &c, 1), 1);
	EXPECT_EQ(c, 'e');
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_END), 10);
	EXPECT_EQ(vfs_lseek(fd, -1, SEEK_END), 9);
	EXPECT_EQ(vfs_read(fd, &c, 1), 1);
	EXPECT_EQ(c, 'j');
	/* Past the end is a valid offset; reading there gives nothing. */
	EXPECT_EQ(vfs_lseek(fd, 100, SEEK_END), 110);
	EXPECT_EQ(vfs_read(fd, &c, 1), 0);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 110);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, lseek_set_cur_and_end_move_the_offset)
{
	vfs_test_run("vfs_calls", __func__, lseek_whence);
}

#define HOLE_AT (1024 * 1024) /* 256 pages of hole: a file that stored them is obvious */

static void sparse_file(const char *dir)
{
	static u8 buf[8192];
	struct stat st;
	const char *f = vfs_at(dir, "sparse");
	int fd = vfs_open(f, O_RDWR | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_write(fd, "abc", 3), 3);
	EXPECT_EQ(vfs_lseek(fd, HOLE_AT, SEEK_SET), HOLE_AT);
	EXPECT_EQ(vfs_write(fd, "xyz", 3), 3);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, HOLE_AT + 3);
	/* The hole holds no blocks: two pages of data at most, in 512-byte blocks. */
	EXPECT_GT(st.st_blocks, 0);
	EXPECT_LT(st.st_blocks * 512, (u64)st.st_size / 4);
	/* A read of the hole gives zeros, up to the data and across it. */
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), HOLE_AT / 2), sizeof(buf));
	EXPECT_TRUE(all_zero(buf, sizeof(buf)));
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(vfs_pread(fd, buf, 16, 0), 16);
	EXPECT_EQ(memcmp(buf, "abc", 3), 0);
	EXPECT_TRUE(all_zero(buf + 3, 13));
	EXPECT_EQ(vfs_pread(fd, buf, 16, HOLE_AT - 4), 7);
	EXPECT_TRUE(all_zero(buf, 4));
	EXPECT_EQ(memcmp(buf + 4, "xyz", 3), 0);
	/* pwrite past the end makes a hole too. */
	EXPECT_EQ(vfs_pwrite(fd, "!", 1, 2 * HOLE_AT), 1);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 2 * HOLE_AT + 1);
	EXPECT_LT(st.st_blocks * 512, (u64)st.st_size / 4);
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), HOLE_AT + 4096), sizeof(buf));
	EXPECT_TRUE(all_zero(buf, sizeof(buf)));
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, a_write_past_the_end_leaves_a_hole_of_zeros_holding_no_blocks)
{
	vfs_test_run("vfs_calls", __func__, sparse_file);
}

/* ---- open flags ---- */

static void o_creat(const char *dir)
{
	struct stat st;
	const char *f = vfs_at(dir, "f");
	EXPECT_EQ(vfs_stat(f, &st), -ENOENT);
	int fd = vfs_open(f, O_WRONLY | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(st.st_size, 0);
	u64 ino = st.st_ino;
	EXPECT_EQ(vfs_write(fd, "kept", 4), 4);
	EXPECT_EQ(vfs_close(fd), 0);
	/* O_CREAT on an existing name opens that file, contents and all. */
	fd = vfs_open(f, O_RDWR | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_ino, ino);
	EXPECT_EQ(st.st_size, 4);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_TRUE(vfs_file_is(f, "kept"));
	/* With O_EXCL a new name is made, an existing one refused. */
	fd = vfs_open(vfs_at(dir, "g"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_open(f, O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
	EXPECT_TRUE(vfs_file_is(f, "kept"));
	/* Without O_CREAT a missing name stays missing. */
	EXPECT_EQ(vfs_open(vfs_at(dir, "h"), O_RDWR, 0), -ENOENT);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_file(&t, "f", "kept", 4, 1);
	vfs_line_file(&t, "g", "", 0, 1);
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, o_creat_makes_or_opens_a_file_and_with_o_excl_refuses_an_existing_one)
{
	vfs_test_run("vfs_calls", __func__, o_creat);
}

static void o_trunc(const char *dir)
{
	struct stat st;
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "0123456789abcdef", 16), 0);
	u64 ino = ino_of(f);
	int fd = vfs_open(f, O_RDWR | O_TRUNC, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 0);
	EXPECT_EQ(st.st_ino, ino); /* the same file, emptied */
	EXPECT_EQ(vfs_write(fd, "ab", 2), 2);
	EXPECT_EQ(vfs_close(fd), 0);
	/* Nothing of the old contents comes back past the new end. */
	EXPECT_TRUE(vfs_file_is(f, "ab"));
	EXPECT_EQ(vfs_truncate(f, 8), 0);
	char buf[8];
	EXPECT_EQ(vfs_read_file(f, buf, sizeof(buf)), 8);
	EXPECT_EQ(memcmp(buf, "ab", 2), 0);
	EXPECT_TRUE(all_zero((u8 *)buf + 2, 6));
}

TEST(vfs_calls, o_trunc_empties_the_existing_file)
{
	vfs_test_run("vfs_calls", __func__, o_trunc);
}

static void o_append(const char *dir)
{
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "start", 5), 0);
	int a = vfs_open(f, O_WRONLY | O_APPEND, 0);
	int b = vfs_open(f, O_RDWR | O_APPEND, 0);
	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	/* Each write goes at the end, wherever the descriptor's offset was. */
	EXPECT_EQ(vfs_lseek(a, 0, SEEK_SET), 0);
	EXPECT_EQ(vfs_write(a, "-a1", 3), 3);
	EXPECT_EQ(vfs_lseek(a, 0, SEEK_CUR), 8);
	EXPECT_EQ(vfs_write(b, "-b1", 3), 3);
	EXPECT_EQ(vfs_lseek(a, 2, SEEK_SET), 2);
	EXPECT_EQ(vfs_write(a, "-a2", 3), 3);
	EXPECT_EQ(vfs_lseek(a, 0, SEEK_CUR), 14);
	/* Reading is not tied to the end. */
	char buf[5];
	EXPECT_EQ(vfs_lseek(b, 0, SEEK_SET), 0);
	EXPECT_EQ(vfs_read(b, buf, 5), 5);
	EXPECT_EQ(memcmp(buf, "start", 5), 0);
	EXPECT_EQ(vfs_close(a), 0);
	EXPECT_EQ(vfs_close(b), 0);
	EXPECT_TRUE(vfs_file_is(f, "start-a1-b1-a2"));
}

TEST(vfs_calls, o_append_writes_at_the_end_whatever_the_offset)
{
	vfs_test_run("vfs_calls", __func__, o_append);
}

static void o_directory(const char *dir)
{
	struct stat st;
	static const char *const tree[] = {"d/", "f=x", "ld->d"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	int fd = vfs_open(vfs_at(dir, "d"), O_RDONLY | O_DIRECTORY, 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_close(fd), 0);
	fd = vfs_open(vfs_at(dir, "ld"), O_RDONLY | O_DIRECTORY, 0); /* through a symlink */
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_open(vfs_at(dir, "f"), O_RDONLY | O_DIRECTORY, 0), -ENOTDIR);
	/* A directory opens without O_DIRECTORY too, for reading. */
	fd = vfs_open(vfs_at(dir, "d"), O_RDONLY, 0);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, o_directory_opens_directories_only)
{
	vfs_test_run("vfs_calls", __func__, o_directory);
}

static void access_modes(const char *dir)
{
	char buf[4];
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "data", 4), 0);
	int w = vfs_open(f, O_WRONLY, 0);
	int r = vfs_open(f, O_RDONLY, 0);
	int rw = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(w, 0);
	ASSERT_GE(r, 0);
	ASSERT_GE(rw, 0);
	EXPECT_EQ(vfs_read(w, buf, 4), -EBADF);
	EXPECT_EQ(vfs_pread(w, buf, 4, 0), -EBADF);
	EXPECT_EQ(vfs_write(r, "x", 1), -EBADF);
	EXPECT_EQ(vfs_pwrite(r, "x", 1, 0), -EBADF);
	EXPECT_EQ(vfs_read(r, buf, 4), 4);
	EXPECT_EQ(vfs_write(w, "W", 1), 1);
	EXPECT_EQ(vfs_pread(rw, buf, 4, 0), 4);
	EXPECT_EQ(memcmp(buf, "Wata", 4), 0);
	EXPECT_EQ(vfs_pwrite(rw, "R", 1, 1), 1);
	EXPECT_EQ(vfs_close(w), 0);
	EXPECT_EQ(vfs_close(r), 0);
	EXPECT_EQ(vfs_close(rw), 0);
	EXPECT_TRUE(vfs_file_is(f, "WRta"));
}

TEST(vfs_calls, access_mode_allows_only_its_reads_and_writes)
{
	vfs_test_run("vfs_calls", __func__, access_modes);
}

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
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_dir(&t, "d", 1, 3);
	vfs_line_dir(&t, "d/e", 0, 2);
	vfs_expect_listing(dir, dir, &t);

	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "d/e")), 0);
	EXPECT_EQ(vfs_rmdir(d), 0);
	EXPECT_EQ(vfs_stat(d, &st), -ENOENT);
	ASSERT_EQ(vfs_stat(dir, &st), 0);
	EXPECT_EQ(st.st_nlink, parent.st_nlink);
	vfs_text_init(&t, expected, sizeof(expected));
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
	vfs_text_init(&t, expected, sizeof(expected));
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
	EXPECT_NE(ino_of(f), st.st_ino);
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
	u64 ino = ino_of(a);
	int fd = vfs_open(a, O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_rename(a, b, 0), 0);
	EXPECT_EQ(vfs_stat(a, &st), -ENOENT);
	EXPECT_EQ(ino_of(b), ino);
	EXPECT_TRUE(vfs_file_is(b, "alpha"));
	/* A descriptor follows the inode, whatever its name. */
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_ino, ino);
	EXPECT_EQ(st.st_nlink, 1);
	EXPECT_EQ(vfs_close(fd), 0);
	/* Renaming a name onto itself changes nothing. */
	EXPECT_EQ(vfs_rename(b, b, 0), 0);
	EXPECT_EQ(ino_of(b), ino);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
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
	u64 f = ino_of(vfs_at(dir, "x/f")), sub = ino_of(vfs_at(dir, "x/sub"));
	EXPECT_EQ(vfs_rename(vfs_at(dir, "x/f"), vfs_at(dir, "y/f"), 0), 0);
	EXPECT_EQ(ino_of(vfs_at(dir, "y/f")), f);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "x/f"), &st), -ENOENT);
	/* A directory moves with what it holds, and its ".." and link counts follow. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "x/sub"), vfs_at(dir, "y/sub2"), 0), 0);
	EXPECT_EQ(ino_of(vfs_at(dir, "y/sub2")), sub);
	EXPECT_EQ(ino_of(vfs_at(dir, "y/sub2/..")), ino_of(vfs_at(dir, "y")));
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "y/sub2/g"), "inner"));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "x/sub/g"), &st), -ENOENT);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
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
	u64 a = ino_of(vfs_at(dir, "a")), d1 = ino_of(vfs_at(dir, "d1"));
	int fd = vfs_open(vfs_at(dir, "b"), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	vfs_settle(false);
	vfs_counts(&before);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "b"), 0), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "a"), &st), -ENOENT);
	EXPECT_EQ(ino_of(vfs_at(dir, "b")), a);
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
	EXPECT_EQ(ino_of(vfs_at(dir, "d2")), d1);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
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
	vfs_text_init(&t, expected, sizeof(expected));
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
	EXPECT_EQ(ino_of(vfs_at(dir, "d/h")), f.st_ino);
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
	vfs_text_init(&t, expected, sizeof(expected));
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
	u64 f = ino_of(vfs_at(dir, "a/b/f"));
	ASSERT_NE(f, 0);
	/*
	 * Relative targets are read from the link's directory: this thread's is "/",
	 * where "a/b" does not exist.
	 */
	EXPECT_EQ(ino_of(vfs_at(dir, "mid/f")), f);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "mid/f"), "deep"));
	EXPECT_EQ(ino_of(vfs_at(dir, "abs/b/f")), f);
	EXPECT_EQ(ino_of(vfs_at(dir, "end")), f);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "end"), "deep"));
	EXPECT_EQ(ino_of(vfs_at(dir, "a/b/up/b/f")), f);
	EXPECT_EQ(ino_of(vfs_at(dir, "chain/f")), f);
	EXPECT_EQ(ino_of(vfs_at(dir, "chain/up/b/up/b/f")), f);
	EXPECT_EQ(ino_of(vfs_at(dir, "mid")), ino_of(vfs_at(dir, "a/b")));
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
	u64 f = ino_of(vfs_at(dir, "d/f"));
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
	EXPECT_EQ(ino_of(vfs_at(dir, "d/f")), f);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_dir(&t, "d", 1, 2);
	vfs_line_file(&t, "d/f", "x", 1, 1);
	vfs_line_symlink(&t, "ld", "d");
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, lstat_unlink_and_o_nofollow_do_not_follow_the_last_symlink)
{
	vfs_test_run("vfs_calls", __func__, no_follow);
}

/* ---- getdents ---- */

#define GD_FILES 40
#define GD_DIRS 10
#define GD_LINKS 10
#define GD_ENTRIES (GD_FILES + GD_DIRS + GD_LINKS)
#define GD_NAME_LEN 16

static void gd_make(const char *dir)
{
	for (unsigned i = 0; i < GD_FILES; i++)
		EXPECT_EQ(vfs_write_file(vfs_at(dir, "file%02u", i), "", 0), 0);
	for (unsigned i = 0; i < GD_DIRS; i++)
		EXPECT_EQ(vfs_mkdir(vfs_at(dir, "dir%02u", i), 0755), 0);
	for (unsigned i = 0; i < GD_LINKS; i++)
		EXPECT_EQ(vfs_symlink("file00", vfs_at(dir, "link%02u", i)), 0);
}

/* The entry index of a name gd_make() made, or -1. */
static int gd_index(const char *name, u8 *type)
{
	static const struct {
		const char *prefix;
		unsigned first, count;
		u8 type;
	} kinds[] = {
	    {"file", 0, GD_FILES, DT_REG},
	    {"dir", GD_FILES, GD_DIRS, DT_DIR},
	    {"link", GD_FILES + GD_DIRS, GD_LINKS, DT_LNK},
	};
	for (unsigned k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t pl = strlen(kinds[k].prefix);
		if (strncmp(name, kinds[k].prefix, pl) || strlen(name) != pl + 2)
			continue;
		char a = name[pl], b = name[pl + 1];
		if (a < '0' || a > '9' || b < '0' || b > '9')
			return -1;
		unsigned n = (unsigned)(a - '0') * 10 + (unsigned)(b - '0');
		if (n >= kinds[k].count)
			return -1;
		*type = kinds[k].type;
		return (int)(kinds[k].first + n);
	}
	return -1;
}

struct gd_pass {
	unsigned calls;
	unsigned seen[GD_ENTRIES];
	unsigned dots, dotdots, strangers, bad_records;
	unsigned order_n; /* the entries in the order getdents gave them */
	char order[GD_ENTRIES][GD_NAME_LEN];
	s64 off[GD_ENTRIES];
};

/* Read fd's directory to its end with a buffer of size bytes, noting each record. */
static void gd_read(const char *dir, int fd, size_t size, struct gd_pass *p)
{
	static char buf[4096];
	long n;
	*p = (struct gd_pass){0};
	while ((n = vfs_getdents(fd, buf, size)) > 0) {
		p->calls++;
		for (long at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			size_t len = strlen(d->d_name);
			if (d->d_reclen % 8 ||
			    d->d_reclen < offsetof(struct dirent64, d_name) + len + 1 ||
			    at + d->d_reclen > n) {
				p->bad_records++;
				break;
			}
			at += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) {
				EXPECT_EQ(d->d_type, DT_DIR);
				*(d->d_name[1] ? &p->dotdots : &p->dots) += 1;
				continue;
			}
			u8 type = 0;
			int i = gd_index(d->d_name, &type);
			if (i < 0) {
				p->strangers++;
				continue;
			}
			p->seen[i]++;
			EXPECT_EQ(d->d_type, type);
			struct stat st;
			EXPECT_EQ(vfs_lstat(vfs_at(dir, "%s", d->d_name), &st), 0);
			EXPECT_EQ(d->d_ino, st.st_ino);
			if (p->order_n < GD_ENTRIES) {
				strlcpy(p->order[p->order_n], d->d_name, GD_NAME_LEN);
				p->off[p->order_n++] = d->d_off;
			}
		}
	}
	EXPECT_EQ(n, 0);
}

static void gd_expect_complete(const struct gd_pass *p)
{
	EXPECT_EQ(p->bad_records, 0);
	EXPECT_EQ(p->strangers, 0);
	/* "." and "..", if a directory lists them, once each. */
	EXPECT_LE(p->dots, 1);
	EXPECT_LE(p->dotdots, 1);
	unsigned wrong = 0;
	for (unsigned i = 0; i < GD_ENTRIES; i++)
		wrong += p->seen[i] != 1;
	EXPECT_EQ(wrong, 0);
	EXPECT_EQ(p->order_n, GD_ENTRIES);
}

static void getdents_once(const char *dir)
{
	static struct gd_pass p;
	gd_make(dir);
	int fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	gd_read(dir, fd, 4096, &p);
	gd_expect_complete(&p);
	/* At the end it stays at the end; from offset 0 it lists everything again. */
	static char buf[256];
	EXPECT_EQ(vfs_getdents(fd, buf, sizeof(buf)), 0);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_SET), 0);
	gd_read(dir, fd, 4096, &p);
	gd_expect_complete(&p);
	EXPECT_EQ(vfs_close(fd), 0);
	/* A removed entry is no longer listed, the others still once. */
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "file07")), 0);
	fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	gd_read(dir, fd, 4096, &p);
	EXPECT_EQ(p.seen[7], 0);
	p.seen[7] = 1;
	p.order_n++;
	gd_expect_complete(&p);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, getdents_lists_every_entry_exactly_once_with_its_type_and_inode)
{
	vfs_test_run("vfs_calls", __func__, getdents_once);
}

/* Room for one of gd_make()'s records (32 bytes each) and a "." (24), never two of its own. */
#define GD_SMALL_BUF 56

static void getdents_small(const char *dir)
{
	static struct gd_pass p, rest;
	static char buf[8];
	gd_make(dir);
	int fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	/* No room for a single record. */
	EXPECT_EQ(vfs_getdents(fd, buf, sizeof(buf)), -EINVAL);
	gd_read(dir, fd, GD_SMALL_BUF, &p);
	gd_expect_complete(&p);
	EXPECT_GE(p.calls, GD_ENTRIES / 2);
	/* Back to the position after the tenth record: the rest follows, in the same order. */
	const unsigned k = 10;
	ASSERT_EQ(p.order_n, GD_ENTRIES);
	EXPECT_EQ(vfs_lseek(fd, p.off[k], SEEK_SET), p.off[k]);
	gd_read(dir, fd, GD_SMALL_BUF, &rest);
	ASSERT_EQ(rest.order_n, GD_ENTRIES - k - 1);
	for (unsigned i = 0; i < rest.order_n; i++)
		EXPECT_EQ(strcmp(rest.order[i], p.order[k + 1 + i]), 0);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, getdents_with_a_small_buffer_takes_several_calls_and_resumes_at_d_off)
{
	vfs_test_run("vfs_calls", __func__, getdents_small);
}

/* ---- paths ---- */

static bool cwd_is(const char *want)
{
	char cwd[VFS_AT_LEN];
	long n = vfs_getcwd(cwd, sizeof(cwd));
	if (!EXPECT_EQ(n, strlen(want)))
		return false;
	return EXPECT_EQ(strcmp(cwd, want), 0);
}

static void chdir_getcwd(const char *dir)
{
	char cwd[VFS_AT_LEN];
	struct stat st;
	cwd_is("/");
	ASSERT_EQ(vfs_chdir(dir), 0);
	cwd_is(dir);
	/* Relative paths start at the current directory. */
	EXPECT_EQ(vfs_mkdir("sub", 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_write_file("sub/f", "rel", 3), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "sub/f"), "rel"));
	EXPECT_EQ(vfs_chdir("sub"), 0);
	cwd_is(vfs_at(dir, "sub"));
	EXPECT_TRUE(vfs_file_is("f", "rel"));
	EXPECT_TRUE(vfs_file_is("./f", "rel"));
	EXPECT_TRUE(vfs_file_is("../sub/./f", "rel"));
	EXPECT_EQ(vfs_chdir(".."), 0);
	cwd_is(dir);
	EXPECT_EQ(vfs_chdir("./sub/../sub/"), 0);
	cwd_is(vfs_at(dir, "sub"));
	/* The current directory is the directory, not its name: it follows a rename. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "sub"), vfs_at(dir, "moved"), 0), 0);
	cwd_is(vfs_at(dir, "moved"));
	EXPECT_TRUE(vfs_file_is("f", "rel"));
	/* getcwd needs room for the NUL. */
	size_t len = strlen(vfs_at(dir, "moved"));
	EXPECT_EQ(vfs_getcwd(cwd, len), -ERANGE);
	EXPECT_EQ(vfs_getcwd(cwd, len + 1), len);
	/* A failed chdir leaves the current directory alone. */
	EXPECT_EQ(vfs_chdir("f"), -ENOTDIR);
	EXPECT_EQ(vfs_chdir("missing"), -ENOENT);
	cwd_is(vfs_at(dir, "moved"));
	EXPECT_EQ(vfs_chdir("/"), 0);
	cwd_is("/");
	EXPECT_EQ(vfs_stat("f", &st), -ENOENT);
}

TEST(vfs_calls, chdir_and_getcwd_resolve_relative_paths)
{
	vfs_test_run("vfs_calls", __func__, chdir_getcwd);
}

static void dot_dotdot(const char *dir)
{
	static const char *const tree[] = {"a/", "a/b/"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	u64 root = ino_of("/"), a = ino_of(vfs_at(dir, "a")), b = ino_of(vfs_at(dir, "a/b"));
	ASSERT_NE(root, 0);
	EXPECT_EQ(ino_of("/.."), root);
	EXPECT_EQ(ino_of("/../../."), root);
	EXPECT_EQ(ino_of("/."), root);
	EXPECT_EQ(ino_of(vfs_at(dir, "a/b/..")), a);
	EXPECT_EQ(ino_of(vfs_at(dir, "a/./b/.")), b);
	EXPECT_EQ(ino_of(vfs_at(dir, "a/b/../../a/b")), b);
	EXPECT_EQ(ino_of(vfs_at(dir, "a/b/../..")), ino_of(dir));
	EXPECT_EQ(vfs_chdir("/"), 0);
	EXPECT_EQ(vfs_chdir(".."), 0);
	cwd_is("/");
	EXPECT_EQ(vfs_chdir(vfs_at(dir, "a/b")), 0);
	EXPECT_EQ(vfs_chdir("../.."), 0);
	cwd_is(dir);
	EXPECT_EQ(ino_of("."), ino_of(dir));
	EXPECT_EQ(ino_of("a/.."), ino_of(dir));
	EXPECT_EQ(vfs_chdir("/"), 0);
}

TEST(vfs_calls, dot_is_the_directory_dotdot_its_parent_and_dotdot_of_root_is_root)
{
	vfs_test_run("vfs_calls", __func__, dot_dotdot);
}

static void trailing_slash(const char *dir)
{
	struct stat st;
	static const char *const tree[] = {"sub/", "f=x", "ld->sub"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub/"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub//"), &st), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "/sub"), &st), 0); /* "dir//sub" */
	/* A trailing slash makes even lstat follow a link to a directory. */
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "ld/"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "f/"), &st), -ENOTDIR);
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "f/"), &st), -ENOTDIR);
	EXPECT_EQ(vfs_open(vfs_at(dir, "f/"), O_RDONLY, 0), -ENOTDIR);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "f/")), -ENOTDIR);
	EXPECT_EQ(vfs_open(vfs_at(dir, "g/"), O_WRONLY | O_CREAT, 0644), -EISDIR);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "new/"), 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "new"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "new/")), 0);
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_dir(&t, "sub", 0, 2);
	vfs_line_file(&t, "f", "x", 1, 1);
	vfs_line_symlink(&t, "ld", "sub");
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, a_trailing_slash_is_allowed_on_directories_and_enotdir_on_files)
{
	vfs_test_run("vfs_calls", __func__, trailing_slash);
}

/* ---- truncate ---- */

#define TRUNC_BIG 10000 /* across two page boundaries */

/* The file holds head and then zeros up to size. */
static bool holds(const char *path, const char *head, size_t size)
{
	static u8 buf[TRUNC_BIG + 16];
	size_t hl = strlen(head);
	long n = vfs_read_file(path, buf, sizeof(buf));
	return EXPECT_EQ(n, size) && EXPECT_EQ(memcmp(buf, head, hl), 0) &&
	       EXPECT_TRUE(all_zero(buf + hl, size - hl));
}

static void truncate_path(const char *dir)
{
	struct stat st;
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "hello", 5), 0);
	EXPECT_EQ(vfs_truncate(f, TRUNC_BIG), 0);
	EXPECT_EQ(vfs_stat(f, &st), 0);
	EXPECT_EQ(st.st_size, TRUNC_BIG);
	holds(f, "hello", TRUNC_BIG);
	EXPECT_EQ(vfs_truncate(f, 3), 0);
	holds(f, "hel", 3);
	/* Grown again: the cut bytes are gone, zeros in their place. */
	EXPECT_EQ(vfs_truncate(f, 100), 0);
	holds(f, "hel", 100);
	EXPECT_EQ(vfs_truncate(f, 0), 0);
	EXPECT_EQ(vfs_stat(f, &st), 0);
	EXPECT_EQ(st.st_size, 0);
	EXPECT_EQ(st.st_blocks, 0);
}

TEST(vfs_calls, truncate_grows_a_file_with_zeros_and_shrinks_it)
{
	vfs_test_run("vfs_calls", __func__, truncate_path);
}

static void truncate_fd(const char *dir)
{
	static u8 big[TRUNC_BIG];
	char buf[8];
	struct stat st;
	const char *f = vfs_at(dir, "f");
	memset(big, 'b', sizeof(big));
	ASSERT_EQ(vfs_write_file(f, big, sizeof(big)), 0);
	int fd = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_lseek(fd, 6000, SEEK_SET), 6000);
	EXPECT_EQ(vfs_ftruncate(fd, 2), 0);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 2);
	/* The offset stays where it was, now past the end. */
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 6000);
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), 0);
	EXPECT_EQ(vfs_ftruncate(fd, TRUNC_BIG), 0);
	EXPECT_EQ(vfs_close(fd), 0);
	holds(f, "bb", TRUNC_BIG);
}

TEST(vfs_calls, ftruncate_grows_and_shrinks_through_a_descriptor_leaving_its_offset)
{
	vfs_test_run("vfs_calls", __func__, truncate_fd);
}

/* ---- descriptors ---- */

static void dup_shares(const char *dir)
{
	char buf[8];
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "abcdefgh", 8), 0);
	int a = vfs_open(f, O_RDONLY, 0), b = vfs_open(f, O_RDONLY, 0);
	EXPECT_EQ(a, 0); /* a new thread starts with no descriptor open */
	EXPECT_EQ(b, 1);
	EXPECT_EQ(vfs_close(a), 0);
	int d = vfs_dup(b);
	EXPECT_EQ(d, 0); /* the lowest free number */
	EXPECT_EQ(vfs_dup(b), 2);
	EXPECT_EQ(vfs_close(2), 0);
	/* One open file, two numbers: one offset. */
	EXPECT_EQ(vfs_read(d, buf, 3), 3);
	EXPECT_EQ(vfs_lseek(b, 0, SEEK_CUR), 3);
	EXPECT_EQ(vfs_read(b, buf, 2), 2);
	EXPECT_EQ(memcmp(buf, "de", 2), 0);
	EXPECT_EQ(vfs_lseek(d, 0, SEEK_CUR), 5);
	/* Closing one number leaves the other open. */
	EXPECT_EQ(vfs_close(b), 0);
	EXPECT_EQ(vfs_read(d, buf, 8), 3);
	EXPECT_EQ(memcmp(buf, "fgh", 3), 0);
	EXPECT_EQ(vfs_close(d), 0);
}

TEST(vfs_calls, dup_takes_the_lowest_free_fd_and_shares_the_offset)
{
	vfs_test_run("vfs_calls", __func__, dup_shares);
}

#define DUP2_FREE_FD 100 /* never opened by the test */

static void dup2_calls(const char *dir)
{
	char buf[8];
	struct stat st;
	struct vfs_counts before, after;
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "one"), "one", 3), 0);
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "two"), "two", 3), 0);
	int a = vfs_open(vfs_at(dir, "one"), O_RDONLY, 0);
	int b = vfs_open(vfs_at(dir, "two"), O_RDONLY, 0);
	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	/* "two" is kept only by b now: closing b frees its inode. */
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "two")), 0);
	vfs_settle(false);
	vfs_counts(&before);
	EXPECT_EQ(vfs_dup2(a, b), b);
	EXPECT_EQ(vfs_read(b, buf, sizeof(buf)), 3);
	EXPECT_EQ(memcmp(buf, "one", 3), 0);
	EXPECT_EQ(vfs_lseek(a, 0, SEEK_CUR), 3); /* shared, as with dup */
	vfs_settle(false);
	vfs_counts(&after);
	EXPECT_EQ(after.files, before.files - 1);
	EXPECT_EQ(after.inodes, before.inodes - 1);
	/* Onto itself: nothing closes, the fd is returned. */
	EXPECT_EQ(vfs_dup2(a, a), a);
	EXPECT_EQ(vfs_fstat(a, &st), 0);
	EXPECT_EQ(vfs_pread(a, buf, 3, 0), 3);
	/* Onto a free number, however far above the others. */
	EXPECT_EQ(vfs_dup2(a, DUP2_FREE_FD), DUP2_FREE_FD);
	EXPECT_EQ(vfs_pread(DUP2_FREE_FD, buf, 3, 0), 3);
	EXPECT_EQ(memcmp(buf, "one", 3), 0);
	/* The lowest free number is still low. */
	int c = vfs_dup(a);
	EXPECT_LT(c, DUP2_FREE_FD);
	EXPECT_EQ(vfs_close(c), 0);
	EXPECT_EQ(vfs_close(DUP2_FREE_FD), 0);
	EXPECT_EQ(vfs_close(b), 0);
	EXPECT_EQ(vfs_close(a), 0);
}

TEST(vfs_calls, dup2_onto_an_open_fd_closes_it_and_onto_itself_returns_it)
{
	vfs_test_run("vfs_calls", __func__, dup2_calls);
}

static void lowest_free(const char *dir)
{
	int fds[10];
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "x", 1), 0);
	for (int i = 0; i < 10; i++) {
		fds[i] = vfs_open(f, O_RDONLY, 0);
		EXPECT_EQ(fds[i], i);
	}
	EXPECT_EQ(vfs_close(7), 0);
	EXPECT_EQ(vfs_close(3), 0);
	EXPECT_EQ(vfs_close(3), -EBADF);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), 3);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), 7);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), 10);
	for (int i = 0; i <= 10; i++)
		EXPECT_EQ(vfs_close(i), 0);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), 0);
	EXPECT_EQ(vfs_close(0), 0);
}

TEST(vfs_calls, close_frees_the_fd_for_the_next_open_lowest_first)
{
	vfs_test_run("vfs_calls", __func__, lowest_free);
}

static void fd_table_full(const char *dir)
{
	struct vfs_counts before, after;
	const char *f = vfs_at(dir, "f");
	ASSERT_EQ(vfs_write_file(f, "x", 1), 0);
	vfs_settle(false);
	vfs_counts(&before);
	int wrong = 0;
	for (int i = 0; i < FD_MAX; i++) {
		int fd = vfs_open(f, O_RDONLY, 0);
		if (fd != i && !wrong++)
			EXPECT_EQ(fd, i);
	}
	EXPECT_EQ(wrong, 0);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), -EMFILE);
	EXPECT_EQ(vfs_dup(0), -EMFILE);
	/* Every descriptor works, the last as well as the first. */
	char c = 0;
	EXPECT_EQ(vfs_pread(FD_MAX - 1, &c, 1, 0), 1);
	EXPECT_EQ(c, 'x');
	vfs_counts(&after);
	EXPECT_EQ(after.files, before.files + FD_MAX);
	/* One freed is one to reuse, and then the table is full again. */
	EXPECT_EQ(vfs_close(FD_MAX / 2), 0);
	EXPECT_EQ(vfs_dup(0), FD_MAX / 2);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), -EMFILE);
	for (int i = 0; i < FD_MAX; i++)
		if (vfs_close(i) != 0)
			wrong++;
	EXPECT_EQ(wrong, 0);
	vfs_settle(false);
	vfs_counts(&after);
	EXPECT_EQ(after.files, before.files);
	EXPECT_EQ(vfs_open(f, O_RDONLY, 0), 0);
	EXPECT_EQ(vfs_close(0), 0);
}

TEST(vfs_calls, the_fd_table_grows_to_fd_max_and_then_open_and_dup_are_emfile)
{
	vfs_test_run("vfs_calls", __func__, fd_table_full);
}

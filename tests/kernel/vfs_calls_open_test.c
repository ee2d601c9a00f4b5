/*
 * VFS selftests through the calls alone (suite vfs_calls): open's flags (O_CREAT,
 * O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY, the access modes) and the descriptor
 * table (dup, dup2, close, the lowest free descriptor, the table full).
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
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
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
	u64 ino = vfs_ino_of(f);
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
	EXPECT_TRUE(vfs_all_zero((u8 *)buf + 2, 6));
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

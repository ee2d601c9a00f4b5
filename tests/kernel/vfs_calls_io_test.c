/*
 * VFS selftests through the calls alone (suite vfs_calls): read, write, pread,
 * pwrite, lseek, holes, truncate and ftruncate.
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
	EXPECT_TRUE(vfs_all_zero(buf, sizeof(buf)));
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(vfs_pread(fd, buf, 16, 0), 16);
	EXPECT_EQ(memcmp(buf, "abc", 3), 0);
	EXPECT_TRUE(vfs_all_zero(buf + 3, 13));
	EXPECT_EQ(vfs_pread(fd, buf, 16, HOLE_AT - 4), 7);
	EXPECT_TRUE(vfs_all_zero(buf, 4));
	EXPECT_EQ(memcmp(buf + 4, "xyz", 3), 0);
	/* pwrite past the end makes a hole too. */
	EXPECT_EQ(vfs_pwrite(fd, "!", 1, 2 * HOLE_AT), 1);
	EXPECT_EQ(vfs_fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 2 * HOLE_AT + 1);
	EXPECT_LT(st.st_blocks * 512, (u64)st.st_size / 4);
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_EQ(vfs_pread(fd, buf, sizeof(buf), HOLE_AT + 4096), sizeof(buf));
	EXPECT_TRUE(vfs_all_zero(buf, sizeof(buf)));
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, a_write_past_the_end_leaves_a_hole_of_zeros_holding_no_blocks)
{
	vfs_test_run("vfs_calls", __func__, sparse_file);
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
	       EXPECT_TRUE(vfs_all_zero(buf + hl, size - hl));
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

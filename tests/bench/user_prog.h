/*
 * The benchmarks that run user programs (syscall, user_vfs): write a program the
 * Makefile linked into the test image (tests/user/elf_blob.S) to a file they
 * can exec.
 */
#ifndef TESTS_BENCH_USER_PROG_H
#define TESTS_BENCH_USER_PROG_H

#include <grace/errno.h>
#include <grace/fs.h>

/* Write [start, end) to path, mode 0755, /bin made if missing: 0 or -errno. */
static inline int bench_user_install(const char *path, const char *start, const char *end)
{
	int err = vfs_mkdir("/bin", 0755);
	if (err && err != -EEXIST)
		return err;
	int fd = vfs_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0755);
	if (fd < 0)
		return fd;
	long n = vfs_write(fd, start, end - start);
	vfs_close(fd);
	return n == end - start ? 0 : n < 0 ? (int)n : -EIO;
}

#endif

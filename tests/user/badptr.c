/*
 * System calls handed pointers they may not use: NULL, a page just unmapped,
 * a read-only page for the kernel to write, a string running into an unmapped
 * page, and a kernel address (the start of the kernel half: 0xffff800000000000
 * on x86_64, 0xffffffc000000000 under Sv39 on riscv64). Each must fail as on
 * Linux, with EFAULT where the kernel would touch the memory and the call's
 * own error where it looks at something else first, and must change nothing:
 * a read that faulted leaves the file offset where it was.
 *
 * Every call is made through syscall(), so that neither libc nor a vDSO
 * touches the pointer first; and none is a case where qemu-user, the riscv64
 * reference, checks a buffer that Linux would not touch (a read at the end of
 * a file, say, which Linux answers 0 and qemu-user EFAULT) or answers other
 * than Linux does (nanosleep's EINVAL for an unreadable request).
 *
 * userdiff: bad_pointers_get_the_errors_linux_gives
 * run: /bin/badptr
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

#if defined(__x86_64__)
#define KERNEL_ADDR 0xffff800000000000UL
#elif defined(__riscv) && __riscv_xlen == 64
#define KERNEL_ADDR 0xffffffc000000000UL
#else
#error "badptr: x86_64 or riscv64"
#endif

/* What a call returned: its value, or -1 and the errno's name. */
static void result(const char *what, long ret)
{
	if (ret < 0)
		printf("%s = -1 %s\n", what, strerrorname_np(errno));
	else
		printf("%s = %ld\n", what, ret);
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *volatile null = NULL;
	void *kernel = (void *)KERNEL_ADDR;

	/*
	 * A read-only page, then an unmapped one after a page that ends in a string
	 * without its NUL. No mmap() follows, which could fill the hole.
	 */
	char *readonly = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *pages =
	    mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (readonly == MAP_FAILED || pages == MAP_FAILED || munmap(pages + PAGE, PAGE)) {
		printf("mmap: %s\n", strerrorname_np(errno));
		return 1;
	}
	char *unmapped = pages + PAGE;
	memset(pages, 'x', PAGE);
	char *unterminated = unmapped - 8;

	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		printf("mkdir /tmp: %s\n", strerrorname_np(errno));
	char path[] = "/tmp/badptr.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "0123456789abcdef", 16) != 16 || lseek(fd, 0, SEEK_SET)) {
		printf("a scratch file: %s\n", strerrorname_np(errno));
		return 1;
	}

	printf("-- buffers the kernel reads\n");
	result("write(1, NULL, 5)", syscall(SYS_write, 1, null, 5));
	result("write(1, unmapped, 5)", syscall(SYS_write, 1, unmapped, 5));
	result("write(1, kernel, 5)", syscall(SYS_write, 1, kernel, 5));
	result("write(1, NULL, 0)", syscall(SYS_write, 1, null, 0));
	result("write(1, buf, SIZE_MAX)", syscall(SYS_write, 1, pages, SIZE_MAX));
	result("pwrite64(fd, kernel, 4, 0)", syscall(SYS_pwrite64, fd, kernel, 4, 0));
	struct iovec bad_base[] = {{unmapped, 4}};
	result("writev(1, {unmapped, 4}, 1)", syscall(SYS_writev, 1, bad_base, 1));
	result("writev(1, unmapped, 1)", syscall(SYS_writev, 1, unmapped, 1));
	result("writev(1, kernel, 1)", syscall(SYS_writev, 1, kernel, 1));

	printf("-- buffers the kernel writes\n");
	result("read(fd, NULL, 4)", syscall(SYS_read, fd, null, 4));
	result("read(fd, unmapped, 4)", syscall(SYS_read, fd, unmapped, 4));
	result("read(fd, kernel, 4)", syscall(SYS_read, fd, kernel, 4));
	result("read(fd, read-only page, 4)", syscall(SYS_read, fd, readonly, 4));
	result("read(fd, main's code, 4)", syscall(SYS_read, fd, (void *)main, 4));
	result("the offset after those reads", lseek(fd, 0, SEEK_CUR));
	result("pread64(fd, unmapped, 4, 0)", syscall(SYS_pread64, fd, unmapped, 4, 0));
	struct iovec bad_read[] = {{kernel, 4}};
	result("readv(fd, {kernel, 4}, 1)", syscall(SYS_readv, fd, bad_read, 1));
	result("the offset after readv", lseek(fd, 0, SEEK_CUR));
	char buf[8];
	result("read(fd, buf, 4) after them all", syscall(SYS_read, fd, buf, 4));
	printf("it read: %.4s\n", buf);
	result("fstat(fd, NULL)", syscall(SYS_fstat, fd, null));
	result("fstat(fd, kernel)", syscall(SYS_fstat, fd, kernel));
	result("fstat(-1, NULL)", syscall(SYS_fstat, -1, null));
	result("newfstatat(\"/\", unmapped)", syscall(SYS_newfstatat, AT_FDCWD, "/", unmapped, 0));
	result("newfstatat(\"/nonexistent\", kernel)",
	       syscall(SYS_newfstatat, AT_FDCWD, "/nonexistent", kernel, 0));
	result("getcwd(unmapped, 64)", syscall(SYS_getcwd, unmapped, 64));
	result("getcwd(kernel, 64)", syscall(SYS_getcwd, kernel, 64));
	result("uname(unmapped)", syscall(SYS_uname, unmapped));
	result("uname(kernel)", syscall(SYS_uname, kernel));
	result("clock_gettime(CLOCK_MONOTONIC, NULL)",
	       syscall(SYS_clock_gettime, CLOCK_MONOTONIC, null));
	result("clock_gettime(CLOCK_MONOTONIC, kernel)",
	       syscall(SYS_clock_gettime, CLOCK_MONOTONIC, kernel));
	result("getrandom(unmapped, 16, 0)", syscall(SYS_getrandom, unmapped, 16, 0));
	result("getrandom(read-only page, 16, 0)", syscall(SYS_getrandom, readonly, 16, 0));
	result("getdents64(\"/\", kernel, 4096)",
	       syscall(SYS_getdents64, open("/", O_RDONLY), kernel, 4096));

	printf("-- paths\n");
	result("openat(NULL)", syscall(SYS_openat, AT_FDCWD, null, O_RDONLY));
	result("openat(unmapped)", syscall(SYS_openat, AT_FDCWD, unmapped, O_RDONLY));
	result("openat(kernel)", syscall(SYS_openat, AT_FDCWD, kernel, O_RDONLY));
	result("openat(a string into an unmapped page)",
	       syscall(SYS_openat, AT_FDCWD, unterminated, O_RDONLY));
	result("newfstatat(NULL)", syscall(SYS_newfstatat, AT_FDCWD, null, buf, 0));
	result("newfstatat(kernel)", syscall(SYS_newfstatat, AT_FDCWD, kernel, buf, 0));
	result("mkdirat(unmapped)", syscall(SYS_mkdirat, AT_FDCWD, unmapped, 0755));
	result("unlinkat(kernel)", syscall(SYS_unlinkat, AT_FDCWD, kernel, 0));
	result("renameat2(path, NULL)", syscall(SYS_renameat2, AT_FDCWD, path, AT_FDCWD, null, 0));
	result("symlinkat(unmapped, new)",
	       syscall(SYS_symlinkat, unmapped, AT_FDCWD, "/tmp/badptr-link"));
	result("symlinkat(target, kernel)", syscall(SYS_symlinkat, path, AT_FDCWD, kernel));
	result("chdir(kernel)", syscall(SYS_chdir, kernel));
	result("newfstatat(path) after them",
	       syscall(SYS_newfstatat, AT_FDCWD, path, (struct stat[1]){}, 0));

	printf("-- a link read into a bad buffer\n");
	result("symlinkat(path, link)", syscall(SYS_symlinkat, path, AT_FDCWD, "/tmp/badptr-link"));
	result("readlinkat(link, unmapped, 64)",
	       syscall(SYS_readlinkat, AT_FDCWD, "/tmp/badptr-link", unmapped, 64));
	result("readlinkat(link, kernel, 64)",
	       syscall(SYS_readlinkat, AT_FDCWD, "/tmp/badptr-link", kernel, 64));
	unlink("/tmp/badptr-link");

	printf("-- times\n");
	result("clock_nanosleep(CLOCK_MONOTONIC, 0, NULL, NULL)",
	       syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, null, null));
	result("clock_nanosleep(CLOCK_MONOTONIC, 0, unmapped, NULL)",
	       syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, unmapped, null));
	result("clock_nanosleep(CLOCK_MONOTONIC, 0, kernel, NULL)",
	       syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, kernel, null));

	close(fd);
	unlink(path);
	printf("done\n");
	return 0;
}

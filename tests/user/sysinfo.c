/*
 * What a program asks of the system about itself and the machine: statx
 * against fstat and stat (a file, a directory, a symbolic link, a device, a
 * descriptor with AT_EMPTY_PATH), its mask and its errors; sysinfo, whose
 * figures differ from machine to machine, reduced to the facts every Linux
 * gives (bytes as the unit, free memory within the total, at least this
 * process, an uptime of at least a second); and the resource limits through
 * getrlimit, setrlimit and prlimit64.
 *
 * The limits printed are the ones the runner gives the host's side (RLIMIT_STACK
 * 8 MiB, RLIMIT_NOFILE 1024, RLIMIT_CORE 0: tests/harness/userdiff.py), which are
 * Grace's. Only sets that change nothing, or that Linux refuses too, are made:
 * Grace's limits are fixed, and qemu-user, the riscv64 reference, ignores a
 * set of RLIMIT_STACK, RLIMIT_DATA or RLIMIT_AS. Every call is made through
 * syscall(), so that libc's wrappers (getrlimit is prlimit64 in glibc) do not
 * stand in for the one under test.
 *
 * userdiff: statx_sysinfo_and_rlimits_answer_as_on_linux
 * run: /bin/sysinfo
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KERNEL_ADDR 0xffff800000000000UL
#elif defined(__riscv) && __riscv_xlen == 64
#define KERNEL_ADDR 0xffffffc000000000UL
#else
#error "sysinfo: x86_64 or riscv64"
#endif

/* The fields newfstatat fills, which statx must report as filled. */
#define STATX_FILLED                                                                               \
	(STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_INO | STATX_SIZE |  \
	 STATX_BLOCKS)

static void *const kernel = (void *)KERNEL_ADDR;

static void result(const char *what, long ret)
{
	if (ret < 0)
		printf("%s = -1 %s\n", what, strerrorname_np(errno));
	else
		printf("%s = %ld\n", what, ret);
}

static long do_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	memset(sx, 0xaa, sizeof(*sx));
	return syscall(SYS_statx, dirfd, path, flags, mask, sx);
}

/* statx's fields beside stat's: which agree, and the ones that are the same on every system. */
static void compare(const char *what, long ret, const struct statx *sx, const struct stat *st)
{
	if (ret < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	/* A directory's size is each file system's own (ramfs: its entries; ext4: its blocks). */
	printf("%s: mask has the stat fields %d; mode %o nlink %u", what,
	       (sx->stx_mask & STATX_FILLED) == STATX_FILLED, sx->stx_mode, sx->stx_nlink);
	if (!S_ISDIR(sx->stx_mode))
		printf(" size %llu", (unsigned long long)sx->stx_size);
	printf("\n");
	printf("  agree: ino %d mode %d nlink %d uid %d gid %d size %d blocks %d blksize %d dev %d "
	       "rdev %d\n",
	       sx->stx_ino == st->st_ino, sx->stx_mode == st->st_mode,
	       sx->stx_nlink == st->st_nlink, sx->stx_uid == st->st_uid, sx->stx_gid == st->st_gid,
	       (off_t)sx->stx_size == st->st_size, (blkcnt_t)sx->stx_blocks == st->st_blocks,
	       (blksize_t)sx->stx_blksize == st->st_blksize,
	       makedev(sx->stx_dev_major, sx->stx_dev_minor) == st->st_dev,
	       makedev(sx->stx_rdev_major, sx->stx_rdev_minor) == st->st_rdev);
}

static void statx_calls(void)
{
	printf("-- statx\n");
	struct statx sx;
	struct stat st;
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		printf("mkdir /tmp: %s\n", strerrorname_np(errno));
	char dir[] = "/tmp/sysinfo.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("mkdtemp: %s\n", strerrorname_np(errno));
		exit(1);
	}
	char file[64], link[64];
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	int fd = open(file, O_CREAT | O_RDWR, 0640);
	static char data[5000];
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data) || symlink("file", link) < 0) {
		printf("a scratch file: %s\n", strerrorname_np(errno));
		exit(1);
	}

	stat(file, &st);
	compare("a file", do_statx(AT_FDCWD, file, 0, STATX_BASIC_STATS, &sx), &sx, &st);
	compare("no fields asked for", do_statx(AT_FDCWD, file, 0, 0, &sx), &sx, &st);
	fstat(fd, &st);
	compare("AT_EMPTY_PATH on its descriptor",
		do_statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx), &sx, &st);
	stat(dir, &st);
	compare("a directory", do_statx(AT_FDCWD, dir, 0, STATX_BASIC_STATS, &sx), &sx, &st);
	compare("relative to its descriptor", ({
			int dfd = open(dir, O_RDONLY | O_DIRECTORY);
			long r = do_statx(dfd, ".", 0, STATX_BASIC_STATS, &sx);
			close(dfd);
			r;
		}),
		&sx, &st);
	lstat(link, &st);
	compare("a symlink, not followed",
		do_statx(AT_FDCWD, link, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx), &sx, &st);
	stat(link, &st);
	compare("a symlink, followed", do_statx(AT_FDCWD, link, 0, STATX_BASIC_STATS, &sx), &sx,
		&st);
	stat("/dev/null", &st);
	compare("/dev/null", do_statx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &sx), &sx, &st);
	printf("  rdev %u:%u\n", sx.stx_rdev_major, sx.stx_rdev_minor);

	result("missing", do_statx(AT_FDCWD, "/tmp/sysinfo-missing", 0, STATX_BASIC_STATS, &sx));
	result("empty path", do_statx(AT_FDCWD, "", 0, STATX_BASIC_STATS, &sx));
	result("both sync flags", do_statx(AT_FDCWD, file, 0x6000, STATX_BASIC_STATS, &sx));
	result("an unknown flag", do_statx(AT_FDCWD, file, 0x10000, STATX_BASIC_STATS, &sx));
	result("AT_REMOVEDIR", do_statx(AT_FDCWD, file, AT_REMOVEDIR, STATX_BASIC_STATS, &sx));
	result("the reserved mask bit", do_statx(AT_FDCWD, file, 0, 0x80000000u, &sx));
	result("a bad descriptor", do_statx(999, "file", 0, STATX_BASIC_STATS, &sx));
	result("a bad descriptor, AT_EMPTY_PATH",
	       do_statx(999, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx));
	result("NULL path", syscall(SYS_statx, AT_FDCWD, NULL, 0, STATX_BASIC_STATS, &sx));
	result("kernel buffer", syscall(SYS_statx, AT_FDCWD, file, 0, STATX_BASIC_STATS, kernel));

	close(fd);
	unlink(link);
	unlink(file);
	rmdir(dir);
}

static void sysinfo_call(void)
{
	printf("-- sysinfo\n");
	struct sysinfo si;
	memset(&si, 0xaa, sizeof(si));
	result("sysinfo", syscall(SYS_sysinfo, &si));
	printf(
	    "mem_unit %u, totalram > 0 %d, 0 < freeram <= totalram %d, procs >= 1 %d, uptime >= 1 "
	    "%d\n",
	    si.mem_unit, si.totalram > 0, si.freeram > 0 && si.freeram <= si.totalram,
	    si.procs >= 1, si.uptime >= 1);
	printf("freeswap <= totalswap %d, freehigh <= totalhigh %d\n", si.freeswap <= si.totalswap,
	       si.freehigh <= si.totalhigh);
	result("sysinfo into the kernel", syscall(SYS_sysinfo, kernel));
}

static void show_limit(const char *what, long ret, const struct rlimit *rl)
{
	if (ret < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	char cur[24], max[24];
	snprintf(cur, sizeof(cur), "%llu", (unsigned long long)rl->rlim_cur);
	snprintf(max, sizeof(max), "%llu", (unsigned long long)rl->rlim_max);
	printf("%s: %s %s\n", what, rl->rlim_cur == RLIM_INFINITY ? "infinity" : cur,
	       rl->rlim_max == RLIM_INFINITY ? "infinity" : max);
}

static void limits(void)
{
	printf("-- limits\n");
	struct rlimit rl, old;
	show_limit("getrlimit RLIMIT_STACK", syscall(SYS_getrlimit, RLIMIT_STACK, &rl), &rl);
	show_limit("getrlimit RLIMIT_NOFILE", syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl), &rl);
	show_limit("getrlimit RLIMIT_CORE", syscall(SYS_getrlimit, RLIMIT_CORE, &rl), &rl);
	show_limit("prlimit64 RLIMIT_NOFILE", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl),
		   &rl);
	show_limit("prlimit64 of its own pid",
		   syscall(SYS_prlimit64, getpid(), RLIMIT_STACK, NULL, &rl), &rl);
	result("getrlimit resource 16", syscall(SYS_getrlimit, 16, &rl));
	result("getrlimit into the kernel", syscall(SYS_getrlimit, RLIMIT_NOFILE, kernel));

	rl = (struct rlimit){1024, 1024};
	result("setrlimit RLIMIT_NOFILE as it is", syscall(SYS_setrlimit, RLIMIT_NOFILE, &rl));
	rl = (struct rlimit){2000, 1024};
	result("setrlimit soft above hard", syscall(SYS_setrlimit, RLIMIT_NOFILE, &rl));
	rl = (struct rlimit){2000000, 2000000};
	result("setrlimit RLIMIT_NOFILE past nr_open", syscall(SYS_setrlimit, RLIMIT_NOFILE, &rl));
	result("setrlimit resource 16", syscall(SYS_setrlimit, 16, &rl));
	result("setrlimit from the kernel", syscall(SYS_setrlimit, RLIMIT_NOFILE, kernel));

	rl = (struct rlimit){1024, 1024};
	show_limit("prlimit64 set as it is, old",
		   syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, &old), &old);
	result("prlimit64 nothing", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, NULL));
	result("prlimit64 pid -1", syscall(SYS_prlimit64, -1, RLIMIT_NOFILE, NULL, &rl));
	result("prlimit64 no such pid",
	       syscall(SYS_prlimit64, 0x7fffffff, RLIMIT_NOFILE, NULL, &rl));
	result("prlimit64 resource 16", syscall(SYS_prlimit64, 0, 16, NULL, &rl));
	result("prlimit64 old into the kernel",
	       syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, kernel));
	result("prlimit64 new from the kernel",
	       syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, kernel, NULL));
	result("prlimit64 new from the kernel, pid -1",
	       syscall(SYS_prlimit64, -1, RLIMIT_NOFILE, kernel, NULL));
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	statx_calls();
	sysinfo_call();
	limits();
	return 0;
}

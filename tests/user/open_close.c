/*
 * The VFS loops of the 2009 and 2010 seed threads from user mode:
 * "open_close PATH LOOPS CPU [OP]" binds itself to CPU, then does OP on PATH
 * LOOPS times and exits 0 (1 if a call failed). OP is open (close(open(PATH)),
 * the default: the 2009 call_rcu thread's workload as its author ran it, one
 * process per CPU), creat (open with O_CREAT | O_TRUNC, close, unlink) or stat
 * (newfstatat). The user_vfs benchmark (tests/bench/user_vfs_bench.c) runs it
 * beside the same loops in the kernel. Built without libc (nolibc.h), linked
 * into the test image.
 */
#include "nolibc.h"

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

void start_c(long *sp)
{
	const char *const *argv = (const char *const *)(sp + 1);
	if (sp[0] < 4)
		exit_group(2);
	const char *path = argv[1], *op = sp[0] > 4 ? argv[4] : "open";
	unsigned long loops = parse_ulong(argv[2]), cpu = parse_ulong(argv[3]);
	/* Static, so zeroed without a memset there is no libc for. */
	static unsigned long mask[8];
	static long st[32]; /* struct stat: 144 bytes on x86_64, 128 on riscv64 */
	int creat = streq(op, "creat"), stat = streq(op, "stat");

	if (cpu >= sizeof(mask) * 8 || (!creat && !stat && !streq(op, "open")))
		exit_group(2);
	mask[cpu / 64] = 1UL << (cpu % 64);
	if (sys3(NR_SCHED_SETAFFINITY, 0, sizeof(mask), (long)mask))
		exit_group(1);
	for (unsigned long i = 0; i < loops; i++) {
		if (stat) {
			if (sys4(NR_NEWFSTATAT, AT_FDCWD, (long)path, (long)st, 0))
				exit_group(1);
			continue;
		}
		long fd = creat ? sys4(NR_OPENAT, AT_FDCWD, (long)path,
				       O_CREAT | O_WRONLY | O_TRUNC, 0644)
				: sys3(NR_OPENAT, AT_FDCWD, (long)path, 0);
		if (fd < 0 || sys3(NR_CLOSE, fd, 0, 0))
			exit_group(1);
		if (creat && sys3(NR_UNLINKAT, AT_FDCWD, (long)path, 0))
			exit_group(1);
	}
	exit_group(0);
}

/*
 * close(open(path)) in a loop, from user mode: "open_close PATH LOOPS CPU" binds
 * itself to CPU, then opens and closes PATH LOOPS times and exits 0 (1 if a call
 * failed). The 2009 call_rcu thread's workload as its author ran it, one process
 * per CPU; the user_vfs benchmark (tests/bench/user_vfs_bench.c) runs it beside
 * the same loop in the kernel. Built without libc (nolibc.h), linked into the
 * test image.
 */
#include "nolibc.h"

void start_c(long *sp)
{
	const char *const *argv = (const char *const *)(sp + 1);
	if (sp[0] < 4)
		exit_group(2);
	const char *path = argv[1];
	unsigned long loops = parse_ulong(argv[2]), cpu = parse_ulong(argv[3]);
	unsigned long mask[8] = {0};

	if (cpu >= sizeof(mask) * 8)
		exit_group(2);
	mask[cpu / 64] = 1UL << (cpu % 64);
	if (sys3(NR_SCHED_SETAFFINITY, 0, sizeof(mask), (long)mask))
		exit_group(1);
	for (unsigned long i = 0; i < loops; i++) {
		long fd = sys3(NR_OPENAT, AT_FDCWD, (long)path, 0);
		if (fd < 0 || sys3(NR_CLOSE, fd, 0, 0))
			exit_group(1);
	}
	exit_group(0);
}

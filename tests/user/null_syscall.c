/*
 * The null system call in a loop: getppid() argv[1] times, then exit_group(0).
 * Built without libc (nolibc.h) and linked into the test image, so that the
 * syscall benchmark (tests/bench/syscall_bench.c) can run it with nothing but
 * the kernel: one system call per iteration and no other work, so what a run
 * costs beyond a run of 0 iterations is the calls.
 */
#include "nolibc.h"

void start_c(long *sp)
{
	const char *const *argv = (const char *const *)(sp + 1);
	unsigned long loops = sp[0] > 1 ? parse_ulong(argv[1]) : 0;

	for (unsigned long i = 0; i < loops; i++)
		sys3(NR_GETPPID, 0, 0, 0);
	exit_group(0);
}

/*
 * make bench BENCH=syscall: the round trip of the null system call, getppid(),
 * from user mode: the program tests/user/null_syscall.c, linked into the test
 * image, is written to /bin and run with 0 and with SYSCALL_LOOPS iterations;
 * what the second run costs beyond the first (exec, exit, the wait) is the
 * calls. The best of SYSCALL_RUNS runs each, since a run under QEMU can only be
 * slowed down by the host, never sped up.
 *
 *   bench: syscall arch=riscv64 online=4 cpus=1 call=getppid loops=200000 ns_per_call=...
 *
 * The phase "getppid" brackets one run of SYSCALL_LOOPS calls, so that
 * make profile BENCH=syscall counts the instructions of a call, user side and
 * kernel side together (the run's exec and exit spread over the loops).
 */
#include <grace/bench.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/process.h>
#include <grace/time.h>
#include "user_prog.h"

#define SYSCALL_LOOPS 200000
#define SYSCALL_LOOPS_ARG "200000" /* SYSCALL_LOOPS, as the program's argument */
#define SYSCALL_RUNS 3
#define SYSCALL_PROGRAM "/bin/null_syscall"

extern const char null_syscall_start[], null_syscall_end[];

/* One run with loops iterations: its wall-clock time, or 0 with *err. */
static u64 syscall_run(const char *loops, int *err)
{
	char *argv[] = {SYSCALL_PROGRAM, (char *)loops, NULL}, *envp[] = {NULL};
	u64 start = arch_clock_ns();
	struct process *p = proc_spawn(SYSCALL_PROGRAM, argv, envp, err);
	if (!p)
		return 0;
	int status = proc_wait(p);
	if (status) {
		*err = -ECHILD;
		return 0;
	}
	return arch_clock_ns() - start;
}

static u64 syscall_best(const char *loops, int *err)
{
	u64 best = ~0ULL;
	for (unsigned i = 0; i < SYSCALL_RUNS && !*err; i++) {
		u64 t = syscall_run(loops, err);
		if (t && t < best)
			best = t;
	}
	return best;
}

BENCH(syscall)
{
	int err = bench_user_install(SYSCALL_PROGRAM, null_syscall_start, null_syscall_end);
	if (err) {
		bench_error("syscall", "cannot write %s: %s", SYSCALL_PROGRAM, errno_name(err));
		return;
	}
	u64 empty = syscall_best("0", &err);
	u64 full = syscall_best(SYSCALL_LOOPS_ARG, &err);
	if (err) {
		bench_error("syscall", "the program did not run to the end: %s", errno_name(err));
		return;
	}
	bench_phase_begin("getppid", 1);
	syscall_run(SYSCALL_LOOPS_ARG, &err);
	bench_phase_end(SYSCALL_LOOPS);
	u64 per_call = full > empty ? (full - empty) / SYSCALL_LOOPS : 0;
	bench_report("syscall", 1, "call=getppid loops=%u ns_per_call=%llu run_ns=%llu",
		     SYSCALL_LOOPS, (unsigned long long)per_call, (unsigned long long)empty);
	vfs_unlink(SYSCALL_PROGRAM);
}

/*
 * make bench BENCH=user_vfs: close(open(path)) from user mode beside the same
 * loop in the kernel, in one boot: the 2009 call_rcu thread's workload as its
 * author ran it (a process per CPU), and open_close's in-kernel loop
 * (tests/bench/vfs_bench.c), so that the system-call boundary's share of each
 * operation shows. At cpus = 1 and every CPU online, in both VFS designs, each
 * CPU in a directory of its own (/bu/<i>/f) or all in one (/bu/same/f<i>):
 *
 *   bench: user_vfs arch=riscv64 online=4 cpus=4 vfs=scalable dir=same user_ns=... kernel_ns=...
 * boundary_pct=...
 *
 * user_ns is the wall-clock time per operation of one of the k processes
 * (tests/user/open_close.c, linked into the test image, each bound to its CPU),
 * less what a run of no operations costs (exec, exit); kernel_ns the same for
 * k kernel threads (smp_run_on()) calling sys_open and sys_close; boundary_pct
 * what user mode adds, as a share of user_ns. Under QEMU the wall clock
 * overstates it on riscv64, whose emulation flushes the whole TLB each time a
 * system call opens the user-access window (sstatus.SUM) to copy the path; make
 * profile BENCH=user_vfs counts each side's instructions per operation instead,
 * in the phases user/vfs=<mode>/dir=<dir>/cpus=<k> and kernel/....
 */
#include <grace/bench.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/process.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include "user_prog.h"

#define USER_VFS_LOOPS 20000
#define USER_VFS_LOOPS_ARG "20000" /* USER_VFS_LOOPS, as the program's argument */
#define USER_VFS_PROGRAM "/bin/open_close"
#define USER_VFS_PATH_MAX 24

extern const char open_close_start[], open_close_end[];

static struct {
	bool same;
	atomic_t errors;
} uv;

static void user_vfs_path(char *buf, unsigned rank, bool same)
{
	if (same)
		snprintf(buf, USER_VFS_PATH_MAX, "/bu/same/f%u", rank);
	else
		snprintf(buf, USER_VFS_PATH_MAX, "/bu/%u/f", rank);
}

/* Make every rank's directory and file, for both layouts. */
static int user_vfs_setup(unsigned ranks)
{
	char path[USER_VFS_PATH_MAX];
	sys_mkdir("/bu", 0755);
	sys_mkdir("/bu/same", 0755);
	for (unsigned r = 0; r < ranks; r++) {
		snprintf(path, sizeof(path), "/bu/%u", r);
		sys_mkdir(path, 0755);
		for (int same = 0; same < 2; same++) {
			user_vfs_path(path, r, same);
			int fd = sys_open(path, O_CREAT | O_WRONLY, 0644);
			if (fd < 0)
				return fd;
			sys_close(fd);
		}
	}
	return 0;
}

static void user_vfs_kernel_worker(void *arg)
{
	char path[USER_VFS_PATH_MAX];
	user_vfs_path(path, (unsigned)smp_online_index(smp_processor_id()), uv.same);
	for (unsigned i = 0; i < USER_VFS_LOOPS; i++) {
		int fd = sys_open(path, O_RDONLY, 0);
		if (fd < 0 || sys_close(fd)) {
			atomic_inc(&uv.errors);
			return;
		}
	}
}

/* One process's arguments: its file and its CPU, as text. */
struct user_vfs_proc {
	struct process *p;
	char path[USER_VFS_PATH_MAX], cpu[8];
};

/* k processes, rank r on the r-th online CPU, each loops times: the wall-clock time, or 0. */
static u64 user_vfs_run(unsigned k, bool same, const char *loops)
{
	struct user_vfs_proc *procs = kzalloc(k * sizeof(*procs));
	char *envp[] = {NULL};
	int err, failed = !procs;
	u64 start = arch_clock_ns();
	for (unsigned r = 0; procs && r < k; r++) {
		struct user_vfs_proc *u = &procs[r];
		user_vfs_path(u->path, r, same);
		snprintf(u->cpu, sizeof(u->cpu), "%u", smp_online_cpu(r));
		char *argv[] = {USER_VFS_PROGRAM, u->path, (char *)loops, u->cpu, NULL};
		u->p = proc_spawn(USER_VFS_PROGRAM, argv, envp, &err);
		failed |= !u->p;
	}
	for (unsigned r = 0; procs && r < k; r++)
		if (procs[r].p && proc_wait(procs[r].p))
			failed = 1;
	u64 t = arch_clock_ns() - start;
	kfree(procs);
	return failed ? 0 : t;
}

/* A phase named user/... or kernel/..., so make profile gives each side's instructions per op. */
static void user_vfs_phase_begin(const char *fmt, const char *side, unsigned k)
{
	char name[64];
	snprintf(name, sizeof(name), fmt, side);
	bench_phase_begin(name, k);
}

BENCH(user_vfs)
{
	unsigned online = num_online_cpus(), counts[2] = {1, online};
	enum vfs_mode before = vfs_get_mode();
	int err = bench_user_install(USER_VFS_PROGRAM, open_close_start, open_close_end);
	if (!err)
		err = user_vfs_setup(online);
	if (err) {
		bench_error("user_vfs", "cannot set up the files: %s", errno_name(err));
		return;
	}
	for (unsigned c = 0; c < (online > 1 ? 2 : 1); c++) {
		unsigned k = counts[c];
		for (int m = 0; m < 2; m++) {
			enum vfs_mode mode = m ? VFS_GLOBAL : VFS_SCALABLE;
			vfs_set_mode(mode);
			for (int same = 0; same < 2; same++) {
				char phase[64];
				snprintf(phase, sizeof(phase), "%%s/vfs=%s/dir=%s/cpus=%u",
					 vfs_mode_name(mode), same ? "same" : "separate", k);
				u64 empty = user_vfs_run(k, same, "0");
				user_vfs_phase_begin(phase, "user", k);
				u64 user = user_vfs_run(k, same, USER_VFS_LOOPS_ARG);
				bench_phase_end((u64)k * USER_VFS_LOOPS);
				uv.same = same;
				atomic_set(&uv.errors, 0);
				user_vfs_phase_begin(phase, "kernel", k);
				u64 t0 = arch_clock_ns();
				smp_run_on(k, user_vfs_kernel_worker, NULL);
				u64 kernel = (arch_clock_ns() - t0) / USER_VFS_LOOPS;
				bench_phase_end((u64)k * USER_VFS_LOOPS);
				if (!empty || !user || atomic_read(&uv.errors)) {
					bench_error("user_vfs", "cpus=%u: a loop failed", k);
					vfs_set_mode(before);
					return;
				}
				u64 per_op = user > empty ? (user - empty) / USER_VFS_LOOPS : 0;
				u64 pct = per_op > kernel ? (per_op - kernel) * 100 / per_op : 0;
				bench_report(
				    "user_vfs", k,
				    "vfs=%s dir=%s user_ns=%llu kernel_ns=%llu boundary_pct=%llu",
				    vfs_mode_name(mode), same ? "same" : "separate",
				    (unsigned long long)per_op, (unsigned long long)kernel,
				    (unsigned long long)pct);
			}
		}
	}
	vfs_set_mode(before);
}

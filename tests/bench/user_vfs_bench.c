/*
 * make bench BENCH=user_vfs: the VFS loops of the 2009 and 2010 seed threads
 * from user mode beside the same loops in the kernel, in one boot: each as its
 * author ran it (a process per CPU, tests/user/open_close.c linked into the
 * test image) and as the in-kernel benchmarks run it (tests/bench/vfs_bench.c),
 * so that the system-call boundary's share of each operation shows. At cpus =
 * 1, 2, 4, ... and every CPU online, in both VFS designs:
 *
 *   op=open_close  close(open(path)); each CPU in a directory of its own
 *                  (dir=separate, /bu/<i>/f) or all in one (dir=same, /bu/same/f<i>)
 *   op=creat_unlink  open(path, O_CREAT | O_TRUNC), close, unlink; /bu/<i>/c or
 *                  /bu/same/c<i>
 *   op=stat        stat of a four-component path, each CPU its own file under
 *                  directories all share: /bu/a/b/f<i> (dir=separate only)
 *
 *   bench: user_vfs arch=riscv64 online=4 cpus=4 op=open_close vfs=scalable dir=same
 * user_ns=... kernel_ns=... boundary_pct=...
 *
 * user_ns is the wall-clock time per operation of one of the k processes, less
 * what a run of no operations costs (exec, exit); kernel_ns the same for k
 * kernel threads (smp_run_on()) making the VFS's kernel calls; boundary_pct what
 * user mode adds, as a share of user_ns. Under QEMU the wall clock overstates
 * it on riscv64, whose emulation flushes the whole TLB each time a system call
 * opens the user-access window (sstatus.SUM) to copy the path; make profile
 * BENCH=user_vfs counts each side's instructions per operation instead, in the
 * phases user/op=<op>/vfs=<mode>/dir=<dir>/cpus=<k> and kernel/....
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

#define USER_VFS_LOOPS 5000
#define USER_VFS_LOOPS_ARG "5000" /* USER_VFS_LOOPS, as the program's argument */
#define USER_VFS_PROGRAM "/bin/open_close"
#define USER_VFS_PATH_MAX 24

extern const char open_close_start[], open_close_end[];

enum user_vfs_op { OP_OPEN_CLOSE, OP_CREAT_UNLINK, OP_STAT, NR_OPS };
static const struct {
	const char *name, *arg; /* the row's name; the program's OP */
	bool same;		/* has a dir=same row */
} user_vfs_ops[NR_OPS] = {
    [OP_OPEN_CLOSE] = {"open_close", "open", true},
    [OP_CREAT_UNLINK] = {"creat_unlink", "creat", true},
    [OP_STAT] = {"stat", "stat", false},
};

static struct {
	enum user_vfs_op op;
	bool same;
	atomic_t errors;
} uv;

static void user_vfs_path(char *buf, unsigned rank, enum user_vfs_op op, bool same)
{
	if (op == OP_STAT)
		snprintf(buf, USER_VFS_PATH_MAX, "/bu/a/b/f%u", rank);
	else if (same)
		snprintf(buf, USER_VFS_PATH_MAX, "/bu/same/%c%u", op == OP_OPEN_CLOSE ? 'f' : 'c',
			 rank);
	else
		snprintf(buf, USER_VFS_PATH_MAX, "/bu/%u/%c", rank,
			 op == OP_OPEN_CLOSE ? 'f' : 'c');
}

/* Make every rank's directories, and the files open_close and stat find there. */
static int user_vfs_setup(unsigned ranks)
{
	char path[USER_VFS_PATH_MAX];
	vfs_mkdir("/bu", 0755);
	vfs_mkdir("/bu/same", 0755);
	vfs_mkdir("/bu/a", 0755);
	vfs_mkdir("/bu/a/b", 0755);
	for (unsigned r = 0; r < ranks; r++) {
		snprintf(path, sizeof(path), "/bu/%u", r);
		vfs_mkdir(path, 0755);
		for (int i = 0; i < 3; i++) {
			user_vfs_path(path, r, i < 2 ? OP_OPEN_CLOSE : OP_STAT, i == 1);
			int fd = vfs_open(path, O_CREAT | O_WRONLY, 0644);
			if (fd < 0)
				return fd;
			vfs_close(fd);
		}
	}
	return 0;
}

/* One operation of uv.op on path in the kernel: 0 or -errno. */
static int user_vfs_kernel_op(const char *path)
{
	struct stat st;
	if (uv.op == OP_STAT)
		return vfs_stat(path, &st);
	int fd = uv.op == OP_OPEN_CLOSE ? vfs_open(path, O_RDONLY, 0)
					: vfs_open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return fd;
	int err = vfs_close(fd);
	if (!err && uv.op == OP_CREAT_UNLINK)
		err = vfs_unlink(path);
	return err;
}

static void user_vfs_kernel_worker(void *arg)
{
	char path[USER_VFS_PATH_MAX];
	user_vfs_path(path, (unsigned)smp_online_index(smp_processor_id()), uv.op, uv.same);
	for (unsigned i = 0; i < USER_VFS_LOOPS; i++) {
		if (user_vfs_kernel_op(path)) {
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
static u64 user_vfs_run(unsigned k, enum user_vfs_op op, bool same, const char *loops)
{
	struct user_vfs_proc *procs = kzalloc(k * sizeof(*procs));
	char *envp[] = {NULL};
	int err, failed = !procs;
	u64 start = arch_clock_ns();
	for (unsigned r = 0; procs && r < k; r++) {
		struct user_vfs_proc *u = &procs[r];
		user_vfs_path(u->path, r, op, same);
		snprintf(u->cpu, sizeof(u->cpu), "%u", smp_online_cpu(r));
		char *argv[] = {USER_VFS_PROGRAM,
				u->path,
				(char *)loops,
				u->cpu,
				(char *)user_vfs_ops[op].arg,
				NULL};
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

/* One row: op in mode, k CPUs, one layout; false (and an error line) if a loop failed. */
static bool user_vfs_row(enum user_vfs_op op, enum vfs_mode mode, bool same, unsigned k)
{
	char phase[80];
	snprintf(phase, sizeof(phase), "%%s/op=%s/vfs=%s/dir=%s/cpus=%u", user_vfs_ops[op].name,
		 vfs_mode_name(mode), same ? "same" : "separate", k);
	vfs_set_mode(mode);
	u64 empty = user_vfs_run(k, op, same, "0");
	user_vfs_phase_begin(phase, "user", k);
	u64 user = user_vfs_run(k, op, same, USER_VFS_LOOPS_ARG);
	bench_phase_end((u64)k * USER_VFS_LOOPS);
	uv.op = op;
	uv.same = same;
	atomic_set(&uv.errors, 0);
	user_vfs_phase_begin(phase, "kernel", k);
	u64 t0 = arch_clock_ns();
	smp_run_on(k, user_vfs_kernel_worker, NULL);
	u64 kernel = (arch_clock_ns() - t0) / USER_VFS_LOOPS;
	bench_phase_end((u64)k * USER_VFS_LOOPS);
	if (!empty || !user || atomic_read(&uv.errors)) {
		bench_error("user_vfs", "op=%s cpus=%u: a loop failed", user_vfs_ops[op].name, k);
		return false;
	}
	u64 per_op = user > empty ? (user - empty) / USER_VFS_LOOPS : 0;
	u64 pct = per_op > kernel ? (per_op - kernel) * 100 / per_op : 0;
	bench_report(
	    "user_vfs", k, "op=%s vfs=%s dir=%s user_ns=%llu kernel_ns=%llu boundary_pct=%llu",
	    user_vfs_ops[op].name, vfs_mode_name(mode), same ? "same" : "separate",
	    (unsigned long long)per_op, (unsigned long long)kernel, (unsigned long long)pct);
	return true;
}

BENCH(user_vfs)
{
	unsigned online = num_online_cpus();
	enum vfs_mode before = vfs_get_mode();
	int err = bench_user_install(USER_VFS_PROGRAM, open_close_start, open_close_end);
	if (!err)
		err = user_vfs_setup(online);
	if (err) {
		bench_error("user_vfs", "cannot set up the files: %s", errno_name(err));
		return;
	}
	bool ok = true;
	for (unsigned k = 1; ok && k; k = bench_cpus_next(k, online))
		for (enum user_vfs_op op = 0; ok && op < NR_OPS; op++)
			for (int m = 0; ok && m < 2; m++)
				for (int same = 0; ok && same < (user_vfs_ops[op].same ? 2 : 1);
				     same++)
					ok = user_vfs_row(op, m ? VFS_GLOBAL : VFS_SCALABLE, same,
							  k);
	vfs_set_mode(before);
}

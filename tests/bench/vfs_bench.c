/*
 * make bench BENCH=open_close|creat_unlink|stat: the VFS microbenchmarks of "VFS
 * scalability tree" (Nick Piggin, 2010), whose tables compare one process with all
 * CPUs, each in a directory of its own or all in one, before and after the global
 * dcache_lock and inode_lock were split; open_close is also the close(open()) loop
 * of "tree rcu: call_rcu scalability problem?" (Piggin, 2009), where every close
 * frees a struct file through call_rcu. Each runs at cpus = 1, 2, 4, ... up to the
 * CPUs online, in both designs (vfs_set_mode() before each phase; the mode in force
 * before the benchmark is put back after it), in one boot:
 *
 *   bench: open_close arch=x86_64 online=8 cpus=4 vfs=global dir=same inode_free=typesafe
 *          file_free=rcu ops_per_sec=... per_cpu=...
 *
 * open_close: close(open(path, O_RDONLY)) of an existing file; dir=separate: each
 * CPU its own directory, /b-oc/<cpu>/f; dir=same: one directory, each CPU its own
 * file in it, /b-oc/same/f<cpu>.
 * creat_unlink: open(path, O_CREAT | O_WRONLY | O_TRUNC), close, unlink, of
 * /b-cu/<cpu>/f or /b-cu/same/f<cpu>.
 * stat: stat() of /b-st/a/b/c/f<cpu>, each CPU's own file under four directories
 * that all share; dir=separate only (each CPU its own file, in no directory of its own).
 *
 * Each CPU's worker is its run/N thread (smp_run_on()), bound to that CPU. ops_per_sec
 * counts every CPU's operations from the common start to the last CPU's last one;
 * per_cpu is that over cpus. Within one CPU count the two modes run back to back, so
 * a drift in the host's speed weighs on both alike. A phase is named
 * vfs=<mode>/inode_free=<how>/file_free=<how>/dir=<dir>/cpus=<k>, so the profiler
 * reports, say, open_close/vfs=global/inode_free=typesafe/file_free=rcu/dir=same/cpus=4;
 * vfs_rows=<glob>[,<glob>] on the command line runs only the rows whose such name matches
 * (ARGS='vfs_rows=*global*'), and a benchmark none of whose rows match prints one line with rows=0.
 * A failing call prints "bench: error" with its errno's name and ends the benchmark. The
 * directories and files are made before the first row and removed after the last.
 */
#include <grace/bench.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/time.h>
#include <asm/cpu.h>

/*
 * Read the clock every this many operations: an operation is hundreds to thousands
 * of instructions, while under TCG on x86 every clock read takes a QEMU-wide lock
 * (docs/testing.md, "Lock torture").
 */
#define VFS_BENCH_CLOCK_EVERY 16
#define VFS_BENCH_PATH_MAX 32 /* the longest, /b-st/a/b/c/f63, and room to spare */
/* <bench>/vfs=<mode>/inode_free=<how>/file_free=<how>/dir=<dir>/cpus=<k> */
#define VFS_BENCH_NAME_MAX 128
#define VFS_BENCH_MAX_DIRS 4 /* shared directories of one benchmark */
#define VFS_BENCH_DIR_MODE 0755
#define VFS_BENCH_FILE_MODE 0644

enum vfs_bench_dir { DIR_SEPARATE, DIR_SAME, NR_DIRS };
static const char *const dir_names[NR_DIRS] = {"separate", "same"};
/*
 * The designs a row runs in: the scalable VFS and the global one (with files freed
 * through call_rcu, as in 2010); for open_close and creat_unlink, whose close frees
 * a struct file each time, the scalable one with files freed through call_rcu too;
 * and for creat_unlink, whose unlink frees an inode each time, the scalable one with
 * inodes freed through call_rcu (the 2010 thread's +36.8%).
 */
struct vfs_design {
	enum vfs_mode vfs;
	enum inode_free_mode inode_free;
	enum file_free_mode file_free;
};
static const struct vfs_design vfs_bench_designs[] = {
    {VFS_SCALABLE, INODE_FREE_TYPESAFE, FILE_FREE_TYPESAFE},
    {VFS_SCALABLE, INODE_FREE_TYPESAFE, FILE_FREE_RCU},
    {VFS_SCALABLE, INODE_FREE_CALL_RCU, FILE_FREE_TYPESAFE},
    {VFS_GLOBAL, INODE_FREE_TYPESAFE, FILE_FREE_RCU},
};

struct vfs_bench_cpu;

/* One benchmark: its operation and its tree. A "%u" in a path is the CPU's number. */
struct vfs_bench_def {
	const char *name;
	int (*op)(struct vfs_bench_cpu *me);  /* one operation: 0, or the failed call's -errno */
	const char *dirs[VFS_BENCH_MAX_DIRS]; /* shared: made in order, removed in reverse */
	const char *cpu_dir;		      /* a directory per CPU, or NULL */
	const char *file[NR_DIRS];	      /* each CPU's file per layout; NULL: no such row */
	bool files_made;		      /* the files exist in a phase: made before it */
	bool frees_inodes; /* each operation frees an inode: both ways are rows */
	bool frees_files;  /* each operation frees a struct file: both ways are rows */
};

static struct vfs_bench {
	const struct vfs_bench_def *def;
	struct task *leader; /* the caller of smp_run_on(): it opens the phase */
	char phase[VFS_BENCH_NAME_MAX];
	unsigned ncpus;
	u64 phase_ns;
	struct smp_sync start;
	u64 deadline; /* 0 until the leader has opened the phase: the others wait for it */
	u32 failed;   /* a call failed on some CPU: the others stop */
	struct vfs_bench_cpu {
		char path[VFS_BENCH_PATH_MAX]; /* this CPU's file in the phase's layout */
		u64 ops;
		u64 end_ns;		     /* when its last operation returned */
		int err;		     /* the failed call's -errno, 0 if none failed */
		const char *call;	     /* which call failed */
	} __cacheline_aligned cpu[MAX_CPUS]; /* a line each: the loop writes nothing shared */
} vb;

static int vfs_bench_failed(struct vfs_bench_cpu *me, const char *call, int err)
{
	me->call = call;
	me->err = err;
	return err;
}

static int op_open_close(struct vfs_bench_cpu *me)
{
	int fd = vfs_open(me->path, O_RDONLY, 0);
	if (fd < 0)
		return vfs_bench_failed(me, "open", fd);
	int err = vfs_close(fd);
	return err ? vfs_bench_failed(me, "close", err) : 0;
}

static int op_creat_unlink(struct vfs_bench_cpu *me)
{
	int fd = vfs_open(me->path, O_CREAT | O_WRONLY | O_TRUNC, VFS_BENCH_FILE_MODE);
	if (fd < 0)
		return vfs_bench_failed(me, "creat", fd);
	int err = vfs_close(fd);
	if (err)
		return vfs_bench_failed(me, "close", err);
	err = vfs_unlink(me->path);
	return err ? vfs_bench_failed(me, "unlink", err) : 0;
}

static int op_stat(struct vfs_bench_cpu *me)
{
	struct stat st;
	int err = vfs_stat(me->path, &st);
	return err ? vfs_bench_failed(me, "stat", err) : 0;
}

static const struct vfs_bench_def open_close_def = {
    .name = "open_close",
    .op = op_open_close,
    .dirs = {"/b-oc", "/b-oc/same"},
    .cpu_dir = "/b-oc/%u",
    .file = {"/b-oc/%u/f", "/b-oc/same/f%u"},
    .files_made = true,
    .frees_files = true,
};

static const struct vfs_bench_def creat_unlink_def = {
    .name = "creat_unlink",
    .op = op_creat_unlink,
    .dirs = {"/b-cu", "/b-cu/same"},
    .cpu_dir = "/b-cu/%u",
    .file = {"/b-cu/%u/f", "/b-cu/same/f%u"},
    .frees_inodes = true,
    .frees_files = true,
};

static const struct vfs_bench_def stat_def = {
    .name = "stat",
    .op = op_stat,
    .dirs = {"/b-st", "/b-st/a", "/b-st/a/same"},
    .cpu_dir = "/b-st/a/%u",
    .file = {"/b-st/a/%u/f", "/b-st/a/same/f%u"},
    .files_made = true,
};

static void vfs_bench_worker(void *arg)
{
	struct vfs_bench_cpu *me = &vb.cpu[smp_processor_id()];
	u64 n = 0, deadline;

	/*
	 * One operation outside the phase: the thread's descriptor table and current
	 * directory are made on its first call, and the path's dentries come into the
	 * cache, neither of which the phase should count.
	 */
	int err = vb.def->op(me);
	smp_sync_wait(&vb.start, vb.ncpus);
	/*
	 * Opened here rather than before smp_run_on(), so that the profiler does not
	 * count the CPUs spinning in the sync while the host wakes the last run/N thread.
	 */
	if (current == vb.leader) {
		bench_phase_begin(vb.phase, vb.ncpus);
		smp_store_release(&vb.deadline, arch_clock_ns() + vb.phase_ns);
	}
	/* Pairs with the smp_store_release() above: the phase is open, the counting on. */
	while (!(deadline = smp_load_acquire(&vb.deadline)))
		cpu_relax();
	while (!err) {
		err = vb.def->op(me);
		if (err)
			break;
		n++;
		if (n % VFS_BENCH_CLOCK_EVERY == 0 &&
		    (READ_ONCE(vb.failed) || arch_clock_ns() >= deadline))
			break;
	}
	me->end_ns = arch_clock_ns();
	me->ops = n;
	if (err)
		WRITE_ONCE(vb.failed, 1);
}

static void vfs_bench_phase_name(char *buf, size_t size, const struct vfs_design *d,
				 enum vfs_bench_dir dir, unsigned k)
{
	snprintf(buf, size, "vfs=%s/inode_free=%s/file_free=%s/dir=%s/cpus=%u",
		 vfs_mode_name(d->vfs), inode_free_mode_name(d->inode_free),
		 file_free_mode_name(d->file_free), dir_names[dir], k);
}

/* One row, one line: 0, or the -errno of the call that failed (reported). */
static int vfs_bench_phase(const struct vfs_design *d, enum vfs_bench_dir dir, unsigned k)
{
	const struct vfs_bench_def *b = vb.def;
	enum vfs_mode mode = d->vfs;
	unsigned cpu;

	/*
	 * The earlier rows' callbacks first: a row that frees through call_rcu leaves a
	 * grace period's worth of files or inodes to free, whose batch would spill
	 * through the slab's node lists inside the next row's phase.
	 */
	rcu_barrier();
	vfs_set_mode(mode);
	inode_set_free_mode(d->inode_free);
	file_set_free_mode(d->file_free);
	vfs_bench_phase_name(vb.phase, sizeof(vb.phase), d, dir, k);
	for_each_online_cpu(cpu) {
		struct vfs_bench_cpu *c = &vb.cpu[cpu];
		snprintf(c->path, sizeof(c->path), b->file[dir], cpu);
		c->ops = 0;
		c->end_ns = 0;
		c->err = 0;
		c->call = NULL;
	}
	vb.ncpus = k;
	vb.start = (struct smp_sync){0};
	vb.deadline = 0;
	vb.failed = 0;
	vb.leader = current;
	smp_run_on(k, vfs_bench_worker, NULL);

	u64 start = vb.deadline - vb.phase_ns, end = start, total = 0;
	for_each_online_cpu(cpu) {
		total += vb.cpu[cpu].ops;
		end = MAX(end, vb.cpu[cpu].end_ns);
	}
	bench_phase_end(total);
	for_each_online_cpu(cpu) {
		struct vfs_bench_cpu *c = &vb.cpu[cpu];
		if (c->err) {
			bench_error(b->name, "vfs=%s dir=%s cpus=%u: CPU %u: %s %s: %s",
				    vfs_mode_name(mode), dir_names[dir], k, cpu, c->call, c->path,
				    errno_name(c->err));
			return c->err;
		}
	}
	u64 ops_per_sec = total * NSEC_PER_SEC / MAX(end - start, 1);
	bench_report(b->name, k,
		     "vfs=%s dir=%s inode_free=%s file_free=%s ops_per_sec=%llu per_cpu=%llu",
		     vfs_mode_name(mode), dir_names[dir], inode_free_mode_name(d->inode_free),
		     file_free_mode_name(d->file_free), (unsigned long long)ops_per_sec,
		     (unsigned long long)(ops_per_sec / k));
	return 0;
}

/* Is "<bench>/<phase>" one of the rows vfs_rows= asks for (all, without it)? */
static bool vfs_bench_selected(const char *rows, const char *phase)
{
	char name[VFS_BENCH_NAME_MAX];
	if (!rows || !*rows)
		return true;
	snprintf(name, sizeof(name), "%s/%s", vb.def->name, phase);
	return glob_list_match(rows, name);
}

/* The selected rows: separate, then same; cpus 1, 2, 4, ...; both modes at each. */
static void vfs_bench_rows(void)
{
	const char *rows = cmdline_get("vfs_rows");
	unsigned online = num_online_cpus(), ran = 0;
	char phase[VFS_BENCH_NAME_MAX];

	for (enum vfs_bench_dir dir = DIR_SEPARATE; dir < NR_DIRS; dir++) {
		if (!vb.def->file[dir])
			continue;
		for (unsigned k = 1; k; k = bench_cpus_next(k, online)) {
			for (unsigned m = 0; m < ARRAY_SIZE(vfs_bench_designs); m++) {
				const struct vfs_design *d = &vfs_bench_designs[m];
				if (d->inode_free != INODE_FREE_TYPESAFE && !vb.def->frees_inodes)
					continue;
				if (d->vfs == VFS_SCALABLE && d->file_free != FILE_FREE_TYPESAFE &&
				    !vb.def->frees_files)
					continue;
				vfs_bench_phase_name(phase, sizeof(phase), d, dir, k);
				if (!vfs_bench_selected(rows, phase))
					continue;
				ran++;
				if (vfs_bench_phase(d, dir, k))
					return;
			}
		}
	}
	if (!ran)
		bench_report(vb.def->name, 0, "rows=0 vfs_rows=%s", rows);
}

static int vfs_bench_make(const char *path, bool dir)
{
	const char *call = dir ? "mkdir" : "creat";
	int err = dir ? vfs_mkdir(path, VFS_BENCH_DIR_MODE)
		      : vfs_open(path, O_CREAT | O_EXCL | O_WRONLY, VFS_BENCH_FILE_MODE);
	if (err >= 0 && !dir) {
		call = "close";
		err = vfs_close(err);
	}
	if (err < 0)
		bench_error(vb.def->name, "setup: %s %s: %s", call, path, errno_name(err));
	return err < 0 ? err : 0;
}

/* The shared directories, each CPU's directory, and the files that exist during a phase. */
static int vfs_bench_setup(void)
{
	const struct vfs_bench_def *b = vb.def;
	char path[VFS_BENCH_PATH_MAX];
	unsigned cpu;
	int err;

	for (unsigned i = 0; i < VFS_BENCH_MAX_DIRS && b->dirs[i]; i++) {
		err = vfs_bench_make(b->dirs[i], true);
		if (err)
			return err;
	}
	if (b->cpu_dir)
		for_each_online_cpu(cpu) {
			snprintf(path, sizeof(path), b->cpu_dir, cpu);
			err = vfs_bench_make(path, true);
			if (err)
				return err;
		}
	if (!b->files_made)
		return 0;
	for (enum vfs_bench_dir dir = DIR_SEPARATE; dir < NR_DIRS; dir++) {
		if (!b->file[dir])
			continue;
		for_each_online_cpu(cpu) {
			snprintf(path, sizeof(path), b->file[dir], cpu);
			err = vfs_bench_make(path, false);
			if (err)
				return err;
		}
	}
	return 0;
}

/* -ENOENT is no failure: setup may have stopped short, and creat_unlink leaves no file. */
static int vfs_bench_remove(const char *path, bool dir)
{
	int err = dir ? vfs_rmdir(path) : vfs_unlink(path);
	if (err == -ENOENT)
		return 0;
	if (err)
		bench_error(vb.def->name, "cleanup: %s %s: %s", dir ? "rmdir" : "unlink", path,
			    errno_name(err));
	return err;
}

/* Everything vfs_bench_setup() made and any file a failed row left, in reverse order. */
static void vfs_bench_cleanup(void)
{
	const struct vfs_bench_def *b = vb.def;
	char path[VFS_BENCH_PATH_MAX];
	unsigned cpu;

	for (enum vfs_bench_dir dir = DIR_SEPARATE; dir < NR_DIRS; dir++) {
		if (!b->file[dir])
			continue;
		for_each_online_cpu(cpu) {
			snprintf(path, sizeof(path), b->file[dir], cpu);
			if (vfs_bench_remove(path, false))
				return;
		}
	}
	if (b->cpu_dir)
		for_each_online_cpu(cpu) {
			snprintf(path, sizeof(path), b->cpu_dir, cpu);
			if (vfs_bench_remove(path, true))
				return;
		}
	for (unsigned i = VFS_BENCH_MAX_DIRS; i-- > 0;)
		if (b->dirs[i] && vfs_bench_remove(b->dirs[i], true))
			return;
}

static void vfs_bench_run(const struct vfs_bench_def *b)
{
	enum vfs_mode saved = vfs_get_mode();
	enum inode_free_mode saved_free = inode_get_free_mode();
	enum file_free_mode saved_file_free = file_get_free_mode();

	vb.def = b;
	vb.phase_ns = bench_phase_ns();
	if (vfs_bench_setup() == 0)
		vfs_bench_rows();
	vfs_set_mode(saved);
	inode_set_free_mode(saved_free);
	file_set_free_mode(saved_file_free);
	vfs_bench_cleanup();
}

BENCH(open_close)
{
	vfs_bench_run(&open_close_def);
}

BENCH(creat_unlink)
{
	vfs_bench_run(&creat_unlink_def);
}

BENCH(stat)
{
	vfs_bench_run(&stat_def);
}

/*
 * VFS storms (suite vfs_storm): every online CPU runs file-system calls at once,
 * each on its own CPU (smp_run_all), on a design where what each call must return
 * is known, and the tree the storm leaves is compared with the one the CPUs'
 * records predict, name for name and byte for byte (vfs_listing):
 *
 *   create/unlink  in one directory per CPU and in one shared by all, while each
 *                  CPU keeps finding a neighbour's file that is there throughout;
 *   renames        files named f<id> holding their id move between two directories
 *                  under their own name, and pairs swap names through a temporary
 *                  name in the other directory, while every CPU looks names up: a
 *                  lookup that returns another name's file reads the wrong id (or
 *                  the wrong pair, or the wrong inode number);
 *   rmdir/create   one CPU removes a directory while the others create and unlink
 *                  in it: rmdir must never win while a file is in it, and a create
 *                  may fail only because the rmdir won;
 *   failslab       the same kind of calls with 2% of slab allocations failing: each
 *                  call succeeds or is -ENOMEM and changed nothing, and once all is
 *                  removed every slab cache holds what it held before.
 *
 * After each storm the caches' counts are what the start plus the storm's leftovers
 * make (storm_expect_counts), and vfs_test_run() checks them again once the
 * directory is gone. The create/unlink and rename storms run in both designs
 * (vfs_set_mode), the mode being put back after.
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/failslab.h>
#include <grace/fs.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#include "vfs_test_util.h"

/*
 * Iterations per storm, split over the CPUs, each CPU doing STORM_MIN_ITERS at
 * least. Unlike the lock tests (lock_sizing.h) the cost here is the calls' own
 * work, not hand-offs: under TCG two host cores run every vCPU, so the total, not
 * the share, sets the time, and a fixed total keeps SMP=64 within seconds.
 */
#define STORM_TOTAL_ITERS 2048
#define STORM_MIN_ITERS 16
#define STORM_PATH 192 /* a worker's path: the test's directory and a few short names */
#define STORM_TEXT 48

static char expected[VFS_LISTING_MAX];

/* The online CPUs, numbered densely: a CPU's records are indexed by its place. */
static struct {
	unsigned n;
	unsigned cpu[MAX_CPUS];	  /* the CPU at each place */
	unsigned index[MAX_CPUS]; /* the place of each CPU */
} cpus;

static void storm_cpus_init(void)
{
	unsigned cpu;
	cpus.n = 0;
	for_each_online_cpu(cpu) {
		cpus.index[cpu] = cpus.n;
		cpus.cpu[cpus.n++] = cpu;
	}
}

static unsigned storm_iters(unsigned total)
{
	unsigned n = total / cpus.n;
	return n < STORM_MIN_ITERS ? STORM_MIN_ITERS : n;
}

static unsigned my_place(void)
{
	return cpus.index[smp_processor_id()];
}

/* A call a storm worker made returned what it must not. */
static bool storm_bad(const char *call, const char *path, long got)
{
	return test_fail(__FILE__, __LINE__, "cpu %u: %s %s: %ld", smp_processor_id(), call, path,
			 got);
}

/* Create path holding text, from a storm CPU: true, or a failure recorded. */
static bool storm_create(const char *path, const char *text)
{
	int fd = vfs_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return storm_bad("create", path, fd);
	long w = vfs_write(fd, text, strlen(text));
	int c = vfs_close(fd);
	if (w != (long)strlen(text))
		return storm_bad("write", path, w);
	return c == 0 ? true : storm_bad("close", path, c);
}

/*
 * Before the counts are taken, every CPU makes, renames and removes a file and a
 * directory once: whatever a thread or a CPU sets up on its first calls (the run
 * threads' descriptor tables) is then there before and after alike.
 */
static void storm_warm_fn(void *arg)
{
	const char *dir = arg;
	char p[STORM_PATH], q[STORM_PATH];
	unsigned cpu = smp_processor_id();
	snprintf(p, sizeof(p), "%s/warm%u", dir, cpu);
	snprintf(q, sizeof(q), "%s/warm%u.r", dir, cpu);
	storm_create(p, "warm");
	EXPECT_EQ(vfs_rename(p, q, 0), 0);
	EXPECT_EQ(vfs_unlink(q), 0);
	EXPECT_EQ(vfs_mkdir(p, 0755), 0);
	EXPECT_EQ(vfs_rmdir(p), 0);
}

/* After the storm's setup: warm every CPU, let the caches settle, take their counts. */
static void storm_begin(const char *dir, struct vfs_counts *base)
{
	smp_run_all(storm_warm_fn, (void *)dir);
	vfs_settle(true);
	vfs_counts(base);
}

/*
 * The counts after a storm that left `left` more names than base had (each its own
 * inode; negative: fewer). Before reclaim, the names are positive dentries and their
 * inodes, no inode is unused and every file is closed; once unused dentries are
 * reclaimed, every count is base's plus the names.
 */
static void storm_expect_counts(const struct vfs_counts *base, long left, const char *storm)
{
	struct vfs_counts c, want = *base;
	char when[96];
	snprintf(when, sizeof(when), "after the %s storm", storm);
	vfs_settle(false);
	vfs_counts(&c);
	vfs_count_is(when, "positive dentries", c.dentries - c.dentries_negative,
		     base->dentries - base->dentries_negative + left);
	vfs_count_is(when, "inodes", c.inodes, base->inodes + left);
	vfs_count_is(when, "inodes_unused", c.inodes_unused, base->inodes_unused);
	vfs_count_is(when, "files", c.files, base->files);
	snprintf(when, sizeof(when), "after the %s storm, unused dentries reclaimed", storm);
	vfs_settle(true);
	vfs_counts(&c);
	want.dentries += left;
	want.inodes += left;
	vfs_counts_expect(&c, &want, when);
}

/* The inode number of path, 0 if it cannot be looked up. */
static u64 storm_ino(const char *path)
{
	struct stat st;
	return vfs_stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Run storm(dir) in mode, and put the mode back however the storm ended. */
static void storm_in_mode(const char *dir, enum vfs_mode mode, void (*storm)(const char *dir))
{
	enum vfs_mode saved = vfs_get_mode();
	vfs_set_mode(mode);
	storm(dir);
	vfs_set_mode(saved);
	EXPECT_EQ(vfs_get_mode(), saved);
}

/* ---- create/unlink ---- */

#define CU_KEEP_EVERY 8 /* iteration i keeps its files when i % CU_KEEP_EVERY == 0 */

static struct {
	const char *dir;
	unsigned iters;
	struct smp_sync start;
} cu;

/* CPU place p's file of iteration i: its own directory or the shared one. */
static void cu_name(char *buf, size_t size, const char *root, unsigned p, unsigned i, bool shared)
{
	if (shared)
		snprintf(buf, size, "%s%sshared/c%u-f%u", root, *root ? "/" : "", p, i);
	else
		snprintf(buf, size, "%s%sown/c%u/f%u", root, *root ? "/" : "", p, i);
}

static void cu_text(char *buf, size_t size, unsigned p, unsigned i, bool shared)
{
	snprintf(buf, size, "cpu %u file %u %s\n", p, i, shared ? "shared" : "own");
}

static void cu_fn(void *arg)
{
	char path[STORM_PATH], text[STORM_TEXT], anchor[STORM_PATH], atext[STORM_TEXT];
	unsigned me = my_place(), next = (me + 1) % cpus.n;
	struct stat st;

	snprintf(anchor, sizeof(anchor), "%s/shared/anchor%u", cu.dir, next);
	snprintf(atext, sizeof(atext), "anchor %u\n", next);
	smp_sync_wait(&cu.start, cpus.n);
	for (unsigned i = 0; i < cu.iters; i++) {
		for (int shared = 0; shared < 2; shared++) {
			cu_name(path, sizeof(path), cu.dir, me, i, shared);
			cu_text(text, sizeof(text), me, i, shared);
			if (!storm_create(path, text))
				return;
			int err = vfs_stat(path, &st);
			if (err || st.st_size != (s64)strlen(text))
				storm_bad("stat of a file just made", path, err ? err : st.st_size);
			if (i % CU_KEEP_EVERY == 0)
				continue;
			err = vfs_unlink(path);
			if (err)
				storm_bad("unlink", path, err);
			err = vfs_stat(path, &st);
			if (err != -ENOENT)
				storm_bad("stat of a file just unlinked", path, err);
		}
		/* The neighbour's file is there throughout, whatever its directory goes through. */
		int err = vfs_stat(anchor, &st);
		if (err)
			storm_bad("stat of a file that stays", anchor, err);
		if (i % 4 == 0 && !vfs_file_is(anchor, atext))
			storm_bad("contents of a file that stays", anchor, 0);
	}
}

static void cu_storm(const char *dir)
{
	struct vfs_counts base;
	char text[STORM_TEXT], name[STORM_PATH];
	storm_cpus_init();
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "own"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "shared"), 0755), 0);
	for (unsigned p = 0; p < cpus.n; p++) {
		ASSERT_EQ(vfs_mkdir(vfs_at(dir, "own/c%u", p), 0755), 0);
		snprintf(text, sizeof(text), "anchor %u\n", p);
		ASSERT_EQ(vfs_write_file(vfs_at(dir, "shared/anchor%u", p), text, strlen(text)), 0);
	}
	storm_begin(dir, &base);
	cu.dir = dir;
	cu.iters = storm_iters(STORM_TOTAL_ITERS);
	cu.start = (struct smp_sync){0};
	smp_run_all(cu_fn, NULL);

	/* Each CPU left exactly the files of its kept iterations, in both directories. */
	unsigned kept = (cu.iters + CU_KEEP_EVERY - 1) / CU_KEEP_EVERY;
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_dir(&t, "own", cpus.n, 2 + cpus.n);
	vfs_line_dir(&t, "shared", cpus.n + cpus.n * kept, 2);
	for (unsigned p = 0; p < cpus.n; p++) {
		snprintf(name, sizeof(name), "own/c%u", p);
		vfs_line_dir(&t, name, kept, 2);
		snprintf(name, sizeof(name), "shared/anchor%u", p);
		snprintf(text, sizeof(text), "anchor %u\n", p);
		vfs_line_file(&t, name, text, strlen(text), 1);
		for (unsigned i = 0; i < cu.iters; i += CU_KEEP_EVERY)
			for (int shared = 0; shared < 2; shared++) {
				cu_name(name, sizeof(name), "", p, i, shared);
				cu_text(text, sizeof(text), p, i, shared);
				vfs_line_file(&t, name, text, strlen(text), 1);
			}
	}
	vfs_expect_listing("create/unlink", dir, &t);
	storm_expect_counts(&base, 2L * cpus.n * kept, "create/unlink");
}

static void cu_scalable(const char *dir)
{
	storm_in_mode(dir, VFS_SCALABLE, cu_storm);
}

TEST(vfs_storm, create_unlink_on_all_cpus_leaves_exactly_the_kept_files)
{
	vfs_test_run("vfs_storm", __func__, cu_scalable);
}

static void cu_global(const char *dir)
{
	storm_in_mode(dir, VFS_GLOBAL, cu_storm);
}

TEST(vfs_storm, create_unlink_on_all_cpus_leaves_exactly_the_kept_files_in_global_mode)
{
	vfs_test_run("vfs_storm", __func__, cu_global);
}

/* ---- renames racing lookups ---- */

#define RN_FILES 8 /* per CPU, each f<id> holding "id <id>\n" */

static struct {
	const char *dir;
	unsigned iters;
	struct smp_sync start;
	u64 ino[MAX_CPUS * RN_FILES]; /* of f<id>: a rename keeps the inode */
	u64 pair_ino[MAX_CPUS][2];    /* of the pair's files, first named p<c>x and p<c>y */
	u8 in_b[MAX_CPUS * RN_FILES]; /* f<id> is in B: its owner's record */
	unsigned swaps[MAX_CPUS];     /* name swaps each pair went through */
	atomic_t found;		      /* lookups of another CPU's f<id> that found it */
} rn;

static void rn_file(char *buf, size_t size, unsigned id, bool in_b)
{
	snprintf(buf, size, "%s/%s/f%u", rn.dir, in_b ? "B" : "A", id);
}

static void rn_text(char *buf, size_t size, unsigned id)
{
	snprintf(buf, size, "id %u\n", id);
}

static void rn_pair_text(char *buf, size_t size, unsigned p, unsigned which)
{
	snprintf(buf, size, "pair %u %c\n", p, which ? 'y' : 'x');
}

/* What path holds, NUL-terminated, or -errno. */
static long rn_read(const char *path, char *buf, size_t size)
{
	long n = vfs_read_file(path, buf, size - 1);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * Look up f<id> in A or B. Its owner knows where it is; another CPU may find it
 * or not, but what it finds must be f<id>: its inode and its contents.
 */
static void rn_look_file(unsigned id, bool in_b, bool mine)
{
	char path[STORM_PATH], text[STORM_TEXT], want[STORM_TEXT];
	struct stat st;
	rn_file(path, sizeof(path), id, in_b);
	int err = vfs_stat(path, &st);
	if (mine && err != (READ_ONCE(rn.in_b[id]) == in_b ? 0 : -ENOENT))
		storm_bad("stat of my own file", path, err);
	if (err == 0) {
		if (st.st_ino != rn.ino[id])
			storm_bad("stat found another inode at", path, (long)st.st_ino);
		if (!mine)
			atomic_inc(&rn.found);
	} else if (err != -ENOENT) {
		storm_bad("stat", path, err);
	}
	long n = rn_read(path, text, sizeof(text));
	rn_text(want, sizeof(want), id);
	if (n >= 0 && strcmp(text, want))
		storm_bad("read another file's contents at", path, n);
	else if (n < 0 && n != -ENOENT)
		storm_bad("open", path, n);
}

/* Look up a pair's names: either of the pair's two files, or nothing, never another file. */
static void rn_look_pair(unsigned p, const char *rel)
{
	char path[STORM_PATH], text[STORM_TEXT], x[STORM_TEXT], y[STORM_TEXT];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", rn.dir, rel);
	int err = vfs_stat(path, &st);
	if (err == 0 && st.st_ino != rn.pair_ino[p][0] && st.st_ino != rn.pair_ino[p][1])
		storm_bad("stat found a stranger's inode at", path, (long)st.st_ino);
	else if (err && err != -ENOENT)
		storm_bad("stat", path, err);
	long n = rn_read(path, text, sizeof(text));
	rn_pair_text(x, sizeof(x), p, 0);
	rn_pair_text(y, sizeof(y), p, 1);
	if (n >= 0 && strcmp(text, x) && strcmp(text, y))
		storm_bad("read a stranger's contents at", path, n);
	else if (n < 0 && n != -ENOENT)
		storm_bad("open", path, n);
}

/* Swap the names of my pair in A, through the name t<me> in B. */
static void rn_swap(unsigned me)
{
	char x[STORM_PATH], y[STORM_PATH], t[STORM_PATH];
	snprintf(x, sizeof(x), "%s/A/p%ux", rn.dir, me);
	snprintf(y, sizeof(y), "%s/A/p%uy", rn.dir, me);
	snprintf(t, sizeof(t), "%s/B/t%u", rn.dir, me);
	int err = vfs_rename(x, t, 0);
	if (err) {
		storm_bad("rename to the temporary name", x, err);
		return;
	}
	if ((err = vfs_rename(y, x, 0)))
		storm_bad("rename", y, err);
	if ((err = vfs_rename(t, y, 0)))
		storm_bad("rename from the temporary name", t, err);
	rn.swaps[me]++;
}

static void rn_fn(void *arg)
{
	char from[STORM_PATH], to[STORM_PATH], rel[32];
	unsigned me = my_place(), n = cpus.n;
	smp_sync_wait(&rn.start, n);
	for (unsigned i = 0; i < rn.iters; i++) {
		if (i % 3 != 2) {
			/* Move one of mine to the other directory, under its own name. */
			unsigned id = me * RN_FILES + (i % RN_FILES);
			bool b = READ_ONCE(rn.in_b[id]);
			rn_file(from, sizeof(from), id, b);
			rn_file(to, sizeof(to), id, !b);
			int err = vfs_rename(from, to, 0);
			if (err)
				storm_bad("rename", from, err);
			else
				WRITE_ONCE(rn.in_b[id], !b);
			rn_look_file(id, !b, true);
			rn_look_file(id, b, true);
		} else {
			rn_swap(me);
		}
		/* Everyone's names, mine included, in both directories by turns. */
		unsigned other = (me + 1 + i) % n;
		unsigned id = other * RN_FILES + (i / n) % RN_FILES;
		rn_look_file(id, (i / 2) % 2, other == me);
		snprintf(rel, sizeof(rel), "A/p%u%c", other, i % 2 ? 'y' : 'x');
		rn_look_pair(other, rel);
		snprintf(rel, sizeof(rel), "B/t%u", other);
		rn_look_pair(other, rel);
	}
}

static void rn_storm(const char *dir)
{
	struct vfs_counts base;
	char text[STORM_TEXT], name[32];
	storm_cpus_init();
	rn.dir = dir;
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "A"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "B"), 0755), 0);
	for (unsigned p = 0; p < cpus.n; p++) {
		for (unsigned j = 0; j < RN_FILES; j++) {
			unsigned id = p * RN_FILES + j;
			const char *f = vfs_at(dir, "A/f%u", id);
			rn_text(text, sizeof(text), id);
			ASSERT_EQ(vfs_write_file(f, text, strlen(text)), 0);
			struct stat st;
			ASSERT_EQ(vfs_stat(f, &st), 0);
			rn.ino[id] = st.st_ino;
			rn.in_b[id] = 0;
		}
		for (unsigned w = 0; w < 2; w++) {
			const char *f = vfs_at(dir, "A/p%u%c", p, w ? 'y' : 'x');
			rn_pair_text(text, sizeof(text), p, w);
			ASSERT_EQ(vfs_write_file(f, text, strlen(text)), 0);
			struct stat st;
			ASSERT_EQ(vfs_stat(f, &st), 0);
			rn.pair_ino[p][w] = st.st_ino;
		}
		rn.swaps[p] = 0;
	}
	storm_begin(dir, &base);
	rn.iters = storm_iters(STORM_TOTAL_ITERS);
	rn.start = (struct smp_sync){0};
	atomic_set(&rn.found, 0);
	smp_run_all(rn_fn, NULL);

	/* Every file once, where its owner last put it, with its inode and contents. */
	unsigned in_b = 0;
	for (unsigned id = 0; id < cpus.n * RN_FILES; id++)
		in_b += rn.in_b[id];
	struct vfs_text t;
	vfs_text_init(&t, expected, sizeof(expected));
	vfs_line_dir(&t, "A", cpus.n * RN_FILES - in_b + 2 * cpus.n, 2);
	vfs_line_dir(&t, "B", in_b, 2);
	for (unsigned id = 0; id < cpus.n * RN_FILES; id++) {
		snprintf(name, sizeof(name), "%s/f%u", rn.in_b[id] ? "B" : "A", id);
		rn_text(text, sizeof(text), id);
		vfs_line_file(&t, name, text, strlen(text), 1);
		EXPECT_EQ(storm_ino(vfs_at(dir, "%s", name)), rn.ino[id]);
	}
	for (unsigned p = 0; p < cpus.n; p++)
		for (unsigned w = 0; w < 2; w++) {
			/* An odd number of swaps leaves each name on the other file. */
			unsigned holder = w ^ (rn.swaps[p] & 1);
			snprintf(name, sizeof(name), "A/p%u%c", p, w ? 'y' : 'x');
			rn_pair_text(text, sizeof(text), p, holder);
			vfs_line_file(&t, name, text, strlen(text), 1);
			EXPECT_EQ(storm_ino(vfs_at(dir, "%s", name)), rn.pair_ino[p][holder]);
		}
	vfs_expect_listing("rename", dir, &t);
	/* The lookups of others' files found some: they were not all misses. */
	if (cpus.n > 1)
		EXPECT_GT(atomic_read(&rn.found), 0);
	storm_expect_counts(&base, 0, "rename");
}

static void rn_scalable(const char *dir)
{
	storm_in_mode(dir, VFS_SCALABLE, rn_storm);
}

TEST(vfs_storm, renames_racing_lookups_never_return_a_wrong_file)
{
	vfs_test_run("vfs_storm", __func__, rn_scalable);
}

static void rn_global(const char *dir)
{
	storm_in_mode(dir, VFS_GLOBAL, rn_storm);
}

TEST(vfs_storm, renames_racing_lookups_never_return_a_wrong_file_in_global_mode)
{
	vfs_test_run("vfs_storm", __func__, rn_global);
}

/* ---- rmdir racing creates ---- */

#define RC_ROUNDS 6		       /* directories d0..d5, each removed by another CPU */
#define RC_CREATES_TOTAL 384	       /* creates per round, over the creators */
#define RC_MIN_CREATES 4	       /* per creator per round */
#define RC_WAIT_NS (10 * NSEC_PER_SEC) /* for the remover's word that its rmdir won */

static struct {
	const char *dir;
	unsigned creates; /* per creator per round; the last file is kept */
	struct smp_sync start[RC_ROUNDS];
	u32 removed[RC_ROUNDS];		 /* the remover's rmdir returned 0 */
	atomic_t done[RC_ROUNDS];	 /* creators finished with the round */
	u8 kept[RC_ROUNDS][MAX_CPUS];	 /* the creator's last file was made, and stays */
	u8 refused[RC_ROUNDS][MAX_CPUS]; /* a create of the creator's was -ENOENT */
} rc;

static unsigned rc_remover(unsigned round)
{
	return round % cpus.n;
}

/* Remove the round's directory: -ENOTEMPTY until the creators leave a gap, or for good. */
static void rc_remove(unsigned r)
{
	char d[STORM_PATH], late[STORM_PATH];
	struct stat st;
	snprintf(d, sizeof(d), "%s/d%u", rc.dir, r);
	for (;;) {
		bool creators_done = (unsigned)atomic_read_acquire(&rc.done[r]) == cpus.n - 1;
		int err = vfs_rmdir(d);
		if (err == 0) {
			/* Pairs with the creators' smp_load_acquire(). */
			smp_store_release(&rc.removed[r], 1);
			break;
		}
		if (err != -ENOTEMPTY) {
			storm_bad("rmdir", d, err);
			return;
		}
		/* They are done and each left a file: the directory stays. */
		if (creators_done)
			return;
	}
	int err = vfs_stat(d, &st);
	if (err != -ENOENT)
		storm_bad("stat of a removed directory", d, err);
	snprintf(late, sizeof(late), "%s/late", d);
	int fd = vfs_open(late, O_WRONLY | O_CREAT, 0644);
	if (fd != -ENOENT) {
		storm_bad("create in a removed directory", late, fd);
		if (fd >= 0)
			vfs_close(fd);
	}
}

static void rc_create(unsigned r, unsigned me)
{
	char p[STORM_PATH];
	struct stat st;
	for (unsigned i = 0; i < rc.creates; i++) {
		snprintf(p, sizeof(p), "%s/d%u/c%u-%u", rc.dir, r, me, i);
		int fd = vfs_open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd == -ENOENT) {
			/* Only the remover's rmdir can take the directory away: wait to hear it
			 * won. */
			u64 end = arch_clock_ns() + RC_WAIT_NS;
			while (!smp_load_acquire(&rc.removed[r]) && arch_clock_ns() < end)
				cpu_relax();
			if (!smp_load_acquire(&rc.removed[r]))
				storm_bad("create refused, but rmdir did not win:", p, fd);
			/* Gone stays gone. */
			fd = vfs_open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd != -ENOENT)
				storm_bad("create after the directory went", p, fd);
			if (fd >= 0)
				vfs_close(fd);
			rc.refused[r][me] = 1;
			break;
		}
		if (fd < 0) {
			storm_bad("create", p, fd);
			break;
		}
		long w = vfs_write(fd, p, strlen(p));
		if (w != (long)strlen(p))
			storm_bad("write", p, w);
		vfs_close(fd);
		/* The file is in the directory, so no rmdir can have won since it was made. */
		int err = vfs_stat(p, &st);
		if (err)
			storm_bad("stat of a file just made", p, err);
		if (i == rc.creates - 1) {
			rc.kept[r][me] = 1;
			break;
		}
		if ((err = vfs_unlink(p)))
			storm_bad("unlink", p, err);
	}
	/* Release: what this creator recorded, before the remover reads that it is done. */
	atomic_fetch_add_release(&rc.done[r], 1);
}

static void rc_fn(void *arg)
{
	unsigned me = my_place();
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		smp_sync_wait(&rc.start[r], cpus.n);
		if (me == rc_remover(r))
			rc_remove(r);
		else
			rc_create(r, me);
	}
}

static void rc_storm(const char *dir)
{
	struct vfs_counts base;
	char name[STORM_PATH];
	storm_cpus_init();
	if (cpus.n < 2) {
		test_skip("needs two CPUs to race");
		return;
	}
	for (unsigned r = 0; r < RC_ROUNDS; r++)
		ASSERT_EQ(vfs_mkdir(vfs_at(dir, "d%u", r), 0755), 0);
	storm_begin(dir, &base);
	rc.dir = dir;
	rc.creates = MAX(RC_CREATES_TOTAL / (cpus.n - 1), RC_MIN_CREATES);
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		rc.start[r] = (struct smp_sync){0};
		rc.removed[r] = 0;
		atomic_set(&rc.done[r], 0);
		memset(rc.kept[r], 0, sizeof(rc.kept[r]));
		memset(rc.refused[r], 0, sizeof(rc.refused[r]));
	}
	smp_run_all(rc_fn, NULL);

	long left = 0;
	unsigned won = 0;
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		struct stat st;
		const char *d = vfs_at(dir, "d%u", r);
		if (rc.removed[r]) {
			/* Gone, and then no file of it can have been made and kept. */
			won++;
			left--;
			EXPECT_EQ(vfs_stat(d, &st), -ENOENT);
			for (unsigned p = 0; p < cpus.n; p++) {
				snprintf(name, sizeof(name), "%s/c%u-%u", d, p, rc.creates - 1);
				EXPECT_EQ(vfs_stat(name, &st), -ENOENT);
			}
			for (unsigned p = 0; p < cpus.n; p++)
				if (rc.kept[r][p])
					test_fail(__FILE__, __LINE__,
						  "round %u: rmdir won though cpu %u's file stayed",
						  r, cpus.cpu[p]);
			continue;
		}
		/* Still there: every creator kept its last file, and those are all it holds. */
		struct vfs_text t;
		vfs_text_init(&t, expected, sizeof(expected));
		for (unsigned p = 0; p < cpus.n; p++) {
			if (p == rc_remover(r))
				continue;
			if (!rc.kept[r][p] || rc.refused[r][p])
				test_fail(__FILE__, __LINE__,
					  "round %u: cpu %u was refused, but rmdir did not win", r,
					  cpus.cpu[p]);
			snprintf(name, sizeof(name), "%s/d%u/c%u-%u", dir, r, p, rc.creates - 1);
			const char *leaf = name + strlen(d) + 1;
			vfs_line_file(&t, leaf, name, strlen(name), 1);
			left++;
		}
		vfs_expect_listing("rmdir/create", d, &t);
	}
	printk("# vfs_storm: rmdir won %u of %u rounds against %u creators\n", won, RC_ROUNDS,
	       cpus.n - 1);
	storm_expect_counts(&base, left, "rmdir/create");
}

TEST(vfs_storm, rmdir_racing_creates_never_removes_a_directory_that_holds_a_file)
{
	vfs_test_run("vfs_storm", __func__, rc_storm);
}

/* ---- out of memory during a storm ---- */

#define FS_PPM 20000 /* 2% of slab allocations fail */
#define FS_SLOTS 8   /* names per CPU: even in its own directory, odd in the shared one */

enum fs_state { FS_NONE, FS_FILE, FS_DIR };

/*
 * Each slot goes round these calls, moving to the next one when a call succeeds and
 * trying the same one again when it ran out of memory.
 */
enum fs_op { FS_CREATE, FS_RENAME, FS_UNLINK, FS_MKDIR, FS_RMDIR, FS_OPS };

struct fs_slot {
	u8 state;   /* enum fs_state */
	u8 renamed; /* under its second name */
	u8 len;	    /* bytes of text that the file holds */
	u8 next;    /* enum fs_op: the call to make next */
	char text[STORM_TEXT];
};

static struct {
	const char *dir;
	unsigned iters;
	struct smp_sync start;
	struct fs_slot slot[MAX_CPUS][FS_SLOTS]; /* each CPU's record of what it made */
	atomic_t ok, nomem;
} fs;

/* Slot s of place p, under its first or second name, from root (or relative to it). */
static void fs_name(char *buf, size_t size, const char *root, unsigned p, unsigned s, bool renamed)
{
	const char *sep = *root ? "/" : "";
	if (s % 2 == 0)
		snprintf(buf, size, "%s%sown/c%u/s%u%s", root, sep, p, s, renamed ? "r" : "");
	else
		snprintf(buf, size, "%s%sshared/c%u-s%u%s", root, sep, p, s, renamed ? "r" : "");
}

/* A call's result: success, or -ENOMEM; anything else is a failure. */
static bool fs_result(const char *call, const char *path, long err)
{
	if (err >= 0) {
		atomic_inc(&fs.ok);
		return true;
	}
	if (err == -ENOMEM) {
		atomic_inc(&fs.nomem);
		return false;
	}
	storm_bad(call, path, err);
	return false;
}

/* The slot is what the record says: stat may itself run out of memory. */
static void fs_check(const struct fs_slot *sl, unsigned p, unsigned s)
{
	char path[STORM_PATH], other[STORM_PATH];
	struct stat st;
	fs_name(path, sizeof(path), fs.dir, p, s, sl->renamed);
	fs_name(other, sizeof(other), fs.dir, p, s, !sl->renamed);
	int err = vfs_stat(path, &st);
	if (err == -ENOMEM)
		return;
	if (sl->state == FS_NONE && err != -ENOENT)
		storm_bad("stat of a name the record says is free", path, err);
	if (sl->state == FS_FILE && (err || !S_ISREG(st.st_mode) || st.st_size != sl->len))
		storm_bad("stat of a file the record has", path, err ? err : st.st_size);
	if (sl->state == FS_DIR && (err || !S_ISDIR(st.st_mode)))
		storm_bad("stat of a directory the record has", path, err);
	err = vfs_stat(other, &st);
	if (err != -ENOENT && err != -ENOMEM)
		storm_bad("stat of a slot's other name", other, err);
}

static void fs_step(struct fs_slot *sl, unsigned p, unsigned s, unsigned round)
{
	char path[STORM_PATH], to[STORM_PATH];
	int fd, err;
	long w;
	fs_name(path, sizeof(path), fs.dir, p, s, sl->renamed);
	switch (sl->next) {
	case FS_CREATE:
		fd = vfs_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (!fs_result("create", path, fd))
			return;
		sl->state = FS_FILE;
		snprintf(sl->text, sizeof(sl->text), "cpu %u slot %u round %u\n", p, s, round);
		w = vfs_write(fd, sl->text, strlen(sl->text));
		/* A write that ran out of memory wrote nothing; a short one, its start. */
		sl->len = fs_result("write", path, w) ? (u8)w : 0;
		sl->text[sl->len] = '\0';
		if ((err = vfs_close(fd)))
			storm_bad("close", path, err);
		break;
	case FS_RENAME:
		fs_name(to, sizeof(to), fs.dir, p, s, !sl->renamed);
		if (!fs_result("rename", path, vfs_rename(path, to, 0)))
			return;
		sl->renamed ^= 1;
		break;
	case FS_UNLINK:
		if (!fs_result("unlink", path, vfs_unlink(path)))
			return;
		sl->state = FS_NONE;
		sl->renamed = 0;
		sl->len = 0;
		break;
	case FS_MKDIR:
		if (!fs_result("mkdir", path, vfs_mkdir(path, 0755)))
			return;
		sl->state = FS_DIR;
		break;
	case FS_RMDIR:
		if (!fs_result("rmdir", path, vfs_rmdir(path)))
			return;
		sl->state = FS_NONE;
		break;
	}
	sl->next = (u8)((sl->next + 1) % FS_OPS);
}

static void fs_fn(void *arg)
{
	unsigned me = my_place();
	smp_sync_wait(&fs.start, cpus.n);
	for (unsigned i = 0; i < fs.iters; i++) {
		unsigned s = i % FS_SLOTS;
		struct fs_slot *sl = &fs.slot[me][s];
		fs_step(sl, me, s, i / FS_SLOTS);
		fs_check(sl, me, s);
	}
}

/* The expected listing of what the records say, and how many names they hold. */
static long fs_expected(struct vfs_text *t)
{
	char name[STORM_PATH];
	unsigned shared_entries = 0, shared_dirs = 0;
	long names = 0;
	vfs_text_init(t, expected, sizeof(expected));
	vfs_line_dir(t, "own", cpus.n, 2 + cpus.n);
	for (unsigned p = 0; p < cpus.n; p++) {
		unsigned entries = 0, dirs = 0;
		for (unsigned s = 0; s < FS_SLOTS; s++) {
			const struct fs_slot *sl = &fs.slot[p][s];
			if (sl->state == FS_NONE)
				continue;
			names++;
			unsigned *e = s % 2 ? &shared_entries : &entries;
			unsigned *d = s % 2 ? &shared_dirs : &dirs;
			(*e)++;
			fs_name(name, sizeof(name), "", p, s, sl->renamed);
			if (sl->state == FS_DIR) {
				(*d)++;
				vfs_line_dir(t, name, 0, 2);
			} else {
				vfs_line_file(t, name, sl->text, sl->len, 1);
			}
		}
		snprintf(name, sizeof(name), "own/c%u", p);
		vfs_line_dir(t, name, entries, 2 + dirs);
	}
	vfs_line_dir(t, "shared", shared_entries, 2 + shared_dirs);
	return names;
}

static struct vfs_slab_snapshot slab_before, slab_after;

static void fs_storm(const char *dir)
{
	struct vfs_counts base;
	storm_cpus_init();
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "own"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "shared"), 0755), 0);
	for (unsigned p = 0; p < cpus.n; p++)
		ASSERT_EQ(vfs_mkdir(vfs_at(dir, "own/c%u", p), 0755), 0);
	storm_begin(dir, &base);
	vfs_slab_snapshot(&slab_before);
	fs.dir = dir;
	fs.iters = storm_iters(STORM_TOTAL_ITERS);
	fs.start = (struct smp_sync){0};
	memset(fs.slot, 0, sizeof(fs.slot));
	atomic_set(&fs.ok, 0);
	atomic_set(&fs.nomem, 0);

	u32 saved = failslab_get_ppm();
	u64 injected = failslab_injected();
	failslab_set_ppm(FS_PPM);
	smp_run_all(fs_fn, NULL);
	failslab_set_ppm(saved);

	/* Failures were injected and seen, and calls succeeded between them. */
	EXPECT_GT(failslab_injected(), injected);
	EXPECT_GT(atomic_read(&fs.nomem), 0);
	EXPECT_GT(atomic_read(&fs.ok), 0);
	printk("# vfs_storm: %d calls succeeded, %d ran out of memory\n", atomic_read(&fs.ok),
	       atomic_read(&fs.nomem));
	/* The tree is what the calls that succeeded made it. */
	struct vfs_text t;
	long names = fs_expected(&t);
	vfs_expect_listing("failslab", dir, &t);
	storm_expect_counts(&base, names, "failslab");

	/* Once the storm's names are gone, every cache is back where it began. */
	char path[STORM_PATH];
	for (unsigned p = 0; p < cpus.n; p++)
		for (unsigned s = 0; s < FS_SLOTS; s++) {
			const struct fs_slot *sl = &fs.slot[p][s];
			fs_name(path, sizeof(path), dir, p, s, sl->renamed);
			if (sl->state == FS_FILE)
				EXPECT_EQ(vfs_unlink(path), 0);
			else if (sl->state == FS_DIR)
				EXPECT_EQ(vfs_rmdir(path), 0);
		}
	struct vfs_counts now;
	vfs_settle(true);
	vfs_counts(&now);
	vfs_counts_expect(&now, &base, "after the failslab storm's names were removed");
	vfs_slab_snapshot(&slab_after);
	vfs_slab_expect_same(&slab_before, &slab_after);
}

TEST(vfs_storm, out_of_memory_in_a_storm_fails_calls_cleanly_and_leaks_no_object)
{
	vfs_test_run("vfs_storm", __func__, fs_storm);
}

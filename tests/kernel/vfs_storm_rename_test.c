/*
 * The rename storm (suite vfs_storm; its harness: vfs_storm_test_util.h): files
 * named f<id> holding their id move between two directories under their own name,
 * and pairs swap names through a temporary name in the other directory, while every
 * CPU looks names up: a lookup that returns another name's file reads the wrong id
 * (or the wrong pair, or the wrong inode number). It runs in both designs
 * (vfs_set_mode), the mode being put back after.
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#include "vfs_storm_test_util.h"
#include "vfs_test_util.h"

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
	unsigned me = storm_my_place(), n = storm_cpus.n;
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
	for (unsigned p = 0; p < storm_cpus.n; p++) {
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
	for (unsigned id = 0; id < storm_cpus.n * RN_FILES; id++)
		in_b += rn.in_b[id];
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "A", storm_cpus.n * RN_FILES - in_b + 2 * storm_cpus.n, 2);
	vfs_line_dir(&t, "B", in_b, 2);
	for (unsigned id = 0; id < storm_cpus.n * RN_FILES; id++) {
		snprintf(name, sizeof(name), "%s/f%u", rn.in_b[id] ? "B" : "A", id);
		rn_text(text, sizeof(text), id);
		vfs_line_file(&t, name, text, strlen(text), 1);
		EXPECT_EQ(storm_ino(vfs_at(dir, "%s", name)), rn.ino[id]);
	}
	for (unsigned p = 0; p < storm_cpus.n; p++)
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
	if (storm_cpus.n > 1)
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

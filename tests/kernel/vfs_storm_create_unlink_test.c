/*
 * The create/unlink storm (suite vfs_storm; its harness: vfs_storm_test_util.h):
 * every CPU creates and unlinks in a directory of its own and in one shared by all,
 * while each CPU keeps finding a neighbour's file that is there throughout. It runs
 * in both designs (vfs_set_mode), the mode being put back after.
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
	unsigned me = storm_my_place(), next = (me + 1) % storm_cpus.n;
	struct stat st;

	snprintf(anchor, sizeof(anchor), "%s/shared/anchor%u", cu.dir, next);
	snprintf(atext, sizeof(atext), "anchor %u\n", next);
	smp_sync_wait(&cu.start, storm_cpus.n);
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
	for (unsigned p = 0; p < storm_cpus.n; p++) {
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
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "own", storm_cpus.n, 2 + storm_cpus.n);
	vfs_line_dir(&t, "shared", storm_cpus.n + storm_cpus.n * kept, 2);
	for (unsigned p = 0; p < storm_cpus.n; p++) {
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
	storm_expect_counts(&base, 2L * storm_cpus.n * kept, "create/unlink");
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

/*
 * The harness of the VFS storms (see vfs_storm_test_util.h): the CPUs' places,
 * a worker's failures and creates, warming the CPUs before the counts are taken,
 * and the counts a storm must leave.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>
#include <asm/cpu.h>

#include "vfs_storm_test_util.h"
#include "vfs_test_util.h"

struct storm_cpus storm_cpus;

void storm_cpus_init(void)
{
	unsigned cpu;
	storm_cpus.n = 0;
	for_each_online_cpu(cpu) {
		storm_cpus.index[cpu] = storm_cpus.n;
		storm_cpus.cpu[storm_cpus.n++] = cpu;
	}
}

unsigned storm_iters(unsigned total)
{
	unsigned n = total / storm_cpus.n;
	return n < STORM_MIN_ITERS ? STORM_MIN_ITERS : n;
}

unsigned storm_my_place(void)
{
	return storm_cpus.index[smp_processor_id()];
}

/* A call a storm worker made returned what it must not. */
bool storm_bad(const char *call, const char *path, long got)
{
	return test_fail(__FILE__, __LINE__, "cpu %u: %s %s: %ld", smp_processor_id(), call, path,
			 got);
}

/* Create path holding text, from a storm CPU: true, or a failure recorded. */
bool storm_create(const char *path, const char *text)
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
void storm_begin(const char *dir, struct vfs_counts *base)
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
void storm_expect_counts(const struct vfs_counts *base, long left, const char *storm)
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
u64 storm_ino(const char *path)
{
	struct stat st;
	return vfs_stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Run storm(dir) in mode, and put the mode back however the storm ended. */
void storm_in_mode(const char *dir, enum vfs_mode mode, void (*storm)(const char *dir))
{
	enum vfs_mode saved = vfs_get_mode();
	vfs_set_mode(mode);
	storm(dir);
	vfs_set_mode(saved);
	EXPECT_EQ(vfs_get_mode(), saved);
}

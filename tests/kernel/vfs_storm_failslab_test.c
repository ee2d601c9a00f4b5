/*
 * The failslab storm (suite vfs_storm; its harness: vfs_storm_test_util.h): the
 * create, rename, unlink, mkdir and rmdir of a storm with 2% of slab allocations
 * failing: each call succeeds or is -ENOMEM and changed nothing, and once all is
 * removed every slab cache holds what it held before.
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

#include "vfs_storm_test_util.h"
#include "vfs_test_util.h"

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
	unsigned me = storm_my_place();
	smp_sync_wait(&fs.start, storm_cpus.n);
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
	vfs_text_init(t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(t, "own", storm_cpus.n, 2 + storm_cpus.n);
	for (unsigned p = 0; p < storm_cpus.n; p++) {
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
	for (unsigned p = 0; p < storm_cpus.n; p++)
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
	for (unsigned p = 0; p < storm_cpus.n; p++)
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

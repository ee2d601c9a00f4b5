/*
 * Walks that start at a directory descriptor (the vfs_*at() calls) and
 * descriptors installed with their close-on-exec flag.
 *
 * A relative name at dirfd is walked from the directory dirfd has open, not from
 * a path rebuilt for it: so names deeper than PATH_MAX are reached one descriptor
 * at a time, and a walk goes on from the directory however it is renamed
 * meanwhile, its old parent removed and all (race point namei.walk_start, and a
 * storm of renames above descriptors on every CPU). O_CLOEXEC is set with the
 * descriptor's slot (race point open.installed: a fork copying the table once
 * the descriptor is there copies the flag too).
 */
#include <grace/atomic.h>
#include <grace/fs.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>

#include <fs/internal.h>

#include "race_test_util.h"
#include "vfs_test_util.h"

#define AT_PATH 192

static int open_dir(const char *path)
{
	return vfs_open(path, O_RDONLY | O_DIRECTORY, 0);
}

static u64 ino_of(int dirfd, const char *name)
{
	struct stat st;
	return vfs_statat(dirfd, name, AT_SYMLINK_NOFOLLOW, &st) ? 0 : st.st_ino;
}

/* Every call of the family on names relative to one descriptor, checked by absolute names. */
static void relative_body(const char *dir)
{
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "d"), 0755), 0);
	int fd = open_dir(vfs_at(dir, "d"));
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_mkdirat(fd, "sub", 0755), 0);
	int f = vfs_openat(fd, "sub/f", O_CREAT | O_EXCL | O_WRONLY, 0644);
	EXPECT_GE(f, 0);
	EXPECT_EQ(vfs_write(f, "data", 4), 4);
	EXPECT_EQ(vfs_close(f), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "d/sub/f"), "data"));
	EXPECT_EQ(vfs_symlinkat("sub/f", fd, "l"), 0);
	char buf[16] = {0};
	EXPECT_EQ(vfs_readlinkat(fd, "l", buf, sizeof(buf)), 5);
	EXPECT_EQ(strcmp(buf, "sub/f"), 0);
	/* AT_SYMLINK_FOLLOW links the file the link names; without it, the link itself. */
	EXPECT_EQ(vfs_linkat(fd, "l", fd, "hard", AT_SYMLINK_FOLLOW), 0);
	EXPECT_EQ(ino_of(fd, "hard"), ino_of(AT_FDCWD, vfs_at(dir, "d/sub/f")));
	EXPECT_EQ(vfs_linkat(fd, "l", fd, "l2", 0), 0);
	EXPECT_EQ(ino_of(fd, "l2"), ino_of(AT_FDCWD, vfs_at(dir, "d/l")));
	EXPECT_EQ(vfs_renameat(fd, "hard", fd, "sub/hard", 0), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "d/sub/hard"), "data"));
	EXPECT_EQ(vfs_chmodat(fd, "sub/hard", 0600, 0), 0);
	struct stat st;
	EXPECT_EQ(vfs_stat(vfs_at(dir, "d/sub/f"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0600u);
	EXPECT_EQ(st.st_nlink, 2u);
	EXPECT_EQ(vfs_unlinkat(fd, "sub/hard", 0), 0);
	EXPECT_EQ(vfs_unlinkat(fd, "sub/f", 0), 0);
	EXPECT_EQ(vfs_unlinkat(fd, "sub", AT_REMOVEDIR), 0);
	EXPECT_EQ(vfs_unlinkat(fd, "l", 0), 0);
	EXPECT_EQ(vfs_unlinkat(fd, "l2", 0), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "d/sub"), &st), -ENOENT);

	/* An absolute name ignores dirfd; a relative one needs an open directory. */
	EXPECT_EQ(vfs_statat(-7, "/", 0, &st), 0);
	EXPECT_EQ(vfs_statat(-7, "x", 0, &st), -EBADF);
	EXPECT_EQ(vfs_mkdirat(FD_MAX - 1, "x", 0755), -EBADF);
	int file = vfs_open(vfs_at(dir, "file"), O_CREAT | O_WRONLY, 0644);
	EXPECT_EQ(vfs_mkdirat(file, "x", 0755), -ENOTDIR);
	EXPECT_EQ(vfs_openat(file, "x", O_RDONLY, 0), -ENOTDIR);
	EXPECT_EQ(vfs_statat(fd, "", 0, &st), -ENOENT);
	EXPECT_EQ(vfs_close(file), 0);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "file")), 0);
	EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "d")), 0);
}

TEST(vfs_at, relative_names_start_at_the_descriptors_directory)
{
	vfs_test_run("vfs_at", __func__, relative_body);
}

/* Levels of long names: 30 of 200 bytes make a path of about 6,000 bytes. */
#define DEEP_LEVELS 30
#define DEEP_NAME 200

static void deep_name(char *name, unsigned level)
{
	memset(name, 'a' + level % 26, DEEP_NAME);
	name[DEEP_NAME] = '\0';
}

static void deep_body(const char *dir)
{
	static int fds[DEEP_LEVELS + 1];
	char name[DEEP_NAME + 1];
	fds[0] = open_dir(dir);
	ASSERT_GE(fds[0], 0);
	unsigned made = 0;
	for (; made < DEEP_LEVELS; made++) {
		deep_name(name, made);
		int err = vfs_mkdirat(fds[made], name, 0755);
		fds[made + 1] = err ? err : vfs_openat(fds[made], name, O_RDONLY | O_DIRECTORY, 0);
		if (!EXPECT_EQ(err, 0) || !EXPECT_GE(fds[made + 1], 0))
			break;
	}
	if (made == DEEP_LEVELS) {
		int f = vfs_openat(fds[made], "bottom", O_CREAT | O_WRONLY, 0644);
		EXPECT_GE(f, 0);
		EXPECT_EQ(vfs_write(f, "deep", 4), 4);
		EXPECT_EQ(vfs_close(f), 0);
		/* Back up through "..": the level above, a name of it, and the file from there. */
		deep_name(name, DEEP_LEVELS - 1);
		char rel[DEEP_NAME + 16];
		snprintf(rel, sizeof(rel), "../%s/bottom", name);
		struct stat st;
		EXPECT_EQ(vfs_statat(fds[made], rel, 0, &st), 0);
		EXPECT_EQ(st.st_size, 4);
		EXPECT_EQ(vfs_unlinkat(fds[made], "bottom", 0), 0);
	}
	/* From the bottom up, each level removed through the descriptor of the one above. */
	while (made > 0) {
		EXPECT_EQ(vfs_close(fds[made]), 0);
		made--;
		deep_name(name, made);
		EXPECT_EQ(vfs_unlinkat(fds[made], name, AT_REMOVEDIR), 0);
	}
	EXPECT_EQ(vfs_close(fds[0]), 0);
}

TEST(vfs_at, names_deeper_than_path_max_are_reached_through_descriptors)
{
	vfs_test_run("vfs_at", __func__, deep_body);
}

/* One race: the racer walks from a descriptor of A/B while B moves to C and A goes. */
static struct {
	char b[AT_PATH], moved[AT_PATH], a[AT_PATH];
	int err, move_err, rmdir_err;
	u64 dotdot_ino;
} mv;

static void mv_racer(void *arg)
{
	int fd = open_dir(mv.b);
	if (fd < 0) {
		mv.err = fd;
		return;
	}
	mv.err = vfs_mkdirat(fd, "new", 0755); /* parks where its walk starts, at B */
	mv.dotdot_ino = ino_of(fd, "..");
	vfs_close(fd);
}

static void mv_change(void *arg)
{
	mv.move_err = vfs_rename(mv.b, mv.moved, 0);
	mv.rmdir_err = vfs_rmdir(mv.a);
}

static void moved_body(const char *dir)
{
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "A"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "A/B"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "C"), 0755), 0);
	snprintf(mv.a, AT_PATH, "%s/A", dir);
	snprintf(mv.b, AT_PATH, "%s/A/B", dir);
	snprintf(mv.moved, AT_PATH, "%s/C/B", dir);
	mv.err = mv.move_err = mv.rmdir_err = -1;
	struct path b;
	ASSERT_EQ(path_lookup(mv.b, 0, &b), 0);
	struct race r = {
	    .point = "namei.walk_start", .key = b.dentry, .racer = mv_racer, .change = mv_change};
	bool ran = race_run(&r);
	path_put(&b);
	if (ran) {
		EXPECT_EQ(mv.move_err, 0);
		EXPECT_EQ(mv.rmdir_err, 0);
		EXPECT_EQ(mv.err, 0);
		struct stat st;
		EXPECT_EQ(vfs_stat(vfs_at(dir, "C/B/new"), &st), 0);
		EXPECT_EQ(mv.dotdot_ino, ino_of(AT_FDCWD, vfs_at(dir, "C")));
	}
	vfs_rmdir(vfs_at(dir, "C/B/new"));
	vfs_rmdir(vfs_at(dir, "C/B"));
	vfs_rmdir(vfs_at(dir, "C"));
	vfs_rmdir(vfs_at(dir, "A/B"));
	vfs_rmdir(vfs_at(dir, "A"));
}

TEST(vfs_at, a_walk_from_a_descriptor_goes_on_when_its_directory_moves)
{
	vfs_test_run("vfs_at", __func__, moved_body);
}

/*
 * The storm: one CPU renames X to Y and back, over and over; every other CPU
 * makes, fills, looks at and removes names relative to its descriptor of
 * X/m/cN, which moves with X. None of their calls may fail. A vCPU may be
 * descheduled by the host for longer than the workers' rounds take, so they
 * go on until the mover has renamed X a few times (or given up).
 */
#define STORM_ROUNDS 40
#define STORM_MIN_RENAMES 20

static struct {
	char x[AT_PATH], y[AT_PATH];
	struct smp_sync start;
	unsigned n;
	atomic_t workers_left;
	unsigned renames; /* written by the mover alone */
	bool mover_done;
} st;

static bool storm_ok(const char *call, long got, long want)
{
	if (got == want)
		return true;
	return test_fail(__FILE__, __LINE__, "cpu %u: %s: %ld, expected %ld", smp_processor_id(),
			 call, got, want);
}

static void storm_mover(void)
{
	bool in_x = true;
	while (atomic_read(&st.workers_left) > 0) {
		int err = in_x ? vfs_rename(st.x, st.y, 0) : vfs_rename(st.y, st.x, 0);
		if (!storm_ok("rename", err, 0))
			break;
		in_x = !in_x;
		WRITE_ONCE(st.renames, st.renames + 1);
	}
	WRITE_ONCE(st.mover_done, true);
	if (!in_x)
		storm_ok("rename back", vfs_rename(st.y, st.x, 0), 0);
}

static void storm_worker(unsigned me)
{
	char path[AT_PATH];
	snprintf(path, sizeof(path), "%s/m/c%u", st.x, me);
	int fd = -1;
	/* The mover may have X at Y when this starts: open through whichever is there. */
	for (unsigned tries = 0; fd < 0 && tries < 1000; tries++) {
		snprintf(path, sizeof(path), "%s/m/c%u", tries % 2 ? st.y : st.x, me);
		fd = open_dir(path);
	}
	if (!storm_ok("open the worker's directory", fd >= 0, true))
		goto out;
	for (unsigned i = 0; i < STORM_ROUNDS || (READ_ONCE(st.renames) < STORM_MIN_RENAMES &&
						  !READ_ONCE(st.mover_done));
	     i++) {
		struct stat s;
		if (!storm_ok("mkdirat", vfs_mkdirat(fd, "d", 0755), 0))
			break;
		int f = vfs_openat(fd, "d/f", O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (!storm_ok("openat O_CREAT", f >= 0, true))
			break;
		vfs_close(f);
		if (!storm_ok("statat", vfs_statat(fd, "d/f", 0, &s), 0) ||
		    !storm_ok("renameat", vfs_renameat(fd, "d/f", fd, "g", 0), 0) ||
		    !storm_ok("unlinkat", vfs_unlinkat(fd, "g", 0), 0) ||
		    !storm_ok("rmdir at", vfs_unlinkat(fd, "d", AT_REMOVEDIR), 0))
			break;
	}
	int kept = vfs_openat(fd, "kept", O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (storm_ok("openat kept", kept >= 0, true))
		vfs_close(kept);
	vfs_close(fd);
out:
	atomic_dec(&st.workers_left);
}

static void storm_fn(void *arg)
{
	unsigned me = 0, cpu;
	for_each_online_cpu(cpu) {
		if (cpu == smp_processor_id())
			break;
		me++;
	}
	smp_sync_wait(&st.start, st.n);
	if (me == 0)
		storm_mover();
	else
		storm_worker(me);
}

static void storm_body(const char *dir)
{
	st.n = 0;
	unsigned cpu;
	for_each_online_cpu(cpu)
		st.n++;
	if (st.n < 2) {
		test_skip("needs a CPU to rename and one to walk");
		return;
	}
	snprintf(st.x, AT_PATH, "%s/X", dir);
	snprintf(st.y, AT_PATH, "%s/Y", dir);
	ASSERT_EQ(vfs_mkdir(st.x, 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "X/m"), 0755), 0);
	struct vfs_text want;
	static char want_buf[VFS_LISTING_MAX];
	vfs_text_init(&want, want_buf, sizeof(want_buf));
	vfs_line_dir(&want, "m", st.n - 1, 2 + (st.n - 1));
	for (unsigned i = 1; i < st.n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "m/c%u", i);
		ASSERT_EQ(vfs_mkdir(vfs_at(st.x, "%s", name), 0755), 0);
		vfs_line_dir(&want, name, 1, 2);
		snprintf(name, sizeof(name), "m/c%u/kept", i);
		vfs_line_file(&want, name, "", 0, 1);
	}
	st.start = (struct smp_sync){0};
	st.renames = 0;
	st.mover_done = false;
	atomic_set(&st.workers_left, st.n - 1);
	smp_run_all(storm_fn, NULL);
	EXPECT_GE(st.renames, (unsigned)STORM_MIN_RENAMES);
	/* Every worker's kept file, and nothing else, wherever the walks made them. */
	vfs_expect_listing("the tree after the storm", st.x, &want);
	for (unsigned i = 1; i < st.n; i++) {
		vfs_unlink(vfs_at(st.x, "m/c%u/kept", i));
		vfs_rmdir(vfs_at(st.x, "m/c%u", i));
	}
	vfs_rmdir(vfs_at(st.x, "m"));
	vfs_rmdir(st.x);
}

TEST(vfs_at, renames_above_descriptors_never_fail_walks_below_them)
{
	vfs_test_run("vfs_at", __func__, storm_body);
}

/* The racer opens with O_CLOEXEC and parks once its descriptor is in the table. */
static struct {
	char path[AT_PATH];
	struct fs_context *fs;
	struct inode *inode;
	int fd;
	int seen, seen_cloexec;
} ce;

static void ce_racer(void *arg)
{
	ce.fs = fs_current();
	ce.fd = vfs_open(ce.path, O_RDONLY | O_CLOEXEC, 0);
	if (ce.fd >= 0)
		vfs_close(ce.fd);
}

/* What a fork would copy now: the racer's descriptors of the file, and their flags. */
static void ce_change(void *arg)
{
	struct fs_context *fs = ce.fs;
	for (unsigned i = 0; i < READ_ONCE(fs->max_fds); i++) {
		struct file *f = READ_ONCE(fs->fd[i]);
		if (f && f->f_inode == ce.inode) {
			ce.seen++;
			ce.seen_cloexec += READ_ONCE(fs->cloexec[i]);
		}
	}
}

static void cloexec_body(const char *dir)
{
	snprintf(ce.path, AT_PATH, "%s/f", dir);
	ASSERT_EQ(vfs_write_file(ce.path, "x", 1), 0);
	struct path p;
	ASSERT_EQ(path_lookup(ce.path, 0, &p), 0);
	ce.inode = p.dentry->d_inode;
	ce.seen = ce.seen_cloexec = 0;
	struct race r = {
	    .point = "open.installed", .key = ce.inode, .racer = ce_racer, .change = ce_change};
	if (race_run(&r)) {
		EXPECT_GE(ce.fd, 0);
		EXPECT_EQ(ce.seen, 1);
		EXPECT_EQ(ce.seen_cloexec, 1);
	}
	path_put(&p);
	EXPECT_EQ(vfs_unlink(ce.path), 0);
}

TEST(vfs_at, close_on_exec_is_set_as_the_descriptor_appears)
{
	vfs_test_run("vfs_at", __func__, cloexec_body);
}

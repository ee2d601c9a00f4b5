/*
 * The VFS's lockless windows held open on purpose (race points,
 * race_test_util.h): a walk or lookup parks on one CPU inside its window, a
 * rename or unlink runs on another, and the recheck guarding the window must
 * notice. Each test fails every run without its recheck (tests/mutants):
 *
 *   namei.step_rcu       RCU-walk's check of the parent's d_seq at a step
 *   namei.unlazy         the d_seq check once the walk has its reference
 *   namei.stat_rcu       stat's d_seq check after reading the inode
 *   dcache.dget_parent   dget_parent()'s second look at d_parent
 *   dcache.d_lookup_chain  d_lookup()'s retry when a rename moved a dentry
 *                        off the chain it was walking
 *
 * A walk's result must be one the namespace gave at one instant, as on Linux:
 * a name reached through a directory that had moved away before the walk read
 * the name is not found.
 */
#include <grace/fs.h>
#include <grace/rcupdate.h>
#include <grace/string.h>
#include <grace/test.h>

#include <fs/internal.h>

#include "race_test_util.h"
#include "vfs_test_util.h"

#define RACE_PATH 160

/* The paths and results of one race: filled in by the test thread, read on the other CPUs. */
struct vfs_race {
	char walk[RACE_PATH];	       /* what the racer walks */
	enum { RENAME, UNLINK, RMDIR } op;   /* the change: rename from to, or remove from */
	char from[RACE_PATH], to[RACE_PATH];
	char make[RACE_PATH];	       /* then made by the change, if set */
	bool make_dir;
	int err, change_err, make_err;
	struct path got;
	struct stat st;
	struct dentry *child, *parent; /* dget_parent()'s, d_lookup()'s */
	struct qstr name;
};

static void path_into(char *buf, const char *dir, const char *rel)
{
	snprintf(buf, RACE_PATH, "%s/%s", dir, rel);
}

/* The dentry path names (NULL if none), without a reference: ramfs pins a positive one. */
static struct dentry *dentry_at(const char *path)
{
	struct path p;
	if (path_lookup(path, 0, &p))
		return NULL;
	struct dentry *d = p.dentry;
	path_put(&p);
	return d;
}

static int make_file(const char *path)
{
	int fd = sys_open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	return fd < 0 ? fd : sys_close(fd);
}

static void racer_lookup(void *arg)
{
	struct vfs_race *r = arg;
	r->err = path_lookup(r->walk, 0, &r->got);
}

static void racer_parent(void *arg)
{
	struct vfs_race *r = arg;
	struct parent_lookup pl;
	r->err = path_parent(r->walk, &pl);
	if (!r->err)
		path_parent_put(&pl);
}

static void racer_stat(void *arg)
{
	struct vfs_race *r = arg;
	r->err = path_stat(r->walk, 0, &r->st);
}

static void racer_dget_parent(void *arg)
{
	struct vfs_race *r = arg;
	r->parent = dget_parent(r->child);
}

static void racer_d_lookup(void *arg)
{
	struct vfs_race *r = arg;
	r->child = d_lookup(r->parent, &r->name);
}

/* The rename or removal, then make (a file or directory) if set. */
static void change(void *arg)
{
	struct vfs_race *r = arg;
	if (r->op == UNLINK)
		r->change_err = sys_unlink(r->from);
	else if (r->op == RMDIR)
		r->change_err = sys_rmdir(r->from);
	else
		r->change_err = sys_rename(r->from, r->to, 0);
	if (*r->make)
		r->make_err = r->make_dir ? sys_mkdir(r->make, 0755) : make_file(r->make);
}

/* The racer's path_lookup() found nothing (or its reference is dropped here). */
static void expect_not_found(struct vfs_race *r, int want)
{
	EXPECT_EQ(r->err, want);
	if (!r->err)
		path_put(&r->got);
}

/* RCU-walk stands on a/D; D moves to b/D and b/D/g is made: a/D/g never existed. */
static void step_parent_renamed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "a"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "a/D"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "b"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "a/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "a/D/g");
	path_into(r.from, dir, "a/D");
	path_into(r.to, dir, "b/D");
	path_into(r.make, dir, "b/D/g");

	struct race race = {.point = "namei.step_rcu", .key = D, .racer = racer_lookup,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.make_err, 0);
	expect_not_found(&r, -ENOENT);
	struct stat st;
	EXPECT_EQ(sys_stat(r.make, &st), 0);
}

TEST(vfs_race, walk_step_checks_parent_moved_before_child_lookup)
{
	vfs_test_run("vfs_race", __func__, step_parent_renamed);
}

/* The walk of a/D/.. stands on D when D moves to b: a/D/.. is gone, not b. */
static void step_dotdot_renamed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "a"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "a/D"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "b"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "a/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "a/D/..");
	path_into(r.from, dir, "a/D");
	path_into(r.to, dir, "b/D");

	struct race race = {.point = "namei.step_rcu", .key = D, .racer = racer_lookup,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	expect_not_found(&r, -ENOENT);
}

TEST(vfs_race, walk_step_checks_parent_moved_before_dotdot)
{
	vfs_test_run("vfs_race", __func__, step_dotdot_renamed);
}

/*
 * The walk found x/f and is about to take its reference when f is unlinked:
 * unused but for the unlink, the dentry turns negative in place, which the
 * reference does not refuse.
 */
static void unlazy_unlinked(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "x/f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "x/f"));
	ASSERT_TRUE(f != NULL);
	path_into(r.walk, dir, "x/f");
	path_into(r.from, dir, "x/f");
	r.op = UNLINK;

	struct race race = {.point = "namei.unlazy", .key = f, .racer = racer_lookup,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	expect_not_found(&r, -ENOENT);
}

TEST(vfs_race, unlazy_checks_dentry_unlinked_before_reference)
{
	vfs_test_run("vfs_race", __func__, unlazy_unlinked);
}

/*
 * path_parent() of x/D/y found the directory D; before its reference D is
 * removed and a file made under its name (the same dentry, negative in between):
 * the parent handed back must not be a file.
 */
static void unlazy_dir_replaced(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "x/D"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "x/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "x/D/y");
	path_into(r.from, dir, "x/D");
	r.op = RMDIR;
	path_into(r.make, dir, "x/D");

	struct race race = {.point = "namei.unlazy", .key = D, .racer = racer_parent,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.make_err, 0);
	/* The name is the same dentry again: the change really went through it. */
	EXPECT_TRUE(dentry_at(r.make) == D);
	EXPECT_EQ(r.err, -ENOTDIR);
}

TEST(vfs_race, unlazy_checks_directory_replaced_by_file)
{
	vfs_test_run("vfs_race", __func__, unlazy_dir_replaced);
}

/*
 * stat of x/f under RCU is about to read f's inode when f is unlinked (its inode
 * freed, the memory free to become the directory made next): the fields read
 * must be f's, or the walk goes by reference and finds f gone.
 */
static void stat_unlinked(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "x/f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "x/f"));
	ASSERT_TRUE(f != NULL);
	path_into(r.walk, dir, "x/f");
	path_into(r.from, dir, "x/f");
	r.op = UNLINK;
	path_into(r.make, dir, "x/E");
	r.make_dir = true;

	struct race race = {.point = "namei.stat_rcu", .key = f, .racer = racer_stat,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.make_err, 0);
	EXPECT_EQ(r.err, -ENOENT);
	/* The inode may be freed under the parked walk: only after a grace period here. */
	rcu_barrier();
}

TEST(vfs_race, stat_checks_dentry_unlinked_before_inode_read)
{
	vfs_test_run("vfs_race", __func__, stat_unlinked);
}

/*
 * dget_parent(p1/c) has taken p1's reference when c moves to p2: it must drop
 * that reference and return p2.
 */
static void dget_parent_renamed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "p1"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "p2"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "p1/c")), 0);
	struct dentry *p1 = dentry_at(vfs_at(dir, "p1")), *p2 = dentry_at(vfs_at(dir, "p2"));
	r.child = dentry_at(vfs_at(dir, "p1/c"));
	ASSERT_TRUE(p1 && p2 && r.child);
	path_into(r.from, dir, "p1/c");
	path_into(r.to, dir, "p2/c");
	int p1_count = d_count(p1), p2_count = d_count(p2);

	struct race race = {.point = "dcache.dget_parent", .key = r.child,
			    .racer = racer_dget_parent, .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_TRUE(r.parent == p2);
	/* c's reference moved from p1 to p2; dget_parent's is on p2 alone. */
	EXPECT_EQ(d_count(p1), p1_count - 1);
	EXPECT_EQ(d_count(p2), p2_count + 2);
	if (r.parent)
		dput(r.parent);
	EXPECT_EQ(d_count(p2), p2_count + 1);
}

TEST(vfs_race, dget_parent_rechecks_parent_after_reference)
{
	vfs_test_run("vfs_race", __func__, dget_parent_renamed);
}

/*
 * d_lookup(P, "n") stands on Q's dentry X, ahead of n in the same hash chain,
 * when X is renamed within Q to a name hashed elsewhere: the walk follows X into
 * its new chain and misses n. rename_lock changed meanwhile, so d_lookup() must
 * look again (the ref-walk's locked lookup would hide the miss: called directly).
 */
static void d_lookup_chain_moved(const char *dir)
{
	static struct vfs_race r;
	char m[24], k[24];
	r = (struct vfs_race){0};
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "P"), 0755), 0);
	ASSERT_EQ(sys_mkdir(vfs_at(dir, "Q"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "P/n")), 0);
	struct dentry *P = dentry_at(vfs_at(dir, "P")), *Q = dentry_at(vfs_at(dir, "Q"));
	struct dentry *n = dentry_at(vfs_at(dir, "P/n"));
	ASSERT_TRUE(P && Q && n);
	u32 bucket = d_hash_index(P, name_hash("n", 1));

	/* A name in Q sharing n's chain, and one that does not. */
	unsigned i;
	for (i = 0; i < 1u << 22; i++) {
		snprintf(m, sizeof(m), "m%u", i);
		if (d_hash_index(Q, name_hash(m, strlen(m))) == bucket)
			break;
	}
	ASSERT_TRUE(i < 1u << 22);
	for (i = 0;; i++) {
		snprintf(k, sizeof(k), "k%u", i);
		if (d_hash_index(Q, name_hash(k, strlen(k))) != bucket)
			break;
	}
	/* Added after n, X comes first in the chain (heads are where entries go in). */
	snprintf(r.from, RACE_PATH, "%s/Q/%s", dir, m);
	snprintf(r.to, RACE_PATH, "%s/Q/%s", dir, k);
	ASSERT_EQ(make_file(r.from), 0);
	struct dentry *X = dentry_at(r.from);
	ASSERT_TRUE(X != NULL);
	r.parent = P;
	r.name = (struct qstr){name_hash("n", 1), 1, "n"};

	struct race race = {.point = "dcache.d_lookup_chain", .key = X, .racer = racer_d_lookup,
			    .change = change, .arg = &r};
	if (!race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_TRUE(r.child == n);
	if (r.child)
		dput(r.child);
}

TEST(vfs_race, d_lookup_retries_when_rename_moves_chain)
{
	vfs_test_run("vfs_race", __func__, d_lookup_chain_moved);
}

/*
 * The VFS's lockless windows held open on purpose (race points,
 * race_test_util.h): a walk or lookup parks on one CPU inside its window, a
 * rename or unlink runs on another, and the recheck guarding the window must
 * notice. Each test fails every run without its recheck (tests/mutants):
 *
 *   namei.step_rcu       RCU-walk's checks of the child's and the parent's d_seq
 *                        at a step
 *   namei.unlazy         the d_seq check once the walk has its reference
 *   namei.stat_rcu       stat's d_seq check after reading the inode
 *   dcache.dget_parent   dget_parent()'s second look at d_parent
 *   dcache.d_lookup_chain  d_lookup()'s retry when a rename moved a dentry
 *                        off the chain it was walking
 *   dcache.d_path        d_path()'s retry when a rename changed a parent
 *   icache.ilookup_rcu   ilookup()'s second look under i_lock, and its locked
 *                        pass when the walk was led into another bucket
 *
 * A walk's result must be one the namespace gave at one instant, as on Linux:
 * a name reached through a directory that had moved away before the walk read
 * the name is not found.
 */
#include <grace/atomic.h>
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
	char walk[RACE_PATH];		   /* what the racer walks */
	enum { RENAME, UNLINK, RMDIR } op; /* the change: rename from to, or remove from */
	char from[RACE_PATH], to[RACE_PATH];
	char make[RACE_PATH]; /* then made by the change, if set */
	bool make_dir;
	int err, change_err, make_err;
	struct path got;
	struct stat st;
	struct dentry *child, *parent; /* dget_parent()'s, d_lookup()'s */
	struct qstr name;
	char buf[RACE_PATH]; /* d_path()'s */
	long len;
	struct super_block *sb; /* ilookup()'s */
	u64 ino;
	struct inode *inode, *reused;
};

/*
 * race_run(), where the windows exist: vfs=global walks by reference, under a
 * global lock that the parked CPU would hold against the change.
 */
static bool vfs_race_run(struct race *race)
{
	if (vfs_global()) {
		test_skip("vfs=global has no lockless walk");
		return false;
	}
	return race_run(race);
}

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
	int fd = vfs_open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	return fd < 0 ? fd : vfs_close(fd);
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
		r->change_err = vfs_unlink(r->from);
	else if (r->op == RMDIR)
		r->change_err = vfs_rmdir(r->from);
	else
		r->change_err = vfs_rename(r->from, r->to, 0);
	if (*r->make)
		r->make_err = r->make_dir ? vfs_mkdir(r->make, 0755) : make_file(r->make);
}

/* The racer's path_lookup() failed with want (what it found instead is put). */
#define EXPECT_LOOKUP_FAILED(r, want)                                                              \
	do {                                                                                       \
		EXPECT_EQ((r)->err, want);                                                         \
		if (!(r)->err)                                                                     \
			path_put(&(r)->got);                                                       \
	} while (0)

/*
 * RCU-walk has found a/D's child c when D moves to b/D and b/D/c/h is made:
 * a/D/c/h never existed, and the walk must not go on from c to find it.
 */
static void step_parent_renamed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a/D"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a/D/c"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "b"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "a/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "a/D/c/h");
	path_into(r.from, dir, "a/D");
	path_into(r.to, dir, "b/D");
	path_into(r.make, dir, "b/D/c/h");

	struct race race = {.point = "namei.step_rcu",
			    .key = D,
			    .racer = racer_lookup,
			    .change = change,
			    .arg = &r};
	if (!vfs_race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.make_err, 0);
	EXPECT_LOOKUP_FAILED(&r, -ENOENT);
	struct stat st;
	EXPECT_EQ(vfs_stat(r.make, &st), 0);
}

TEST(vfs_race, walk_step_checks_parent_moved_under_child)
{
	vfs_test_run("vfs_race", __func__, step_parent_renamed);
}

/*
 * The walk of a/D/../x has read D's parent a when D moves to b and a/x is made:
 * a/D and a/x never existed at once.
 */
static void step_dotdot_renamed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a/D"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "b"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "a/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "a/D/../x");
	path_into(r.from, dir, "a/D");
	path_into(r.to, dir, "b/D");
	path_into(r.make, dir, "a/x");

	struct race race = {.point = "namei.step_rcu",
			    .key = D,
			    .racer = racer_lookup,
			    .change = change,
			    .arg = &r};
	if (!vfs_race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.make_err, 0);
	EXPECT_LOOKUP_FAILED(&r, -ENOENT);
}

TEST(vfs_race, walk_step_checks_parent_moved_under_dotdot)
{
	vfs_test_run("vfs_race", __func__, step_dotdot_renamed);
}

/*
 * RCU-walk has found x/c when directory x/E is renamed over it: the old c is
 * killed (its inode cleared), and x/c, never missing, names E's directory.
 */
static void step_child_replaced(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x/c"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x/E"), 0755), 0);
	struct dentry *x = dentry_at(vfs_at(dir, "x")), *E = dentry_at(vfs_at(dir, "x/E"));
	ASSERT_TRUE(x && E);
	struct inode *inode = E->d_inode;
	path_into(r.walk, dir, "x/c");
	path_into(r.from, dir, "x/E");
	path_into(r.to, dir, "x/c");

	struct race race = {.point = "namei.step_rcu",
			    .key = x,
			    .racer = racer_lookup,
			    .change = change,
			    .arg = &r};
	if (!vfs_race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.err, 0);
	if (!r.err) {
		EXPECT_TRUE(r.got.dentry->d_inode == inode);
		path_put(&r.got);
	}
	/* The old c was freed while the walk stood on it: after a grace period. */
	rcu_barrier();
}

TEST(vfs_race, walk_step_checks_child_replaced)
{
	vfs_test_run("vfs_race", __func__, step_child_replaced);
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
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "x/f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "x/f"));
	ASSERT_TRUE(f != NULL);
	path_into(r.walk, dir, "x/f");
	path_into(r.from, dir, "x/f");
	r.op = UNLINK;

	struct race race = {
	    .point = "namei.unlazy", .key = f, .racer = racer_lookup, .change = change, .arg = &r};
	if (!vfs_race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_LOOKUP_FAILED(&r, -ENOENT);
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
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x/D"), 0755), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "x/D"));
	ASSERT_TRUE(D != NULL);
	path_into(r.walk, dir, "x/D/y");
	path_into(r.from, dir, "x/D");
	r.op = RMDIR;
	path_into(r.make, dir, "x/D");

	struct race race = {
	    .point = "namei.unlazy", .key = D, .racer = racer_parent, .change = change, .arg = &r};
	if (!vfs_race_run(&race))
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
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "x"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "x/f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "x/f"));
	ASSERT_TRUE(f != NULL);
	path_into(r.walk, dir, "x/f");
	path_into(r.from, dir, "x/f");
	r.op = UNLINK;
	path_into(r.make, dir, "x/E");
	r.make_dir = true;

	struct race race = {
	    .point = "namei.stat_rcu", .key = f, .racer = racer_stat, .change = change, .arg = &r};
	if (!vfs_race_run(&race))
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
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "p1"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "p2"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "p1/c")), 0);
	struct dentry *p1 = dentry_at(vfs_at(dir, "p1")), *p2 = dentry_at(vfs_at(dir, "p2"));
	r.child = dentry_at(vfs_at(dir, "p1/c"));
	ASSERT_TRUE(p1 && p2 && r.child);
	path_into(r.from, dir, "p1/c");
	path_into(r.to, dir, "p2/c");
	int p1_count = d_count(p1), p2_count = d_count(p2);

	struct race race = {.point = "dcache.dget_parent",
			    .key = r.child,
			    .racer = racer_dget_parent,
			    .change = change,
			    .arg = &r};
	if (!vfs_race_run(&race))
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
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "P"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "Q"), 0755), 0);
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

	struct race race = {.point = "dcache.d_lookup_chain",
			    .key = X,
			    .racer = racer_d_lookup,
			    .change = change,
			    .arg = &r};
	if (!vfs_race_run(&race))
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

static void racer_d_path(void *arg)
{
	struct vfs_race *r = arg;
	r->len = d_path(r->child, r->buf, sizeof(r->buf));
}

/*
 * d_path(a/D/f) has read D's name when D moves to b/E: its next parent is b, and
 * b/D/f never existed. rename_lock changed meanwhile, so d_path() must redo it.
 */
static void d_path_renamed(const char *dir)
{
	static struct vfs_race r;
	char want[RACE_PATH];
	r = (struct vfs_race){0};
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "a/D"), 0755), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "b"), 0755), 0);
	ASSERT_EQ(make_file(vfs_at(dir, "a/D/f")), 0);
	struct dentry *D = dentry_at(vfs_at(dir, "a/D"));
	r.child = dentry_at(vfs_at(dir, "a/D/f"));
	ASSERT_TRUE(D && r.child);
	path_into(r.from, dir, "a/D");
	path_into(r.to, dir, "b/E");
	path_into(want, dir, "b/E/f");

	struct race race = {
	    .point = "dcache.d_path", .key = D, .racer = racer_d_path, .change = change, .arg = &r};
	if (!vfs_race_run(&race))
		return;
	EXPECT_EQ(r.change_err, 0);
	EXPECT_EQ(r.len, (long)strlen(want));
	if (strcmp(r.buf, want))
		test_fail(__FILE__, __LINE__, "d_path gave '%s', not '%s'", r.buf, want);
}

TEST(vfs_race, d_path_retries_when_rename_moves_parent)
{
	vfs_test_run("vfs_race", __func__, d_path_renamed);
}

static void racer_ilookup(void *arg)
{
	struct vfs_race *r = arg;
	r->inode = ilookup(r->sb, r->ino);
}

static void change_unlink_only(void *arg)
{
	struct vfs_race *r = arg;
	r->change_err = vfs_unlink(r->from);
}

/*
 * ilookup() stands on f's inode, its number matching, when f is unlinked and
 * the inode freed (typesafe: the memory at once back in the cache, still
 * showing f's number): the second look under i_lock must refuse it.
 */
static void ilookup_freed(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(make_file(vfs_at(dir, "f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "f"));
	ASSERT_TRUE(f != NULL);
	struct inode *inode = f->d_inode;
	r.sb = inode->i_sb;
	r.ino = inode->i_ino;
	path_into(r.from, dir, "f");

	struct race race = {.point = "icache.ilookup_rcu",
			    .key = inode,
			    .racer = racer_ilookup,
			    .change = change_unlink_only,
			    .arg = &r};
	bool raced = vfs_race_run(&race);
	if (!raced)
		return;
	EXPECT_EQ(r.change_err, 0);
	/* A found one is freed memory: not to be put. */
	EXPECT_TRUE(r.inode == NULL);
	EXPECT_TRUE(ilookup(r.sb, r.ino) == NULL);
}

TEST(vfs_race, ilookup_rechecks_inode_freed_under_it)
{
	enum inode_free_mode saved = inode_get_free_mode();
	inode_set_free_mode(INODE_FREE_TYPESAFE);
	vfs_test_run("vfs_race", __func__, ilookup_freed);
	inode_set_free_mode(saved);
}

/*
 * Free the inode the walk stands on, and make a new one: the same memory (each
 * freed at once to this CPU, each made from it), until its number lies in another
 * bucket.
 */
static void change_reuse(void *arg)
{
	struct vfs_race *r = arg;
	u32 bucket = inode_hash_index(r->sb, r->ino);
	for (unsigned i = 0; i < 64; i++) {
		iput(r->reused);
		r->reused = new_inode(r->sb, S_IFREG | 0644);
		if (!r->reused || inode_hash_index(r->sb, r->reused->i_ino) != bucket)
			return;
	}
}

/*
 * ilookup() of a file's inode stands on inode X, ahead of it in its bucket,
 * when X is freed and its memory made a new inode, hashed into another bucket:
 * the lockless walk follows X there and misses the file's inode, which is
 * there all along. The locked pass must find it.
 */
static void ilookup_reused(const char *dir)
{
	static struct vfs_race r;
	r = (struct vfs_race){0};
	ASSERT_EQ(make_file(vfs_at(dir, "f")), 0);
	struct dentry *f = dentry_at(vfs_at(dir, "f"));
	ASSERT_TRUE(f != NULL);
	struct inode *target = f->d_inode;
	r.sb = target->i_sb;
	r.ino = target->i_ino;
	u32 bucket = inode_hash_index(r.sb, r.ino);

	/* X: a nameless inode in the target's bucket, hashed after it, so ahead of it. */
	struct inode *x = NULL;
	for (unsigned i = 0; i < 1u << 18 && !x; i++) {
		struct inode *n = new_inode(r.sb, S_IFREG | 0644);
		ASSERT_TRUE(n != NULL);
		if (inode_hash_index(r.sb, n->i_ino) == bucket)
			x = n;
		else
			iput(n);
	}
	ASSERT_TRUE(x != NULL);
	r.reused = x;

	struct race race = {.point = "icache.ilookup_rcu",
			    .key = x,
			    .racer = racer_ilookup,
			    .change = change_reuse,
			    .arg = &r};
	if (!vfs_race_run(&race)) {
		iput(x); /* the change did not run */
		return;
	}
	/* The race is the one meant only if the memory came back as the new inode. */
	EXPECT_TRUE(r.reused == x);
	EXPECT_TRUE(r.inode == target);
	if (r.inode)
		iput(r.inode);
	if (r.reused)
		iput(r.reused);
}

TEST(vfs_race, ilookup_looks_again_when_walk_led_astray)
{
	enum inode_free_mode saved = inode_get_free_mode();
	inode_set_free_mode(INODE_FREE_TYPESAFE);
	vfs_test_run("vfs_race", __func__, ilookup_reused);
	inode_set_free_mode(saved);
}

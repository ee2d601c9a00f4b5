/*
 * Path walk: from a name to its dentry, a component at a time.
 *
 * RCU-walk first: inside rcu_read_lock, each step finds the child with
 * d_lookup_rcu(), reads what it needs (the inode, its mode), and checks the
 * child's and the parent's d_seq: nothing is locked, no reference is taken, no
 * shared line is written. Anything it cannot vouch for (a d_seq changed, a name
 * not in the cache, a symlink to read) ends the RCU walk with -ECHILD, and the
 * whole walk runs again in ref-walk, which takes a reference at each step and
 * may lock a directory to add a negative dentry. A walk that succeeds in
 * RCU-walk takes a reference only on the dentry it returns (none for stat).
 *
 * vfs=global walks by reference only, each step under dcache_lock (d_lookup).
 *
 * A symlink's text is walked where it lies, in its inode: following a link
 * saves where the walk was (the rest of the name) and the link's dentry, whose
 * reference keeps the text, and goes on in the text; at its end the walk takes
 * the saved rest up again. Each text is held apart, so a chain is bounded by the
 * SYMLOOP_MAX links a walk may follow, not by the sum of their lengths, and
 * the stack of saved links is at most SYMLOOP_MAX deep. A /proc/self/exe text is
 * made for the caller, in a buffer the saved link keeps until then.
 *
 * A directory's names come from the dcache and, for a name not cached, from its
 * inode's lookup operation; a cached dentry whose file system revalidates it
 * (d_op->d_revalidate: /proc/self/fd, whose names depend on the caller) is
 * left to ref-walk, which asks. A "magic" link (i_op->jump_link, /proc/self/fd/N)
 * is not walked as a text: the walk goes on from where the link leads, counted
 * as a link followed.
 *
 * A step onto a mountpoint goes on at the root of what is mounted there, and
 * ".." at a mount's root first goes to its mountpoint (fs/mount.c), so a walk
 * crosses from one file system to the next as on Linux.
 */
#include <grace/race_point.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

struct nameidata {
	struct path path;    /* where the walk stands; references only in ref-walk */
	struct file *dir;    /* the directory descriptor's file the walk started from, or NULL */
	u32 seq;	     /* RCU-walk: path.dentry's d_seq when it was reached */
	struct inode *inode; /* path.dentry's inode as read under seq; NULL: negative */
	u32 mode;	     /* the inode's mode, read under seq too */
	bool rcu;
	unsigned links;		  /* symlinks followed in this walk, O_CREAT's last one too */
	struct saved_link *stack; /* ref-walk: the links being walked, innermost last */
	unsigned depth;		  /* entries in stack; at most links */
	struct qstr last;
	enum last_type last_type;
	bool trailing_slash;
};

/*
 * A link being walked: where the name goes on after its text, the reference on
 * the text, and the buffer holding it if it was made for the caller (else NULL).
 */
struct saved_link {
	const char *rest;
	struct dentry *link;
	char *buf;
};

static void saved_link_put(struct saved_link *sl)
{
	dput(sl->link);
	kfree(sl->buf);
}

/* What a step found: the child, its d_seq, inode and mode. */
struct step {
	struct dentry *d;
	u32 seq;
	struct inode *inode;
	u32 mode;
};

/*
 * The open directory a relative name at dirfd starts from, with a reference on
 * the file, which keeps its path for the walk; NULL for AT_FDCWD. A file has one
 * path for its life: whatever the directory is renamed to meanwhile, the walk
 * starts from the directory itself, never from a name rebuilt for it.
 */
static struct file *walk_dir_file(int dirfd, int *err)
{
	if (dirfd == AT_FDCWD)
		return NULL;
	struct file *f = fget(dirfd);
	if (!f)
		*err = -EBADF;
	else if (!S_ISDIR(f->f_inode->i_mode))
		*err = -ENOTDIR;
	else
		return f;
	if (f)
		fput(f);
	return NULL;
}

/*
 * Start at the root for an absolute name; else at base if given (a symlink's
 * directory), else at dirfd's directory (AT_FDCWD: the current directory).
 */
static int walk_start(struct nameidata *nd, int dirfd, const struct path *base, const char *name,
		      unsigned links, bool rcu)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	size_t len = strnlen(name, PATH_MAX);
	if (len == PATH_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -ENOENT;
	*nd = (struct nameidata){.rcu = rcu, .links = links};
	int err = 0;
	if (*name != '/' && !base && (nd->dir = walk_dir_file(dirfd, &err)))
		base = &nd->dir->f_path;
	if (err)
		return err;
	/* A thread sharing fs may chdir meanwhile: the old cwd stays until our reference. */
	bool locked = fs_lock(fs);
	nd->path = *name == '/' ? (struct path){&root_mnt, root_mnt.mnt_root}
		   : base	? *base
				: fs->cwd;
	if (rcu) {
		rcu_read_lock();
		nd->seq = raw_seqcount_begin(&nd->path.dentry->d_seq);
	} else {
		path_get(&nd->path);
	}
	fs_unlock(fs, locked);
	/* Where the walk starts from its base: a rename of the base's directory may run here. */
	race_point_key("namei.walk_start", nd->path.dentry);
	nd->inode = READ_ONCE(nd->path.dentry->d_inode);
	nd->mode = nd->inode ? READ_ONCE(nd->inode->i_mode) : 0;
	if (rcu && !d_seq_valid(nd->path.dentry, nd->seq)) {
		rcu_read_unlock();
		if (nd->dir)
			fput(nd->dir);
		return -ECHILD;
	}
	return 0;
}

static void walk_end(struct nameidata *nd)
{
	if (nd->rcu)
		rcu_read_unlock();
	else
		path_put(&nd->path);
	while (nd->depth)
		saved_link_put(&nd->stack[--nd->depth]);
	kfree(nd->stack);
	nd->stack = NULL;
	if (nd->dir)
		fput(nd->dir);
	nd->dir = NULL;
}

/* May the walk go on from where it stands? Checked under the d_seq the step validated. */
static int may_descend(const struct nameidata *nd)
{
	if (!nd->inode)
		return -ENOENT;
	return S_ISDIR(nd->mode) ? 0 : -ENOTDIR;
}

static int step_rcu(struct nameidata *nd, const struct qstr *q, bool dotdot, struct step *s)
{
	struct dentry *parent = nd->path.dentry;

	if (dotdot) {
		s->d = READ_ONCE(parent->d_parent);
		s->seq = raw_seqcount_begin(&s->d->d_seq);
	} else {
		s->d = d_lookup_rcu(parent, q, &s->seq);
		if (!s->d)
			return -ECHILD; /* not cached, or a race: ref-walk decides */
		if (READ_ONCE(s->d->d_op))
			return -ECHILD; /* a name its file system revalidates: ref-walk asks */
	}
	/*
	 * The child as of s->seq, under the parent as of nd->seq: renamed or removed
	 * from here, the walk would go on from a child its path no longer leads to,
	 * or read a killed dentry's inode as a name gone. The checks below catch both.
	 */
	race_point_key("namei.step_rcu", parent);
	s->inode = READ_ONCE(s->d->d_inode);
	s->mode = s->inode ? READ_ONCE(s->inode->i_mode) : 0;
	/* The child did not change while we read it, nor the parent since we reached it. */
	if (!d_seq_valid(s->d, s->seq) || !d_seq_valid(parent, nd->seq))
		return -ECHILD;
	return 0;
}

/* A cached d that its file system revalidates: d, or NULL with *err and d put. */
static struct dentry *d_revalidate(struct dentry *d, int *err)
{
	if (!d->d_op || !d->d_op->d_revalidate || !(*err = d->d_op->d_revalidate(d)))
		return d;
	dput(d);
	return NULL;
}

/*
 * With the directory's i_mutex held: the child, cached or looked up by the
 * directory's inode operation (a negative dentry for a name that does not exist).
 */
struct dentry *lookup_locked(struct dentry *dir, const struct qstr *name, int *err)
{
	struct inode *idir = dir->d_inode;
	lockdep_assert_held(&idir->i_mutex);
	struct dentry *d = d_lookup(dir, name);
	if (d)
		return d_revalidate(d, err);
	if (idir->i_state & I_DEADDIR) {
		*err = -ENOENT;
		return NULL;
	}
	if (!idir->i_op->lookup) {
		*err = -ENOTDIR;
		return NULL;
	}
	d = d_alloc(dir, name);
	if (!d) {
		*err = -ENOMEM;
		return NULL;
	}
	if ((*err = idir->i_op->lookup(idir, d))) {
		dput(d); /* never hashed: freed */
		return NULL;
	}
	return d;
}

static int step_ref(struct nameidata *nd, const struct qstr *q, bool dotdot, struct step *s)
{
	struct dentry *parent = nd->path.dentry;
	int err = 0;

	if (dotdot) {
		s->d = dget_parent(parent);
	} else if ((s->d = d_lookup(parent, q))) {
		if (!(s->d = d_revalidate(s->d, &err)))
			return err;
	} else {
		struct inode *dir = parent->d_inode;
		mutex_lock(&dir->i_mutex);
		s->d = lookup_locked(parent, q, &err);
		mutex_unlock(&dir->i_mutex);
		if (!s->d)
			return err;
	}
	s->inode = READ_ONCE(s->d->d_inode);
	s->mode = s->inode ? s->inode->i_mode : 0;
	return 0;
}

/* Set nd's inode and mode from its dentry; false if RCU-walk's check of it failed. */
static bool stand_on(struct nameidata *nd, struct path p)
{
	if (!nd->rcu) {
		path_get(&p);
		path_put(&nd->path);
	}
	nd->path = p;
	if (nd->rcu)
		nd->seq = raw_seqcount_begin(&p.dentry->d_seq);
	nd->inode = READ_ONCE(p.dentry->d_inode);
	nd->mode = nd->inode ? READ_ONCE(nd->inode->i_mode) : 0;
	return !nd->rcu || d_seq_valid(p.dentry, nd->seq);
}

/*
 * "..": at the root of a mount other than the root's, first to the mountpoint,
 * in the mount it is in, as often as mounts stack there; its parent is then "..".
 * Out of line, so that step() stays a leaf that every other step passes through
 * without a frame.
 */
static __noinline int step_dotdot(struct nameidata *nd, struct step *s)
{
	while (nd->path.mnt != &root_mnt && nd->path.dentry == nd->path.mnt->mnt_root) {
		struct vfsmount *m = nd->path.mnt;
		if (!stand_on(nd, (struct path){m->mnt_parent, m->mnt_mountpoint}))
			return -ECHILD;
	}
	return nd->rcu ? step_rcu(nd, NULL, true, s) : step_ref(nd, NULL, true, s);
}

/*
 * The step landed on a mountpoint: stand on the root of what is mounted there
 * (the last mount of a stack). The flag is read after the step validated the
 * mountpoint, so a walk that misses a mount made since is one that ran before
 * it, and one that finds a mount being taken down is one that ran before the
 * umount; either way it sees the table as it was at one instant. In ref-walk the
 * mount is looked up and its reference taken inside an RCU read side, which
 * keeps it from being freed in between (the old path is put outside it). Out of
 * line: step_in() tests the flag itself, so a step onto any other dentry pays for
 * one load.
 */
static __noinline int enter_mounts(struct nameidata *nd)
{
	while (d_mountpoint(nd->path.dentry)) {
		if (nd->rcu) {
			struct vfsmount *m = lookup_mnt(nd->path.mnt, nd->path.dentry);
			if (!m)
				return 0;
			if (!stand_on(nd, (struct path){m, m->mnt_root}))
				return -ECHILD;
			continue;
		}
		rcu_read_lock();
		struct vfsmount *m = lookup_mnt(nd->path.mnt, nd->path.dentry);
		struct path root = {m, m ? m->mnt_root : NULL};
		if (m)
			path_get(&root);
		rcu_read_unlock();
		if (!m)
			return 0;
		stand_on(nd, root);
		path_put(&root);
	}
	return 0;
}

static int step(struct nameidata *nd, const struct qstr *q, enum last_type type, struct step *s)
{
	int err = may_descend(nd);
	if (err)
		return err;
	if (type == LAST_DOTDOT)
		return step_dotdot(nd, s);
	if (type == LAST_DOT) {
		*s = (struct step){nd->path.dentry, nd->seq, nd->inode, nd->mode};
		if (!nd->rcu)
			dget(s->d);
		return 0;
	}
	return nd->rcu ? step_rcu(nd, q, false, s) : step_ref(nd, q, false, s);
}

/* Stand on what the step found, and on what is mounted there if anything is. */
static __always_inline int step_in(struct nameidata *nd, const struct step *s)
{
	if (!nd->rcu)
		dput(nd->path.dentry);
	nd->path.dentry = s->d;
	nd->seq = s->seq;
	nd->inode = s->inode;
	nd->mode = s->mode;
	return unlikely(d_mountpoint(s->d)) ? enter_mounts(nd) : 0;
}

/*
 * The step found a symlink: save rest (which starts at a '/' or is empty) and
 * go on in the link's text, from the link's directory, or from the root for an
 * absolute target. Ref-walk only: the text is read through a reference, which
 * the saved entry keeps until the walk leaves the text.
 */
static int follow_link(struct nameidata *nd, struct step *s, const char **name, const char *rest)
{
	int err = 0;
	if (++nd->links > SYMLOOP_MAX)
		err = -ELOOP;
	else if (!nd->stack && !(nd->stack = fs_alloc(SYMLOOP_MAX * sizeof(*nd->stack))))
		err = -ENOMEM;
	if (err) {
		dput(s->d);
		return err;
	}
	/* depth <= links <= SYMLOOP_MAX: an entry is pushed only for a link counted. */
	char *buf;
	const char *text;
	long len = inode_get_link(s->inode, &text, &buf);
	if (len < 0) {
		kfree(buf);
		dput(s->d);
		return len;
	}
	nd->stack[nd->depth++] = (struct saved_link){rest, s->d, buf};
	*name = text;
	if (**name == '/')
		stand_on(nd, (struct path){&root_mnt, root_mnt.mnt_root});
	return 0;
}

/* Is the link the step found a magic one, followed by jumping rather than by its text? */
static bool link_jumps(const struct step *s)
{
	return s->inode->i_op->jump_link != NULL;
}

/*
 * The step found a magic link (/proc/self/fd/N): stand where it leads (N's open
 * file itself), the link counted as followed. Ref-walk only.
 */
static int jump_link(struct nameidata *nd, struct step *s)
{
	struct path p;
	int err = ++nd->links > SYMLOOP_MAX ? -ELOOP : s->inode->i_op->jump_link(s->inode, &p);
	dput(s->d);
	if (err)
		return err;
	path_put(&nd->path);
	nd->path = p;
	nd->inode = READ_ONCE(p.dentry->d_inode);
	nd->mode = nd->inode ? READ_ONCE(nd->inode->i_mode) : 0;
	return 0;
}

/*
 * Is there nothing but slashes after p, in its text and in the saved rests it
 * goes back to? *slash is set if there is a slash.
 */
static bool only_slashes_left(const struct nameidata *nd, const char *p, bool *slash)
{
	unsigned i = nd->depth;
	for (;;) {
		for (; *p; p++) {
			if (*p != '/')
				return false;
			*slash = true;
		}
		if (!i)
			return true;
		p = nd->stack[--i].rest;
	}
}

static enum last_type component_type(const char *p, u32 len)
{
	if (len == 1 && p[0] == '.')
		return LAST_DOT;
	if (len == 2 && p[0] == '.' && p[1] == '.')
		return LAST_DOTDOT;
	return LAST_NORM;
}

/*
 * Walk every component but the last, following symlinks; nd stands on the last
 * component's directory and nd->last names it (LAST_ROOT: the name was "/").
 */
static int walk_to_last(struct nameidata *nd, const char *name)
{
	for (;;) {
		while (*name == '/')
			name++;
		if (!*name && nd->depth) {
			/* The end of a link's text: the name goes on after the link. */
			struct saved_link *sl = &nd->stack[--nd->depth];
			name = sl->rest;
			saved_link_put(sl);
			continue;
		}
		if (!*name) {
			nd->last_type = LAST_ROOT;
			nd->trailing_slash = false;
			return 0;
		}
		const char *start = name;
		while (*name && *name != '/')
			name++;
		u32 len = name - start;
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		bool slash = false;
		const char *after = name;
		while (*after == '/')
			after++;
		struct qstr q = {0, len, start};
		enum last_type type = component_type(start, len);
		if (type == LAST_NORM)
			q.hash = name_hash(start, len);
		if (only_slashes_left(nd, name, &slash)) {
			nd->last = q;
			nd->last_type = type;
			nd->trailing_slash = slash;
			return 0;
		}
		struct step s;
		int err = step(nd, &q, type, &s);
		if (err)
			return err;
		if (s.inode && S_ISLNK(s.mode)) {
			if (nd->rcu)
				return -ECHILD;
			if (link_jumps(&s))
				err = jump_link(nd, &s);
			else
				err = follow_link(nd, &s, &name, name);
			if (err)
				return err;
			continue;
		}
		if ((err = step_in(nd, &s)))
			return err;
		name = after;
	}
}

/* Walk the whole name; nd stands on its object (maybe negative). */
static int walk_all(struct nameidata *nd, const char *name, unsigned flags)
{
	for (;;) {
		int err = walk_to_last(nd, name);
		if (err)
			return err;
		if (nd->last_type == LAST_ROOT)
			return 0;
		struct step s;
		if ((err = step(nd, &nd->last, nd->last_type, &s)))
			return err;
		bool follow = (flags & LOOKUP_FOLLOW) || nd->trailing_slash;
		bool link = s.inode && S_ISLNK(s.mode) && follow;
		if (link && nd->rcu)
			return -ECHILD;
		if (link && !link_jumps(&s)) {
			/* The trailing slash, if any, stays behind the target. */
			const char *rest = nd->trailing_slash ? "/" : "";
			if ((err = follow_link(nd, &s, &name, rest)))
				return err;
			continue;
		}
		/* /proc/self/fd/N: the walk ends on the open file itself. */
		if (link && (err = jump_link(nd, &s)))
			return err;
		if (!link && (err = step_in(nd, &s)))
			return err;
		if (!nd->inode)
			return -ENOENT;
		if ((nd->trailing_slash || (flags & LOOKUP_DIRECTORY)) && !S_ISDIR(nd->mode))
			return -ENOTDIR;
		return 0;
	}
}

/* Leave RCU-walk holding a reference on where the walk stands; false if it changed. */
static bool unlazy(struct nameidata *nd)
{
	struct dentry *d = nd->path.dentry;
	/*
	 * The last step vouched for d as of nd->seq; an unlink since then may have
	 * made it negative in place, which the reference does not refuse: the check does.
	 */
	race_point_key("namei.unlazy", d);
	if (!lockref_get_not_dead(&d->d_lockref))
		return false;
	if (!d_seq_valid(d, nd->seq)) {
		rcu_read_unlock();
		dput(d);
		rcu_read_lock();
		return false;
	}
	mnt_get(nd->path.mnt);
	return true;
}

/* Run fn's walk under RCU, then again by reference if RCU-walk gave up. */
#define WALK_RCU_THEN_REF(nd, dirfd, base, name, links, call)                                      \
	({                                                                                         \
		int __err =                                                                        \
		    vfs_global() ? -ECHILD : walk_start(nd, dirfd, base, name, links, true);       \
		if (!__err) {                                                                      \
			__err = call;                                                              \
			walk_end(nd);                                                              \
		}                                                                                  \
		if (__err == -ECHILD &&                                                            \
		    !(__err = walk_start(nd, dirfd, base, name, links, false))) {                  \
			__err = call;                                                              \
			walk_end(nd);                                                              \
		}                                                                                  \
		__err;                                                                             \
	})

static int lookup_result(struct nameidata *nd, const char *name, unsigned flags, struct path *out)
{
	int err = walk_all(nd, name, flags);
	if (err)
		return err;
	if (nd->rcu && !unlazy(nd))
		return -ECHILD;
	if (!nd->rcu)
		path_get(&nd->path); /* walk_end drops the walk's own */
	*out = nd->path;
	return 0;
}

int path_lookupat(int dirfd, const char *name, unsigned flags, struct path *out)
{
	struct nameidata nd;
	return WALK_RCU_THEN_REF(&nd, dirfd, NULL, name, 0, lookup_result(&nd, name, flags, out));
}

int path_lookup(const char *name, unsigned flags, struct path *out)
{
	return path_lookupat(AT_FDCWD, name, flags, out);
}

static int stat_result(struct nameidata *nd, const char *name, unsigned flags, struct stat *st)
{
	int err = walk_all(nd, name, flags);
	if (err)
		return err;
	/* Under RCU nd->inode may be freed (and its memory another inode) by now. */
	if (nd->rcu)
		race_point_key("namei.stat_rcu", nd->path.dentry);
	inode_stat(nd->inode, st);
	/* The fields were read while the dentry still named this inode. */
	if (nd->rcu && !d_seq_valid(nd->path.dentry, nd->seq))
		return -ECHILD;
	return 0;
}

int path_statat(int dirfd, const char *name, unsigned flags, struct stat *st)
{
	struct nameidata nd;
	return WALK_RCU_THEN_REF(&nd, dirfd, NULL, name, 0, stat_result(&nd, name, flags, st));
}

int path_stat(const char *name, unsigned flags, struct stat *st)
{
	return path_statat(AT_FDCWD, name, flags, st);
}

static int parent_result(struct nameidata *nd, const char *name, struct parent_lookup *out)
{
	int err = walk_to_last(nd, name);
	if (err)
		return err;
	if ((err = may_descend(nd)))
		return err;
	if (nd->rcu && !unlazy(nd))
		return -ECHILD;
	if (!nd->rcu)
		path_get(&nd->path);
	out->dir = nd->path;
	out->last = nd->last;
	out->trailing_slash = nd->trailing_slash;
	out->last_type = nd->last_type;
	out->links = nd->links;
	/* The last name may lie in a link's text, whose reference the walk drops: copy it. */
	if (nd->depth) {
		if (!(out->buf = fs_alloc(nd->last.len + 1))) {
			path_put(&out->dir);
			out->dir = (struct path){0};
			return -ENOMEM;
		}
		memcpy(out->buf, nd->last.name, nd->last.len);
		out->buf[nd->last.len] = '\0';
		out->last.name = out->buf;
	}
	return 0;
}

int path_parent_from(int dirfd, const struct path *base, const char *name, unsigned links,
		     struct parent_lookup *out)
{
	struct nameidata nd;
	*out = (struct parent_lookup){0};
	return WALK_RCU_THEN_REF(&nd, dirfd, base, name, links, parent_result(&nd, name, out));
}

int path_parentat(int dirfd, const char *name, struct parent_lookup *out)
{
	return path_parent_from(dirfd, NULL, name, 0, out);
}

int path_parent(const char *name, struct parent_lookup *out)
{
	return path_parentat(AT_FDCWD, name, out);
}

void path_parent_put(struct parent_lookup *pl)
{
	path_put(&pl->dir);
	kfree(pl->buf);
	pl->buf = NULL;
}

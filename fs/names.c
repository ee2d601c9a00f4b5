/*
 * The calls on names: make, remove, rename, link and look at them, and the
 * current directory. Each takes the directory's i_mutex around the change, so
 * changes in one directory are serialised while other directories go on.
 */
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

int vfs_statat(int dirfd, const char *name, int flags, struct stat *st)
{
	return path_statat(dirfd, name, (flags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW, st);
}

/*
 * Lock the last name's directory and look the name up: the dentry (maybe
 * negative) with a reference, the directory's i_mutex held; NULL and *err if not.
 */
static struct dentry *lock_last(struct parent_lookup *pl, int *err)
{
	struct dentry *dir = pl->dir.dentry;
	mutex_lock(&dir->d_inode->i_mutex);
	struct dentry *d = lookup_locked(dir, &pl->last, err);
	if (!d)
		mutex_unlock(&dir->d_inode->i_mutex);
	return d;
}

static void unlock_last(struct parent_lookup *pl, struct dentry *d)
{
	mutex_unlock(&pl->dir.dentry->d_inode->i_mutex);
	dput(d);
	path_parent_put(pl);
}

/* Make the last name of path, negative now, as mode (link: a symlink's target; rdev: a device's
 * number). */
static int create(int dirfd, const char *name, u32 mode, const char *link, u32 rdev)
{
	struct parent_lookup pl;
	int err = path_parentat(dirfd, name, &pl);
	if (err)
		return err;
	if (pl.last_type != LAST_NORM) {
		path_parent_put(&pl);
		return -EEXIST;
	}
	struct dentry *d = lock_last(&pl, &err);
	if (!d) {
		path_parent_put(&pl);
		return err;
	}
	/* An existing name first, as Linux: symlink onto an existing "x/" is EEXIST. */
	if (!d_is_negative(d))
		err = -EEXIST;
	else if (pl.trailing_slash && !S_ISDIR(mode))
		err = -ENOENT;
	else
		err = ramfs_mknod(pl.dir.dentry, d, mode, link, rdev);
	unlock_last(&pl, d);
	return err;
}

int vfs_mkdirat(int dirfd, const char *name, unsigned mode)
{
	return create(dirfd, name, S_IFDIR | (mode & 07777), NULL, 0);
}

int vfs_symlinkat(const char *target, int dirfd, const char *linkpath)
{
	size_t len = strnlen(target, PATH_MAX);
	if (!len)
		return -ENOENT;
	if (len == PATH_MAX)
		return -ENAMETOOLONG;
	return create(dirfd, linkpath, S_IFLNK | 0777, target, 0);
}

int vfs_mknodat(int dirfd, const char *path, unsigned mode, u32 dev)
{
	if (!S_ISCHR(mode))
		return -EINVAL; /* only character devices: files come from open, directories from
				   mkdir */
	return create(dirfd, path, mode & (S_IFMT | 07777), NULL, dev);
}

/* Remove the last name of path: a directory (rmdir) or anything else (unlink). */
static int remove(int dirfd, const char *name, bool dir)
{
	struct parent_lookup pl;
	int err = path_parentat(dirfd, name, &pl);
	if (err)
		return err;
	if (pl.last_type != LAST_NORM) {
		path_parent_put(&pl);
		if (!dir)
			return -EISDIR;
		return pl.last_type == LAST_ROOT  ? -EBUSY
		       : pl.last_type == LAST_DOT ? -EINVAL
						  : -ENOTEMPTY;
	}
	struct dentry *d = lock_last(&pl, &err);
	if (!d) {
		path_parent_put(&pl);
		return err;
	}
	struct inode *inode = d->d_inode;
	if (!inode)
		err = -ENOENT;
	else if (dir && !S_ISDIR(inode->i_mode))
		err = -ENOTDIR;
	else if (!dir && S_ISDIR(inode->i_mode))
		err = -EISDIR;
	else if (!dir && pl.trailing_slash)
		err = -ENOTDIR;
	else if (d_is_proc_fd(pl.dir.dentry) || d_is_proc_fd(d))
		err = -EPERM; /* its names come and go with the descriptors, as on Linux */
	if (!err && dir) {
		/* The child's i_mutex: a create inside it either finishes first or sees it dead. */
		mutex_lock_nested(&inode->i_mutex, 1);
		if (!ramfs_dir_empty(inode))
			err = -ENOTEMPTY;
		else
			ramfs_unlink(pl.dir.dentry, d);
		mutex_unlock(&inode->i_mutex);
	} else if (!err) {
		ramfs_unlink(pl.dir.dentry, d);
	}
	if (!err)
		d_delete(d);
	unlock_last(&pl, d);
	return err;
}

int vfs_unlinkat(int dirfd, const char *name, int flags)
{
	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	return remove(dirfd, name, flags & AT_REMOVEDIR);
}

/* /proc is a file system of its own on Linux: its links cannot take a name outside it. */
static bool link_crosses_proc(const struct inode *inode)
{
	return READ_ONCE(inode->i_state) & I_FD_LINK;
}

int vfs_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	struct path old;
	if (flags & ~AT_SYMLINK_FOLLOW)
		return -EINVAL;
	int err =
	    path_lookupat(olddirfd, oldpath, (flags & AT_SYMLINK_FOLLOW) ? LOOKUP_FOLLOW : 0, &old);
	if (err)
		return err;
	struct inode *inode = old.dentry->d_inode;
	struct parent_lookup pl;
	/* The new name's errors come before a directory's EPERM, as on Linux. */
	err = path_parentat(newdirfd, newpath, &pl);
	if (!err) {
		struct dentry *d = NULL;
		if (pl.last_type != LAST_NORM)
			err = -EEXIST;
		else if ((d = lock_last(&pl, &err)))
			err = !d_is_negative(d)		 ? -EEXIST
			      : pl.trailing_slash	 ? -ENOENT
			      : link_crosses_proc(inode) ? -EXDEV
			      : S_ISDIR(inode->i_mode)	 ? -EPERM
							 : ramfs_link(pl.dir.dentry, d, inode);
		if (d)
			unlock_last(&pl, d);
		else
			path_parent_put(&pl);
	}
	path_put(&old);
	return err;
}

long vfs_readlinkat(int dirfd, const char *name, char *buf, size_t size)
{
	struct path p;
	int err = path_lookupat(dirfd, name, 0, &p);
	if (err)
		return err;
	struct inode *inode = p.dentry->d_inode;
	long n = -EINVAL;
	char *made = NULL;
	if (S_ISLNK(inode->i_mode) && size > 0) {
		const char *text;
		n = -ENOMEM;
		if (!inode_link_made(inode) || (made = fs_alloc(PATH_MAX)))
			n = inode_link_text(inode, made, &text);
		if (n > (long)size)
			n = size;
		if (n > 0)
			memcpy(buf, text, n);
	}
	kfree(made);
	path_put(&p);
	return n;
}

int vfs_chdir(const char *name)
{
	struct fs_context *fs = fs_current();
	struct path p;
	if (!fs)
		return -ENOMEM;
	int err = path_lookup(name, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &p);
	if (err)
		return err;
	bool locked = fs_lock(fs);
	struct path old = fs->cwd;
	fs->cwd = p;
	fs_unlock(fs, locked);
	path_put(&old);
	return 0;
}

long vfs_getcwd(char *buf, size_t size)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	bool locked = fs_lock(fs);
	long len;
	/* A removed directory has no path, as on Linux. */
	if (d_unhashed(fs->cwd.dentry) && !d_is_root(fs->cwd.dentry))
		len = -ENOENT;
	else
		len = d_path(fs->cwd.dentry, buf, size);
	fs_unlock(fs, locked);
	return len;
}

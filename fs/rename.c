/*
 * rename(): the one call that changes two directories. Within one directory its
 * i_mutex is enough. Across directories the superblock's s_rename_mutex comes
 * first, so that the tree's shape (who is whose ancestor) holds still while the
 * call checks that a directory is not moved into itself, and the two
 * directories' i_mutex are taken ancestor first (address order if unrelated),
 * the same order rmdir uses for parent and child.
 */
#include <grace/string.h>

#include "internal.h"

static void lock_rename(struct dentry *odir, struct dentry *ndir)
{
	if (odir == ndir) {
		mutex_lock(&odir->d_inode->i_mutex);
		return;
	}
	mutex_lock(&odir->d_sb->s_rename_mutex);
	struct dentry *first = odir, *second = ndir;
	if (d_is_subdir(odir, ndir) || (!d_is_subdir(ndir, odir) && ndir < odir)) {
		first = ndir;
		second = odir;
	}
	mutex_lock(&first->d_inode->i_mutex);
	mutex_lock_nested(&second->d_inode->i_mutex, 1);
}

static void unlock_rename(struct dentry *odir, struct dentry *ndir)
{
	mutex_unlock(&odir->d_inode->i_mutex);
	if (odir != ndir) {
		mutex_unlock(&ndir->d_inode->i_mutex);
		mutex_unlock(&odir->d_sb->s_rename_mutex);
	}
}

static int rename_check(const struct parent_lookup *po, const struct parent_lookup *pn,
			struct dentry *old, struct dentry *new, unsigned flags)
{
	struct inode *iold = old->d_inode, *inew = new->d_inode;
	/* Within one directory neither can be the other's ancestor (and no mutex holds the shape).
	 */
	bool across = po->dir.dentry != pn->dir.dentry;
	if (!iold)
		return -ENOENT;
	if (inew && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	bool isdir = S_ISDIR(iold->i_mode);
	if ((po->trailing_slash || pn->trailing_slash) && !isdir)
		return -ENOTDIR;
	if (across && isdir && d_is_subdir(pn->dir.dentry, old))
		return -EINVAL; /* into its own subtree */
	if (!inew)
		return 0;
	if (across && d_is_subdir(po->dir.dentry, new))
		return -ENOTEMPTY; /* the target holds the source */
	if (isdir && !S_ISDIR(inew->i_mode))
		return -ENOTDIR;
	if (!isdir && S_ISDIR(inew->i_mode))
		return -EISDIR;
	return 0;
}

static int do_rename(struct parent_lookup *po, struct parent_lookup *pn, struct dentry *old,
		     struct dentry *new)
{
	struct inode *target = new->d_inode, *odir = po->dir.dentry->d_inode,
		     *ndir = pn->dir.dentry->d_inode;
	int err;

	/* Same inode (the same name, or two links to one file): nothing to do. */
	if (target == old->d_inode)
		return 0;
	if (!odir->i_op->rename)
		return -EPERM; /* a file system whose names are not the caller's to move */
	if (d_mountpoint(old) || d_mountpoint(new))
		return -EBUSY;
	if (target && S_ISDIR(target->i_mode)) {
		mutex_lock_nested(&target->i_mutex, 2);
		err = odir->i_op->rename(odir, old, ndir, new);
		mutex_unlock(&target->i_mutex);
		return err;
	}
	return odir->i_op->rename(odir, old, ndir, new);
}

int vfs_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		 unsigned flags)
{
	struct parent_lookup po, pn;
	int err;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	if ((err = path_parentat(olddirfd, oldpath, &po)))
		return err;
	if ((err = path_parentat(newdirfd, newpath, &pn))) {
		path_parent_put(&po);
		return err;
	}
	/* A rename never moves a name from one mount to another. */
	if (po.dir.mnt != pn.dir.mnt) {
		err = -EXDEV;
		goto out;
	}
	if (po.last_type != LAST_NORM || pn.last_type != LAST_NORM) {
		err = -EBUSY;
		goto out;
	}
	struct dentry *odir = po.dir.dentry, *ndir = pn.dir.dentry, *old, *new = NULL;
	lock_rename(odir, ndir);
	old = lookup_locked(odir, &po.last, &err);
	if (old)
		new = lookup_locked(ndir, &pn.last, &err);
	if (new && !(err = rename_check(&po, &pn, old, new, flags)))
		err = do_rename(&po, &pn, old, new);
	unlock_rename(odir, ndir);
	if (new)
		dput(new);
	if (old)
		dput(old);
out:
	path_parent_put(&pn);
	path_parent_put(&po);
	return err;
}

/*
 * ramfs: a file system whose only store is the caches. A name exists as long as
 * its dentry does (ramfs holds a reference on each positive dentry, so the
 * shrinker never takes one), a directory's contents are its dentry's children,
 * and a regular file's data is an array of page-sized blocks, allocated on first
 * write: a block never written is a hole and reads as zeros.
 *
 * A file's data and size change under its i_mutex; reads take it too, so a read
 * never sees a block being freed by a truncate.
 */
#include <grace/chrdev.h>
#include <grace/failslab.h>
#include <grace/page_alloc.h>
#include <grace/slab.h>
#include <grace/string.h>

#include <grace/uio.h>
#include "internal.h"

#define RAMFS_BLOCK 4096u

static const struct inode_operations ramfs_dir_iops, ramfs_file_iops, ramfs_symlink_iops;
static const struct file_operations ramfs_file_fops;
static void ramfs_evict(struct inode *inode);
static const struct super_operations ramfs_sops = {.evict_inode = ramfs_evict};

struct super_block *ramfs_mount(void)
{
	struct super_block *sb = sb_alloc("ramfs", &ramfs_sops, S_IFDIR | 0755);
	if (sb) {
		sb->s_root->d_inode->i_op = &ramfs_dir_iops;
		sb->s_root->d_inode->i_fop = &simple_dir_fops;
	}
	return sb;
}

/* Grow the block array to hold block index idx (i_mutex held). */
static int ramfs_grow_slots(struct inode *inode, u64 idx)
{
	u64 n = inode->data.nr_slots ? inode->data.nr_slots : 8;
	while (n <= idx)
		n *= 2;
	void **pages = fs_alloc(n * sizeof(void *));
	if (!pages)
		return -ENOMEM;
	memset(pages, 0, n * sizeof(void *));
	if (inode->data.nr_slots)
		memcpy(pages, inode->data.pages, inode->data.nr_slots * sizeof(void *));
	kfree(inode->data.pages);
	inode->data.pages = pages;
	inode->data.nr_slots = n;
	return 0;
}

static void *ramfs_block(struct inode *inode, u64 idx, bool create, int *err)
{
	*err = 0;
	if (idx >= inode->data.nr_slots) {
		if (!create)
			return NULL;
		if ((*err = ramfs_grow_slots(inode, idx)))
			return NULL;
	}
	void *p = inode->data.pages[idx];
	if (p || !create)
		return p;
	p = should_failslab() ? NULL : alloc_pages(0);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(p, 0, RAMFS_BLOCK);
	inode->data.pages[idx] = p;
	WRITE_ONCE(inode->data.nr_pages, inode->data.nr_pages + 1);
	return p;
}

static long ramfs_read(struct inode *inode, struct iov_iter *to, s64 pos)
{
	size_t count = iov_iter_count(to), done = 0, n = 0, copied = 0;
	int err;

	mutex_lock(&inode->i_mutex);
	if (pos < inode->i_size && count > (u64)(inode->i_size - pos))
		count = inode->i_size - pos;
	if (pos >= inode->i_size)
		count = 0;
	while (done < count) {
		u64 off = (pos + done) % RAMFS_BLOCK;
		n = MIN(RAMFS_BLOCK - off, count - done);
		void *block = ramfs_block(inode, (pos + done) / RAMFS_BLOCK, false, &err);
		copied = block ? copy_to_iter((char *)block + off, n, to) : iov_iter_zero(n, to);
		done += copied;
		if (copied < n)
			break; /* a user buffer that faulted: what was copied before it counts */
	}
	mutex_unlock(&inode->i_mutex);
	return done || copied == n ? (long)done : -EFAULT;
}

static long ramfs_write(struct inode *inode, struct iov_iter *from, s64 *ppos, bool append)
{
	size_t count = iov_iter_count(from), done = 0;
	int err = 0;

	mutex_lock(&inode->i_mutex);
	s64 pos = append ? inode->i_size : *ppos;
	if ((u64)pos >= RAMFS_MAX_FILE_SIZE) {
		mutex_unlock(&inode->i_mutex);
		return count ? -EFBIG : 0;
	}
	if (count > RAMFS_MAX_FILE_SIZE - pos)
		count = RAMFS_MAX_FILE_SIZE - pos;
	while (done < count) {
		u64 off = (pos + done) % RAMFS_BLOCK;
		size_t n = MIN(RAMFS_BLOCK - off, count - done);
		void *block = ramfs_block(inode, (pos + done) / RAMFS_BLOCK, true, &err);
		if (!block)
			break;
		/* A short copy leaves the rest of the block as it was (copy_from_iter()). */
		size_t copied = copy_from_iter((char *)block + off, n, from);
		done += copied;
		if (copied < n) {
			err = -EFAULT;
			break;
		}
	}
	if (done && pos + (s64)done > inode->i_size)
		WRITE_ONCE(inode->i_size, pos + done);
	*ppos = pos + done;
	mutex_unlock(&inode->i_mutex);
	/* A short write reports what it wrote; nothing written reports why. */
	return done ? (long)done : err;
}

/* i_mutex held: free the blocks wholly past size and zero the tail of the last. */
static void ramfs_drop_blocks(struct inode *inode, s64 size)
{
	u64 first = (size + RAMFS_BLOCK - 1) / RAMFS_BLOCK;
	for (u64 i = first; i < inode->data.nr_slots; i++) {
		if (inode->data.pages[i]) {
			free_pages(inode->data.pages[i], 0);
			inode->data.pages[i] = NULL;
			WRITE_ONCE(inode->data.nr_pages, inode->data.nr_pages - 1);
		}
	}
	u64 last = size / RAMFS_BLOCK;
	if (size % RAMFS_BLOCK && last < inode->data.nr_slots && inode->data.pages[last])
		memset((char *)inode->data.pages[last] + size % RAMFS_BLOCK, 0,
		       RAMFS_BLOCK - size % RAMFS_BLOCK);
}

static int ramfs_truncate(struct inode *inode, s64 size)
{
	if (size < 0)
		return -EINVAL;
	if ((u64)size > RAMFS_MAX_FILE_SIZE)
		return -EFBIG;
	mutex_lock(&inode->i_mutex);
	if (size < inode->i_size)
		ramfs_drop_blocks(inode, size);
	WRITE_ONCE(inode->i_size, size);
	mutex_unlock(&inode->i_mutex);
	return 0;
}

static int ramfs_setattr(struct inode *inode, const struct iattr *attr)
{
	if (attr->ia_valid & ATTR_SIZE) {
		if (!S_ISREG(inode->i_mode))
			return S_ISDIR(inode->i_mode) ? -EISDIR : -EINVAL;
		int err = ramfs_truncate(inode, attr->ia_size);
		if (err)
			return err;
	}
	if (!(attr->ia_valid & ATTR_MODE))
		return 0; /* a truncate alone: O_TRUNC, every creat() */
	return simple_setattr(inode, &(struct iattr){ATTR_MODE, attr->ia_mode, 0});
}

/* Directory sizes and link counts change under the directory's i_mutex; i_lock makes each update
 * whole. */
static void inode_add(struct inode *inode, u32 *field, int v)
{
	spin_lock(&inode->i_lock);
	WRITE_ONCE(*field, *field + v);
	spin_unlock(&inode->i_lock);
}

static void dir_add_entry(struct inode *dir, int v)
{
	spin_lock(&dir->i_lock);
	dir->entries += v;
	WRITE_ONCE(dir->i_size, dir->entries);
	spin_unlock(&dir->i_lock);
}

/*
 * d negative: make the file, directory, symlink (link: its target) or character
 * device (rdev: its number) d names. 0 or -ENOMEM, and then nothing changed.
 */
static __always_inline int ramfs_make(struct inode *idir, struct dentry *d, u32 mode,
				      const char *link, u32 rdev)
{
	char *copy = NULL;

	if (link) {
		size_t len = strlen(link);
		if (!(copy = fs_alloc(len + 1)))
			return -ENOMEM;
		memcpy(copy, link, len + 1);
	}
	struct inode *inode = new_inode(idir->i_sb, mode);
	if (!inode) {
		kfree(copy);
		return -ENOMEM;
	}
	inode->i_op = S_ISDIR(mode) ? &ramfs_dir_iops
		      : copy	    ? &ramfs_symlink_iops
				    : &ramfs_file_iops;
	inode->i_fop = S_ISDIR(mode)   ? &simple_dir_fops
		       : S_ISREG(mode) ? &ramfs_file_fops
		       : S_ISCHR(mode) ? &def_chr_fops
				       : &empty_fops;
	if (copy) {
		inode->link = copy;
		inode->i_size = strlen(copy);
	}
	if (S_ISCHR(mode))
		inode->rdev = rdev;
	d_instantiate(d, inode);
	d_pin(d);
	dir_add_entry(idir, 1);
	if (S_ISDIR(mode))
		inode_add(idir, &idir->i_nlink, 1);
	return 0;
}

static int ramfs_create(struct inode *dir, struct dentry *d, u32 mode)
{
	return ramfs_make(dir, d, S_IFREG | (mode & 07777), NULL, 0);
}

static int ramfs_mkdir(struct inode *dir, struct dentry *d, u32 mode)
{
	return ramfs_make(dir, d, S_IFDIR | (mode & 07777), NULL, 0);
}

static int ramfs_mknod(struct inode *dir, struct dentry *d, u32 mode, u32 rdev)
{
	return ramfs_make(dir, d, mode, NULL, rdev);
}

static int ramfs_symlink(struct inode *dir, struct dentry *d, const char *target)
{
	return ramfs_make(dir, d, S_IFLNK | 0777, target, 0);
}

static int ramfs_link(struct dentry *old, struct inode *dir, struct dentry *d)
{
	struct inode *inode = old->d_inode;
	spin_lock(&inode->i_lock);
	bool gone = inode->i_nlink == 0;
	if (!gone)
		inode->i_nlink++;
	spin_unlock(&inode->i_lock);
	if (gone)
		return -ENOENT;
	d_instantiate(d, igrab(inode));
	d_pin(d);
	dir_add_entry(dir, 1);
	return 0;
}

/* Remove the name d (a directory: empty, its i_mutex held too). */
static __always_inline void ramfs_remove(struct inode *idir, struct dentry *d)
{
	struct inode *inode = d->d_inode;

	if (S_ISDIR(inode->i_mode)) {
		spin_lock(&inode->i_lock);
		inode->i_state |= I_DEADDIR;
		WRITE_ONCE(inode->i_nlink, 0);
		spin_unlock(&inode->i_lock);
		inode_add(idir, &idir->i_nlink, -1);
		d_prune_negative_children(d);
	} else {
		inode_add(inode, &inode->i_nlink, -1);
	}
	dir_add_entry(idir, -1);
	d_unpin(d);
}

static int ramfs_unlink(struct inode *dir, struct dentry *d)
{
	ramfs_remove(dir, d);
	return 0;
}

static int ramfs_rmdir(struct inode *dir, struct dentry *d)
{
	if (d->d_inode->entries)
		return -ENOTEMPTY;
	ramfs_remove(dir, d);
	return 0;
}

/* The inode's last reference is gone (no lock needed: nobody else can reach it). */
static void ramfs_evict(struct inode *inode)
{
	if (S_ISREG(inode->i_mode)) {
		ramfs_drop_blocks(inode, 0);
		kfree(inode->data.pages);
		memset(&inode->data, 0, sizeof(inode->data));
	} else if (S_ISLNK(inode->i_mode)) {
		kfree(inode->link);
		inode->link = NULL;
	}
}

static int ramfs_rename(struct inode *odir, struct dentry *old, struct inode *ndir,
			struct dentry *new)
{
	struct inode *target = new->d_inode, *iold = old->d_inode;
	if (target && S_ISDIR(target->i_mode) && target->entries)
		return -ENOTEMPTY;
	int err = d_move(old, new); /* the only step that can fail: first */
	if (err)
		return err;
	if (target)
		ramfs_remove(ndir, new);
	dir_add_entry(odir, -1);
	dir_add_entry(ndir, 1);
	if (S_ISDIR(iold->i_mode) && odir != ndir) {
		inode_add(odir, &odir->i_nlink, -1);
		inode_add(ndir, &ndir->i_nlink, 1);
	}
	return 0;
}

static long ramfs_get_link(struct inode *inode, const char **text, char **buf)
{
	*text = inode->link;
	return inode->i_size;
}

static const struct inode_operations ramfs_dir_iops = {
    .lookup = simple_lookup,
    .create = ramfs_create,
    .mkdir = ramfs_mkdir,
    .mknod = ramfs_mknod,
    .symlink = ramfs_symlink,
    .link = ramfs_link,
    .unlink = ramfs_unlink,
    .rmdir = ramfs_rmdir,
    .rename = ramfs_rename,
    .setattr = ramfs_setattr,
};

static const struct inode_operations ramfs_file_iops = {.setattr = ramfs_setattr};

static const struct inode_operations ramfs_symlink_iops = {
    .get_link = ramfs_get_link,
    .setattr = ramfs_setattr,
};

static long ramfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	long n = ramfs_read(iocb->ki_filp->f_inode, to, iocb->ki_pos);
	if (n > 0)
		iocb->ki_pos += n;
	return n;
}

static long ramfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	return ramfs_write(iocb->ki_filp->f_inode, from, &iocb->ki_pos, iocb->ki_append);
}

static const struct file_operations ramfs_file_fops = {
    .read_iter = ramfs_read_iter,
    .write_iter = ramfs_write_iter,
    .llseek = generic_file_llseek,
};

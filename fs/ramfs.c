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
#include <grace/failslab.h>
#include <grace/page_alloc.h>
#include <grace/slab.h>
#include <grace/string.h>

#include <grace/uio.h>
#include "internal.h"

#define RAMFS_BLOCK 4096u

static struct super_block ramfs_sb;

struct super_block *ramfs_mount(void)
{
	struct super_block *sb = &ramfs_sb;
	atomic64_set(&sb->s_next_ino, 0);
	mutex_init(&sb->s_rename_mutex);
	struct inode *root = new_inode(sb, S_IFDIR | 0755);
	struct dentry *d = root ? d_alloc_root(sb) : NULL;
	if (!d)
		return NULL;
	/* The root is never hashed: no lookup names it. The reference passes to the superblock. */
	d->d_inode = root;
	vfs_count_add(NR_DENTRY_NEGATIVE, -1);
	sb->s_root = d;
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

long ramfs_read(struct inode *inode, struct iov_iter *to, s64 pos)
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

long ramfs_write(struct inode *inode, struct iov_iter *from, s64 *ppos, bool append)
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

int ramfs_truncate(struct inode *inode, s64 size)
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

bool ramfs_dir_empty(const struct inode *dir)
{
	return dir->entries == 0;
}

int ramfs_mknod(struct dentry *dir, struct dentry *d, u32 mode, const char *link, u32 rdev)
{
	struct inode *idir = dir->d_inode;
	char *copy = NULL;

	if (link) {
		size_t len = strlen(link);
		if (!(copy = fs_alloc(len + 1)))
			return -ENOMEM;
		memcpy(copy, link, len + 1);
	}
	struct inode *inode = new_inode(dir->d_sb, mode);
	if (!inode) {
		kfree(copy);
		return -ENOMEM;
	}
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

int ramfs_link(struct dentry *dir, struct dentry *d, struct inode *inode)
{
	spin_lock(&inode->i_lock);
	bool gone = inode->i_nlink == 0;
	if (!gone)
		inode->i_nlink++;
	spin_unlock(&inode->i_lock);
	if (gone)
		return -ENOENT;
	d_instantiate(d, igrab(inode));
	d_pin(d);
	dir_add_entry(dir->d_inode, 1);
	return 0;
}

void ramfs_unlink(struct dentry *dir, struct dentry *d)
{
	struct inode *inode = d->d_inode, *idir = dir->d_inode;

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

/* The inode's last reference is gone (no lock needed: nobody else can reach it). */
void ramfs_evict(struct inode *inode)
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

int ramfs_rename(struct dentry *odir, struct dentry *ndir, struct dentry *old, struct dentry *new)
{
	struct inode *target = new->d_inode, *iold = old->d_inode;
	int err = d_move(old, new); /* the only step that can fail: first */
	if (err)
		return err;
	if (target)
		ramfs_unlink(ndir, new);
	dir_add_entry(odir->d_inode, -1);
	dir_add_entry(ndir->d_inode, 1);
	if (S_ISDIR(iold->i_mode) && odir != ndir) {
		inode_add(odir->d_inode, &odir->d_inode->i_nlink, -1);
		inode_add(ndir->d_inode, &ndir->d_inode->i_nlink, 1);
	}
	return 0;
}

/*
 * What file systems share: the empty operation tables, the position of a file
 * that has one, the lookup, listing and attribute change of a directory whose
 * names live in the dcache alone (ramfs, procfs's fixed directories), and the
 * dispatch to a symlink's get_link.
 */
#include <grace/slab.h>
#include "internal.h"

const struct inode_operations empty_iops;
const struct file_operations empty_fops;

s64 generic_file_llseek(struct file *f, s64 offset, int whence)
{
	s64 base, pos;
	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->f_pos;
		break;
	case SEEK_END:
		base = READ_ONCE(f->f_inode->i_size);
		break;
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, offset, &pos) || pos < 0)
		return -EINVAL;
	f->f_pos = pos;
	return pos;
}

const struct file_operations simple_dir_fops = {
    .llseek = generic_file_llseek,
    .iterate = dcache_readdir,
};

int simple_lookup(struct inode *dir, struct dentry *d)
{
	/* Cached as negative: the next lookup of the name is a cache hit. */
	d_add(d, NULL);
	return 0;
}

void simple_add(struct dentry *d, struct inode *inode)
{
	d_add(d, inode);
	d_pin(d);
}

int simple_setattr(struct inode *inode, const struct iattr *attr)
{
	if (attr->ia_valid & ATTR_SIZE)
		return -EPERM; /* a size is kept by the file system that stores the data */
	if (attr->ia_valid & ATTR_MODE) {
		mutex_lock(&inode->i_mutex);
		WRITE_ONCE(inode->i_mode, (inode->i_mode & S_IFMT) | (attr->ia_mode & 07777));
		mutex_unlock(&inode->i_mutex);
	}
	return 0;
}

int notify_change(struct inode *inode, const struct iattr *attr)
{
	const struct inode_operations *iop = inode->i_op;
	return iop->setattr ? iop->setattr(inode, attr) : simple_setattr(inode, attr);
}

long inode_get_link(struct inode *inode, const char **text, char **buf)
{
	*buf = NULL;
	if (!inode->i_op->get_link)
		return -EINVAL;
	return inode->i_op->get_link(inode, text, buf);
}

/*
 * A copy cursor, Linux's iov_iter cut down to what Grace needs: the memory a
 * read fills or a write drains, as one buffer or an array of segments
 * (readv, writev), in user memory or in the kernel's. A file's read and write
 * take one and copy through it, so the same code serves a program's buffer and
 * the kernel shell's, and nothing needs to know which.
 *
 * A copy moves bytes and advances the cursor past them; it returns how many it
 * moved. In user memory it stops at the first byte that faults (a range that
 * is not all in the user half is refused whole, by access_ok()), so a caller
 * that took bytes from a queue can put back exactly those it could not copy.
 * Kernel memory never faults: a kernel cursor always moves all that fits.
 *
 * A cursor belongs to the call that made it: no lock.
 */
#ifndef GRACE_UIO_H
#define GRACE_UIO_H

#include <grace/compiler.h>
#include <grace/types.h>
#include <grace/uapi/uio.h> /* struct iovec: for a user cursor, iov_base is a user address */

/* Linux's UIO_FASTIOV: segments an import keeps on the caller's stack. */
#define UIO_FASTIOV 8
/* Linux's MAX_RW_COUNT: one call moves at most INT_MAX bytes rounded down to a page. */
#define MAX_RW_COUNT 0x7ffff000UL

enum iter_type {
	ITER_USER,   /* the segments are user addresses: copies go through uaccess */
	ITER_KERNEL, /* the segments are kernel addresses: memcpy */
};

struct iov_iter {
	enum iter_type type;
	const struct iovec *seg; /* the segment the next byte is in */
	unsigned long nr_segs;	 /* segments from seg on */
	size_t seg_off;		 /* bytes of *seg already moved */
	size_t count;		 /* bytes left, over all segments */
	struct iovec one;	 /* the segment of a one-buffer cursor */
};

/* A cursor over one buffer. The user one does not check the range: fd_rw does, as read(2). */
void iov_iter_ubuf(struct iov_iter *i, void __user *buf, size_t count);
void iov_iter_kbuf(struct iov_iter *i, void *buf, size_t count);
/* A cursor over nr segments of a kernel array (of user or kernel addresses), count bytes. */
void iov_iter_init(struct iov_iter *i, enum iter_type type, const struct iovec *iov,
		   unsigned long nr, size_t count);

static inline size_t iov_iter_count(const struct iov_iter *i)
{
	return i->count;
}

static inline bool iov_iter_is_user(const struct iov_iter *i)
{
	return i->type == ITER_USER;
}

/* Does every segment of a user cursor lie in the user half (access_ok())? A kernel one: true. */
bool iov_iter_access_ok(const struct iov_iter *i);

/* Copy n bytes out of the kernel at from into the cursor; the bytes copied. */
size_t copy_to_iter(const void *from, size_t n, struct iov_iter *i);
/* Copy n bytes from the cursor into the kernel at to; the bytes copied. Past them, to is as it
 * was. */
size_t copy_from_iter(void *to, size_t n, struct iov_iter *i);
/* Zero n bytes of the cursor; the bytes zeroed. */
size_t iov_iter_zero(size_t n, struct iov_iter *i);
/* Step over n bytes (at most what is left) without copying. */
void iov_iter_advance(struct iov_iter *i, size_t n);

/*
 * readv and writev's vector (Linux's import_iovec()): nr segments copied in
 * from uvec, to fast if they fit (UIO_FASTIOV) or to a new array in *alloc
 * (the caller kfree()s it, NULL if none), and i made over them. -EINVAL for
 * more than UIO_MAXIOV segments or a length that is negative as a ssize_t;
 * -EFAULT if the vector cannot be read or a segment is not all in the user
 * half; -ENOMEM. The total is cut to MAX_RW_COUNT, as Linux's is.
 */
long iov_iter_import_user(const struct iovec __user *uvec, unsigned long nr,
			  struct iovec fast[UIO_FASTIOV], struct iovec **alloc, struct iov_iter *i);

#endif

/*
 * The copy cursor (grace/uio.h): a walk over segments, a piece of one segment
 * at a time, with user pieces copied by the uaccess calls, which stop at the
 * first byte that faults and say how many they did not move. The cursor then
 * stands just past the last byte moved. No state beyond the cursor, no lock.
 */
#include <grace/errno.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uio.h>

void iov_iter_init(struct iov_iter *i, enum iter_type type, const struct iovec *iov,
		   unsigned long nr, size_t count)
{
	*i = (struct iov_iter){.type = type, .seg = iov, .nr_segs = nr, .count = count};
}

void iov_iter_ubuf(struct iov_iter *i, void __user *buf, size_t count)
{
	iov_iter_init(i, ITER_USER, &i->one, 1, count);
	i->one = (struct iovec){(void *)buf, count};
}

void iov_iter_kbuf(struct iov_iter *i, void *buf, size_t count)
{
	iov_iter_init(i, ITER_KERNEL, &i->one, 1, count);
	i->one = (struct iovec){buf, count};
}

/* Past the segments used up (and empty ones) to the one the next byte is in. Some must be left. */
static void iter_next_byte(struct iov_iter *i)
{
	while (i->seg_off == i->seg->iov_len) {
		i->seg++;
		i->nr_segs--;
		i->seg_off = 0;
	}
}

void iov_iter_advance(struct iov_iter *i, size_t n)
{
	n = MIN(n, i->count);
	while (n) {
		iter_next_byte(i);
		size_t step = MIN(n, i->seg->iov_len - i->seg_off);
		i->seg_off += step;
		i->count -= step;
		n -= step;
	}
}

bool iov_iter_access_ok(const struct iov_iter *i)
{
	if (i->type != ITER_USER)
		return true;
	for (unsigned long k = 0; k < i->nr_segs; k++)
		if (!access_ok((void __user *)i->seg[k].iov_base, i->seg[k].iov_len))
			return false;
	return true;
}

enum iter_op { ITER_TO, ITER_FROM, ITER_ZERO };

/* One piece of len bytes between the kernel at k and the cursor at p: the bytes not moved. */
static size_t iter_piece(enum iter_op op, enum iter_type type, void *p, void *k, size_t len)
{
	bool in_user = type == ITER_USER;

	switch (op) {
	case ITER_TO:
		if (in_user)
			return copy_to_user((void __user *)p, k, len);
		memcpy(p, k, len);
		return 0;
	case ITER_FROM:
		/* Not copy_from_user(): a short copy must leave the rest of k as it was. */
		if (in_user)
			return copy_from_user_partial(k, (const void __user *)p, len);
		memcpy(k, p, len);
		return 0;
	case ITER_ZERO:
		if (in_user)
			return clear_user((void __user *)p, len);
		memset(p, 0, len);
		return 0;
	}
	return len;
}

static size_t iter_copy(enum iter_op op, void *k, size_t n, struct iov_iter *i)
{
	size_t done = 0;

	n = MIN(n, i->count);
	while (done < n) {
		iter_next_byte(i);
		void *p = (char *)i->seg->iov_base + i->seg_off;
		size_t len = MIN(n - done, i->seg->iov_len - i->seg_off);
		size_t left =
		    iter_piece(op, i->type, p, op == ITER_ZERO ? NULL : (char *)k + done, len);
		i->seg_off += len - left;
		i->count -= len - left;
		done += len - left;
		if (left)
			break; /* a user byte that faults: the cursor stays on it */
	}
	return done;
}

size_t copy_to_iter(const void *from, size_t n, struct iov_iter *i)
{
	return iter_copy(ITER_TO, (void *)from, n, i);
}

size_t copy_from_iter(void *to, size_t n, struct iov_iter *i)
{
	return iter_copy(ITER_FROM, to, n, i);
}

size_t iov_iter_zero(size_t n, struct iov_iter *i)
{
	return iter_copy(ITER_ZERO, NULL, n, i);
}

long iov_iter_import_user(const struct iovec __user *uvec, unsigned long nr,
			  struct iovec fast[UIO_FASTIOV], struct iovec **alloc, struct iov_iter *i)
{
	struct iovec *iov = fast;
	size_t total = 0;

	*alloc = NULL;
	if (nr > UIO_MAXIOV)
		return -EINVAL;
	if (nr > UIO_FASTIOV && !(iov = *alloc = kmalloc(nr * sizeof(*iov))))
		return -ENOMEM;
	if (copy_from_user(iov, uvec, nr * sizeof(*iov)))
		return -EFAULT;
	/* As Linux's: every length is looked at before any address. */
	for (unsigned long k = 0; k < nr; k++)
		if ((ssize_t)iov[k].iov_len < 0)
			return -EINVAL;
	for (unsigned long k = 0; k < nr; k++) {
		if (!access_ok((void __user *)iov[k].iov_base, iov[k].iov_len))
			return -EFAULT;
		iov[k].iov_len = MIN(iov[k].iov_len, MAX_RW_COUNT - total);
		total += iov[k].iov_len;
	}
	iov_iter_init(i, ITER_USER, iov, nr, total);
	return (long)total;
}

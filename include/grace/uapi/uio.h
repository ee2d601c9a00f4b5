/*
 * readv and writev's vector (uapi/linux/uio.h), as 64-bit riscv64 and x86_64
 * share it: a base address and a length, two longs.
 */
#ifndef GRACE_UAPI_UIO_H
#define GRACE_UAPI_UIO_H

#include <grace/types.h>

struct iovec {
	void *iov_base;
	size_t iov_len;
};

/* The most segments one call takes. */
#define UIO_MAXIOV 1024

#endif

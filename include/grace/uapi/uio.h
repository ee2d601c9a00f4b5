/* readv() and writev()'s segments (uapi/linux/uio.h). */
#ifndef GRACE_UAPI_UIO_H
#define GRACE_UAPI_UIO_H

#include <grace/compiler.h>
#include <grace/types.h>

struct iovec {
	void __user *iov_base;
	size_t iov_len;
};

#endif

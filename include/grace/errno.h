/* Error numbers, returned negated (-ENOMEM), with the values Linux uses. */
#ifndef GRACE_ERRNO_H
#define GRACE_ERRNO_H

#define EPERM 1
#define ENOENT 2
#define EIO 5
#define E2BIG 7
#define EAGAIN 11
#define ENOMEM 12
#define EFAULT 14
#define EBUSY 16
#define EEXIST 17
#define ENODEV 19
#define EINVAL 22
#define ENOSPC 28
#define ERANGE 34
#define ENAMETOOLONG 36
#define ENOSYS 38
#define ENODATA 61
#define EOVERFLOW 75
#define EILSEQ 84
#define ETIMEDOUT 110

const char *errno_name(int err);

#endif

/* Error numbers, returned negated (-ENOMEM), with the values Linux uses. */
#ifndef GRACE_ERRNO_H
#define GRACE_ERRNO_H

#include <grace/uapi/errno.h>

/*
 * Never seen by a program: a system call a signal interrupted returns this, and
 * the way back to user mode either restarts the call (the signal is ignored, or
 * its handler has SA_RESTART) or turns it into -EINTR (Linux's ERESTARTSYS).
 */
#define ERESTARTSYS 512

/* "ENOENT" for ENOENT or -ENOENT. */
const char *errno_name(int err);
/* The message Linux's C library gives: "No such file or directory". */
const char *strerror(int err);

#endif

/* The bounds on paths and pipe writes that programs see (uapi/linux/limits.h). */
#ifndef GRACE_UAPI_LIMITS_H
#define GRACE_UAPI_LIMITS_H

#define PATH_MAX 4096 /* bytes of a path, its terminating NUL included */
#define NAME_MAX 255  /* bytes of one component */
#define PIPE_BUF 4096 /* writes up to this size to a pipe are atomic */

#endif

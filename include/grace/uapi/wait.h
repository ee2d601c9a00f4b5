/* wait4()'s options (uapi/linux/wait.h). */
#ifndef GRACE_UAPI_WAIT_H
#define GRACE_UAPI_WAIT_H

#define WNOHANG 1
#define WUNTRACED 2
#define WCONTINUED 8
#define __WALL 0x40000000
#define __WCLONE 0x80000000

#endif

/* getrandom()'s flags (uapi/linux/random.h). */
#ifndef GRACE_UAPI_RANDOM_H
#define GRACE_UAPI_RANDOM_H

#define GRND_NONBLOCK 0x1
#define GRND_RANDOM 0x2
#define GRND_INSECURE 0x4

#endif

/* The clocks of clock_gettime() and clock_nanosleep(), and its flag (uapi/linux/time.h). */
#ifndef GRACE_UAPI_TIME_H
#define GRACE_UAPI_TIME_H

#include <grace/types.h>

#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID 3
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME 7

#define TIMER_ABSTIME 1

/* As 64-bit Linux lays them out (struct __kernel_timespec, __kernel_old_timeval). */
struct timespec {
	s64 tv_sec, tv_nsec;
};

struct timeval {
	s64 tv_sec, tv_usec;
};

#endif

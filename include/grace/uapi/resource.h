/*
 * Resource limits and sysinfo(2) (uapi/asm-generic/resource.h,
 * uapi/linux/sysinfo.h), as 64-bit riscv64 and x86_64 share them: struct
 * rlimit is two unsigned longs, the same as prlimit64's struct rlimit64.
 */
#ifndef GRACE_UAPI_RESOURCE_H
#define GRACE_UAPI_RESOURCE_H

#include <grace/types.h>

#define RLIMIT_CPU 0
#define RLIMIT_FSIZE 1
#define RLIMIT_DATA 2
#define RLIMIT_STACK 3
#define RLIMIT_CORE 4
#define RLIMIT_RSS 5
#define RLIMIT_NPROC 6
#define RLIMIT_NOFILE 7
#define RLIMIT_MEMLOCK 8
#define RLIMIT_AS 9
#define RLIMIT_LOCKS 10
#define RLIMIT_SIGPENDING 11
#define RLIMIT_MSGQUEUE 12
#define RLIMIT_NICE 13
#define RLIMIT_RTPRIO 14
#define RLIMIT_RTTIME 15
#define RLIM_NLIMITS 16
#define RLIM_INFINITY (~0ULL)

struct rlimit64 {
	u64 rlim_cur, rlim_max;
};

/* wait4()'s resource use: two struct timevals, then fourteen counts. */
struct rusage {
	s64 ru_utime[2], ru_stime[2];
	s64 fields[14];
};

struct sysinfo {
	s64 uptime;   /* seconds, rounded up */
	u64 loads[3]; /* 1, 5 and 15 minute load averages, scaled by 1 << 16 */
	u64 totalram, freeram, sharedram, bufferram, totalswap, freeswap;
	u16 procs, pad;
	u64 totalhigh, freehigh;
	u32 mem_unit; /* the byte count each memory figure is in */
};
_Static_assert(sizeof(struct sysinfo) == 112, "struct sysinfo is 112 bytes on 64-bit");

#endif

/*
 * The system-call registry: every call Grace implements, once, with its number
 * on each arch (Linux's: arch/x86/entry/syscalls/syscall_64.tbl for x86_64, the
 * asm-generic table for riscv64; none where the arch has no such call). Each is
 * defined by SYSCALL_DEFINEn(name, ...) in the file named above its group
 * (grace/syscall.h), which makes sys_<name> and the record of its argument types.
 * The dispatch table, the declarations, the calls' numbers (NR_<name>) and the
 * bad-pointer test's list are made from these lines by the preprocessor: a file
 * that includes this one defines SYSCALL(name, x86_64, riscv64) first.
 * tests/unistd_check.py checks each number against Linux's headers and
 * `make abi` lists them.
 */

/* clang-format off */
/*      name                x86_64  riscv64 */

/* sys_fs.c */
SYSCALL(read,                0,      63)
SYSCALL(write,               1,      64)
SYSCALL(readv,               19,     65)
SYSCALL(writev,              20,     66)
SYSCALL(pread64,             17,     67)
SYSCALL(pwrite64,            18,     68)
SYSCALL(openat,              257,    56)
SYSCALL(close,               3,      57)
SYSCALL(lseek,               8,      62)
SYSCALL(fstat,               5,      80)
SYSCALL(newfstatat,          262,    79)
SYSCALL(statx,               332,    291)
SYSCALL(getdents64,          217,    61)
SYSCALL(ioctl,               16,     29)
SYSCALL(dup,                 32,     23)
SYSCALL(dup3,                292,    24)
SYSCALL(getcwd,              79,     17)
SYSCALL(chdir,               80,     49)
SYSCALL(mkdirat,             258,    34)
SYSCALL(unlinkat,            263,    35)
SYSCALL(renameat2,           316,    276)
SYSCALL(linkat,              265,    37)
SYSCALL(symlinkat,           266,    36)
SYSCALL(readlinkat,          267,    78)
SYSCALL(umask,               95,     166)
SYSCALL(dup2,                33,     none)
SYSCALL(pipe,                22,     none)
SYSCALL(pipe2,               293,    59)
SYSCALL(fcntl,               72,     25)
SYSCALL(fchmodat,            268,    53)
SYSCALL(fchmod,              91,     52)
SYSCALL(utimensat,           280,    88)
SYSCALL(open,                2,      none)
SYSCALL(stat,                4,      none)
SYSCALL(lstat,               6,      none)
SYSCALL(access,              21,     none)
SYSCALL(faccessat,           269,    48)
SYSCALL(mkdir,               83,     none)
SYSCALL(rmdir,               84,     none)
SYSCALL(unlink,              87,     none)
SYSCALL(rename,              82,     none)
SYSCALL(renameat,            264,    none)
SYSCALL(link,                86,     none)
SYSCALL(symlink,             88,     none)
SYSCALL(readlink,            89,     none)
SYSCALL(chmod,               90,     none)

/* sys_mm.c */
SYSCALL(brk,                 12,     214)
SYSCALL(mmap,                9,      222)
SYSCALL(munmap,              11,     215)
SYSCALL(mprotect,            10,     226)
SYSCALL(madvise,             28,     233)

/* sys_futex.c */
SYSCALL(futex,               202,    98)

/* sys_proc.c */
SYSCALL(exit,                60,     93)
SYSCALL(exit_group,          231,    94)
SYSCALL(getpid,              39,     172)
SYSCALL(getppid,             110,    173)
SYSCALL(gettid,              186,    178)
SYSCALL(getuid,              102,    174)
SYSCALL(geteuid,             107,    175)
SYSCALL(getgid,              104,    176)
SYSCALL(getegid,             108,    177)
SYSCALL(set_tid_address,     218,    96)
SYSCALL(sched_yield,         24,     124)
SYSCALL(uname,               63,     160)
SYSCALL(getrandom,           318,    278)
SYSCALL(arch_prctl,          158,    none)

/* sys_sched.c */
SYSCALL(sched_getaffinity,   204,    123)
SYSCALL(sched_setaffinity,   203,    122)

/* sys_poll.c */
SYSCALL(poll,                7,      none)
SYSCALL(ppoll,               271,    73)

/* sys_signal.c */
SYSCALL(rt_sigaction,        13,     134)
SYSCALL(rt_sigprocmask,      14,     135)
SYSCALL(rt_sigpending,       127,    136)
SYSCALL(rt_sigsuspend,       130,    133)
SYSCALL(rt_sigreturn,        15,     139)
SYSCALL(pause,               34,     none)
SYSCALL(kill,                62,     129)
SYSCALL(tkill,               200,    130)
SYSCALL(tgkill,              234,    131)
SYSCALL(setpgid,             109,    154)
SYSCALL(getpgid,             121,    155)
SYSCALL(getpgrp,             111,    none)
SYSCALL(setsid,              112,    157)
SYSCALL(getsid,              124,    156)

/* sys_fork.c */
SYSCALL(clone,               56,     220)
SYSCALL(fork,                57,     none)
SYSCALL(vfork,               58,     none)
SYSCALL(execve,              59,     221)
SYSCALL(wait4,               61,     260)

/* sys_socket.c */
SYSCALL(socket,              41,     198)
SYSCALL(bind,                49,     200)
SYSCALL(connect,             42,     203)
SYSCALL(sendto,              44,     206)
SYSCALL(recvfrom,            45,     207)
SYSCALL(getsockname,         51,     204)
SYSCALL(getpeername,         52,     205)
SYSCALL(listen,              50,     201)
SYSCALL(accept,              43,     202)
SYSCALL(accept4,             288,    242)

/* sys_resource.c */
SYSCALL(getrlimit,           97,     163)
SYSCALL(setrlimit,           160,    164)
SYSCALL(prlimit64,           302,    261)
SYSCALL(sysinfo,             99,     179)

/* sys_time.c */
SYSCALL(clock_gettime,       228,    113)
SYSCALL(gettimeofday,        96,     169)
SYSCALL(time,                201,    none)
SYSCALL(nanosleep,           35,     101)
SYSCALL(clock_nanosleep,     230,    115)
/* clang-format on */

/*
 * What the kernel-linked test programs (null_syscall.c, open_close.c) need
 * without a libc: a _start that hands the initial stack to start_c(), system
 * calls with up to four arguments, and a decimal parser for argv. Their
 * numbers are each arch's Linux ABI.
 */
#ifndef TESTS_USER_NOLIBC_H
#define TESTS_USER_NOLIBC_H

#if defined(__x86_64__)
#define NR_OPENAT 257
#define NR_NEWFSTATAT 262
#define NR_UNLINKAT 263
#define NR_CLOSE 3
#define NR_GETPPID 110
#define NR_SCHED_SETAFFINITY 203
#define NR_EXIT_GROUP 231

static inline long sys3(long nr, long a0, long a1, long a2)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long sys4(long nr, long a0, long a1, long a2, long a3)
{
	long ret;
	register long r10 __asm__("r10") = a3;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The initial stack: argc at the stack pointer, argv above it. */
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call start_c\n hlt\n");
#else
#define NR_OPENAT 56
#define NR_NEWFSTATAT 79
#define NR_UNLINKAT 35
#define NR_CLOSE 57
#define NR_GETPPID 173
#define NR_SCHED_SETAFFINITY 122
#define NR_EXIT_GROUP 94

static inline long sys3(long nr, long a0, long a1, long a2)
{
	register long a7_ __asm__("a7") = nr;
	register long a0_ __asm__("a0") = a0;
	register long a1_ __asm__("a1") = a1;
	register long a2_ __asm__("a2") = a2;
	__asm__ volatile("ecall" : "+r"(a0_) : "r"(a7_), "r"(a1_), "r"(a2_) : "memory");
	return a0_;
}

static inline long sys4(long nr, long a0, long a1, long a2, long a3)
{
	register long a7_ __asm__("a7") = nr;
	register long a0_ __asm__("a0") = a0;
	register long a1_ __asm__("a1") = a1;
	register long a2_ __asm__("a2") = a2;
	register long a3_ __asm__("a3") = a3;
	__asm__ volatile("ecall" : "+r"(a0_) : "r"(a7_), "r"(a1_), "r"(a2_), "r"(a3_) : "memory");
	return a0_;
}

__asm__(".globl _start\n_start:\n mv a0, sp\n andi sp, sp, -16\n call start_c\n unimp\n");
#endif

#define AT_FDCWD (-100)
#define O_WRONLY 01
#define O_CREAT 0100
#define O_TRUNC 01000

void start_c(long *sp);

static inline unsigned long parse_ulong(const char *s)
{
	unsigned long v = 0;
	for (; s && *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (unsigned long)(*s - '0');
	return v;
}

static inline void __attribute__((noreturn)) exit_group(long code)
{
	sys3(NR_EXIT_GROUP, code, 0, 0);
	__builtin_unreachable();
}

#endif

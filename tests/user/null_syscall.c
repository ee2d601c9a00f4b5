/*
 * The null system call in a loop: getppid() argv[1] times, then exit_group(0).
 * Built without libc (-nostdlib) and linked into the test image, so that the
 * syscall benchmark (tests/bench/syscall_bench.c) can run it with nothing but
 * the kernel: no startup code but its own, one system call per iteration and no
 * other work, so what a run costs beyond a run of 0 iterations is the calls.
 */
#if defined(__x86_64__)
#define NR_GETPPID 110
#define NR_EXIT_GROUP 231

static long sys0(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
	return ret;
}

static long sys1(long nr, long a0)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a0) : "rcx", "r11", "memory");
	return ret;
}

/* The initial stack: argc at the stack pointer, argv above it. */
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call start_c\n hlt\n");
#else
#define NR_GETPPID 173
#define NR_EXIT_GROUP 94

static long sys0(long nr)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0");
	__asm__ volatile("ecall" : "=r"(a0) : "r"(a7) : "memory");
	return a0;
}

static long sys1(long nr, long arg)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0") = arg;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
	return a0;
}

__asm__(".globl _start\n_start:\n mv a0, sp\n andi sp, sp, -16\n call start_c\n unimp\n");
#endif

void start_c(long *sp);

void start_c(long *sp)
{
	long argc = sp[0];
	const char *const *argv = (const char *const *)(sp + 1);
	unsigned long loops = 0;

	for (const char *s = argc > 1 ? argv[1] : "0"; *s >= '0' && *s <= '9'; s++)
		loops = loops * 10 + (unsigned long)(*s - '0');
	for (unsigned long i = 0; i < loops; i++)
		sys0(NR_GETPPID);
	sys1(NR_EXIT_GROUP, 0);
}

/*
 * The floating-point registers belong to each program: `fpregs` runs eight
 * processes (itself and seven forked children) that each fill every FP register
 * and the FP control register with values of their own, make a system call that
 * gives up the CPU (sched_yield, or every eighth round a 1 ms nanosleep, which
 * leaves the CPU to another process or to the idle thread), read them all back
 * and compare, many times over. With more processes than CPUs they take turns on
 * each CPU, so a kernel that loses a program's FP state on a context switch, or
 * shows it another's, makes one of them print what it found instead.
 *
 * The load, the system call and the store are one asm statement, so that no
 * compiled code runs between them to use or spill the registers: riscv64's
 * f0-f31 and fcsr (its rounding mode and flags), x86_64's xmm0-xmm15 and MXCSR.
 *
 * userdiff: fp_registers_survive_context_switches_between_processes
 * run: /bin/fpregs
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCESSES 8
#define ROUNDS 200
#define SLEEP_EVERY 8 /* rounds: one in SLEEP_EVERY sleeps instead of yielding */

#if defined(__x86_64__)
#define NR_SCHED_YIELD 24
#define NR_NANOSLEEP 35
#define FP_REGS 16 /* xmm0-xmm15, the low 64 bits of each */
#elif defined(__riscv) && __riscv_xlen == 64
#define NR_SCHED_YIELD 124
#define NR_NANOSLEEP 101
#define FP_REGS 32 /* f0-f31 */
#else
#error "fpregs: x86_64 or riscv64"
#endif

/* FP_REGS values, then the control register: in[], the system call, out[]. */
struct fp_image {
	unsigned long r[FP_REGS];
	unsigned long ctl;
};

/* Load in, make system call nr(arg), store into out. */
static void fp_across_syscall(const struct fp_image *in, struct fp_image *out, long nr,
			      const void *arg)
{
#if defined(__x86_64__)
	unsigned int mxcsr = (unsigned int)in->ctl;
	long ret = nr;
	__asm__ __volatile__("ldmxcsr %[ctl]\n\t"
			     "movq 0(%[in]), %%xmm0\n\tmovq 8(%[in]), %%xmm1\n\t"
			     "movq 16(%[in]), %%xmm2\n\tmovq 24(%[in]), %%xmm3\n\t"
			     "movq 32(%[in]), %%xmm4\n\tmovq 40(%[in]), %%xmm5\n\t"
			     "movq 48(%[in]), %%xmm6\n\tmovq 56(%[in]), %%xmm7\n\t"
			     "movq 64(%[in]), %%xmm8\n\tmovq 72(%[in]), %%xmm9\n\t"
			     "movq 80(%[in]), %%xmm10\n\tmovq 88(%[in]), %%xmm11\n\t"
			     "movq 96(%[in]), %%xmm12\n\tmovq 104(%[in]), %%xmm13\n\t"
			     "movq 112(%[in]), %%xmm14\n\tmovq 120(%[in]), %%xmm15\n\t"
			     "syscall\n\t"
			     "movq %%xmm0, 0(%[out])\n\tmovq %%xmm1, 8(%[out])\n\t"
			     "movq %%xmm2, 16(%[out])\n\tmovq %%xmm3, 24(%[out])\n\t"
			     "movq %%xmm4, 32(%[out])\n\tmovq %%xmm5, 40(%[out])\n\t"
			     "movq %%xmm6, 48(%[out])\n\tmovq %%xmm7, 56(%[out])\n\t"
			     "movq %%xmm8, 64(%[out])\n\tmovq %%xmm9, 72(%[out])\n\t"
			     "movq %%xmm10, 80(%[out])\n\tmovq %%xmm11, 88(%[out])\n\t"
			     "movq %%xmm12, 96(%[out])\n\tmovq %%xmm13, 104(%[out])\n\t"
			     "movq %%xmm14, 112(%[out])\n\tmovq %%xmm15, 120(%[out])\n\t"
			     "stmxcsr %[ctl]"
			     : "+a"(ret), [ctl] "+m"(mxcsr)
			     : [in] "r"(in), [out] "r"(out), "D"(arg), "S"(NULL)
			     : "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
			       "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
			       "xmm13", "xmm14", "xmm15");
	out->ctl = mxcsr;
#else
	register long a7 __asm__("a7") = nr;
	register const void *a0 __asm__("a0") = arg;
	register const void *a1 __asm__("a1") = NULL;
	__asm__ __volatile__(
	    "ld t0, 256(%[in])\n\tfscsr t0\n\t"
	    "fld f0, 0(%[in])\n\tfld f1, 8(%[in])\n\tfld f2, 16(%[in])\n\t"
	    "fld f3, 24(%[in])\n\tfld f4, 32(%[in])\n\tfld f5, 40(%[in])\n\t"
	    "fld f6, 48(%[in])\n\tfld f7, 56(%[in])\n\tfld f8, 64(%[in])\n\t"
	    "fld f9, 72(%[in])\n\tfld f10, 80(%[in])\n\tfld f11, 88(%[in])\n\t"
	    "fld f12, 96(%[in])\n\tfld f13, 104(%[in])\n\tfld f14, 112(%[in])\n\t"
	    "fld f15, 120(%[in])\n\tfld f16, 128(%[in])\n\tfld f17, 136(%[in])\n\t"
	    "fld f18, 144(%[in])\n\tfld f19, 152(%[in])\n\tfld f20, 160(%[in])\n\t"
	    "fld f21, 168(%[in])\n\tfld f22, 176(%[in])\n\tfld f23, 184(%[in])\n\t"
	    "fld f24, 192(%[in])\n\tfld f25, 200(%[in])\n\tfld f26, 208(%[in])\n\t"
	    "fld f27, 216(%[in])\n\tfld f28, 224(%[in])\n\tfld f29, 232(%[in])\n\t"
	    "fld f30, 240(%[in])\n\tfld f31, 248(%[in])\n\t"
	    "ecall\n\t"
	    "fsd f0, 0(%[out])\n\tfsd f1, 8(%[out])\n\tfsd f2, 16(%[out])\n\t"
	    "fsd f3, 24(%[out])\n\tfsd f4, 32(%[out])\n\tfsd f5, 40(%[out])\n\t"
	    "fsd f6, 48(%[out])\n\tfsd f7, 56(%[out])\n\tfsd f8, 64(%[out])\n\t"
	    "fsd f9, 72(%[out])\n\tfsd f10, 80(%[out])\n\tfsd f11, 88(%[out])\n\t"
	    "fsd f12, 96(%[out])\n\tfsd f13, 104(%[out])\n\tfsd f14, 112(%[out])\n\t"
	    "fsd f15, 120(%[out])\n\tfsd f16, 128(%[out])\n\tfsd f17, 136(%[out])\n\t"
	    "fsd f18, 144(%[out])\n\tfsd f19, 152(%[out])\n\tfsd f20, 160(%[out])\n\t"
	    "fsd f21, 168(%[out])\n\tfsd f22, 176(%[out])\n\tfsd f23, 184(%[out])\n\t"
	    "fsd f24, 192(%[out])\n\tfsd f25, 200(%[out])\n\tfsd f26, 208(%[out])\n\t"
	    "fsd f27, 216(%[out])\n\tfsd f28, 224(%[out])\n\tfsd f29, 232(%[out])\n\t"
	    "fsd f30, 240(%[out])\n\tfsd f31, 248(%[out])\n\t"
	    "frcsr t0\n\tsd t0, 256(%[out])"
	    : "+r"(a0)
	    : [in] "r"(in), [out] "r"(out), "r"(a7), "r"(a1)
	    : "t0", "memory", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10",
	      "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22",
	      "f23", "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31");
#endif
}

/* A control-register value of process id's round r: a rounding mode, and some flags set. */
static unsigned long fp_control(int id, int r)
{
#if defined(__x86_64__)
	/* Every exception masked (bits 7-12), rounding control 13-14, flags 0-5. */
	return 0x1f80UL | (unsigned long)((id + r) % 4) << 13 | (unsigned long)(r % 64);
#else
	/* frm (bits 5-7: 0-4 are the rounding modes) and fflags (bits 0-4). */
	return (unsigned long)((id + r) % 5) << 5 | (unsigned long)(r % 32);
#endif
}

/* 0 if every round read back what it loaded; else says what differed, once. */
static int fp_check(int id)
{
	const struct timespec ms = {0, 1000000};
	struct fp_image in, out;

	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < FP_REGS; i++)
			in.r[i] = 0x3ff0000000000000UL | (unsigned long)id << 40 |
				  (unsigned long)r << 8 | (unsigned long)i;
		in.ctl = fp_control(id, r);
		if (r % SLEEP_EVERY == SLEEP_EVERY - 1)
			fp_across_syscall(&in, &out, NR_NANOSLEEP, &ms);
		else
			fp_across_syscall(&in, &out, NR_SCHED_YIELD, NULL);
		for (int i = 0; i <= FP_REGS; i++) {
			unsigned long want = i < FP_REGS ? in.r[i] : in.ctl;
			unsigned long got = i < FP_REGS ? out.r[i] : out.ctl;
			if (got == want)
				continue;
			if (i < FP_REGS)
				printf("process %d, round %d: register %d is %#lx, expected %#lx\n",
				       id, r, i, got, want);
			else
				printf(
				    "process %d, round %d: the control register is %#lx, expected "
				    "%#lx\n",
				    id, r, got, want);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	int failed = 0;

	fflush(stdout);
	for (int id = 1; id < PROCESSES; id++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			exit(fp_check(id));
	}
	failed |= fp_check(0);
	for (int status; wait(&status) > 0;)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	printf("%d processes, %d rounds each: FP registers %s\n", PROCESSES, ROUNDS,
	       failed ? "LOST" : "kept");
	return failed;
}

/*
 * Signal handlers as a program sees them: sigaction with and without SA_SIGINFO,
 * SA_RESETHAND and SA_NODEFER; the handler's arguments (the signal, siginfo's
 * code and sender for kill, SIGCHLD's child and status, a fault's address); the
 * mask while a handler runs (sa_mask and the signal itself) and after it returns
 * (the one in the frame, which the handler may change); a signal blocked with
 * sigprocmask staying pending until unblocked; every register and the FP state
 * coming back from a handler that clobbers them; a SIGSEGV handler leaving with
 * siglongjmp; SIGPIPE with a handler (write then fails with EPIPE); and a read
 * on a pipe that a signal interrupts, restarted with SA_RESTART and failing with
 * EINTR without it. The signal for that comes from a child that sleeps briefly
 * and then kills its parent, again and again until the parent's read is over.
 *
 * The registers are loaded and stored by a function in assembly around the kill
 * system call, so that no compiled code runs between: x86_64's general registers
 * (rsp's red zone and the CF and DF flags too), XMM0-15 and MXCSR; riscv64's ra,
 * s0-s11, t0-t6, a1-a7, f0-f31 and fcsr. The handler overwrites all the ones it
 * may, and adds one to one register in its ucontext, which must come back so.
 *
 * userdiff: signal_handlers_get_linux_frames_masks_and_restarts
 * run: /bin/signals
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/*
 * regs_across_kill(in, out, pid, sig): load in[] into the registers, make the
 * kill system call (whose way back runs the handler), store the registers into
 * out[], and give the caller back its FP control register. The layouts: REG_GP general registers
 * (the one at REG_BUMPED the handler increments in its ucontext), then REG_FP FP registers (their
 * low 64 bits), then the FP control register; past those in out[] only, the register that held out
 * (must still), then three of kill's: one it leaves alone (OUT_KEPT's value), the signal, and the
 * result.
 */
#if defined(__x86_64__)
#define REG_GP 11 /* rbx rbp rdx r8 r9 r10 r12 r13 r14, the red zone, CF and DF */
#define REG_BUMPED 6
#define REG_FP 16
static const char *const gp_names[REG_GP] = {"rbx", "rbp", "rdx", "r8",	      "r9",	  "r10",
					     "r12", "r13", "r14", "red zone", "CF and DF"};
#define FP_CONTROL 0x3f80UL /* MXCSR: every exception masked, rounding down */
#define OUT_KEPT(pid) (pid) /* rdi */
__asm__(".text\n"
	".globl regs_across_kill\n"
	"regs_across_kill:\n\t"
	"pushq %rbx\n\tpushq %rbp\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
	"subq $8, %rsp\n\tstmxcsr (%rsp)\n\t"
	"movq %rsi, %r15\n\t"
	"movq %rdx, %rax\n\tmovq %rcx, %rsi\n\tmovq %rdi, %rcx\n\tmovq %rax, %rdi\n\t"
	"movq 72(%rcx), %rax\n\tmovq %rax, -64(%rsp)\n\t"
	"movq 88(%rcx), %xmm0\n\tmovq 96(%rcx), %xmm1\n\tmovq 104(%rcx), %xmm2\n\t"
	"movq 112(%rcx), %xmm3\n\tmovq 120(%rcx), %xmm4\n\tmovq 128(%rcx), %xmm5\n\t"
	"movq 136(%rcx), %xmm6\n\tmovq 144(%rcx), %xmm7\n\tmovq 152(%rcx), %xmm8\n\t"
	"movq 160(%rcx), %xmm9\n\tmovq 168(%rcx), %xmm10\n\tmovq 176(%rcx), %xmm11\n\t"
	"movq 184(%rcx), %xmm12\n\tmovq 192(%rcx), %xmm13\n\tmovq 200(%rcx), %xmm14\n\t"
	"movq 208(%rcx), %xmm15\n\tldmxcsr 216(%rcx)\n\t"
	"movq 0(%rcx), %rbx\n\tmovq 8(%rcx), %rbp\n\tmovq 16(%rcx), %rdx\n\t"
	"movq 24(%rcx), %r8\n\tmovq 32(%rcx), %r9\n\tmovq 40(%rcx), %r10\n\t"
	"movq 48(%rcx), %r12\n\tmovq 56(%rcx), %r13\n\tmovq 64(%rcx), %r14\n\t"
	"movl $62, %eax\n\t" /* kill */
	"stc\n\tstd\n\t"
	"syscall\n\t"
	"pushfq\n\tpopq %rcx\n\tandq $0x401, %rcx\n\tmovq %rcx, 80(%r15)\n\tcld\n\t"
	"movq %rbx, 0(%r15)\n\tmovq %rbp, 8(%r15)\n\tmovq %rdx, 16(%r15)\n\t"
	"movq %r8, 24(%r15)\n\tmovq %r9, 32(%r15)\n\tmovq %r10, 40(%r15)\n\t"
	"movq %r12, 48(%r15)\n\tmovq %r13, 56(%r15)\n\tmovq %r14, 64(%r15)\n\t"
	"movq -64(%rsp), %rcx\n\tmovq %rcx, 72(%r15)\n\t"
	"movq %xmm0, 88(%r15)\n\tmovq %xmm1, 96(%r15)\n\tmovq %xmm2, 104(%r15)\n\t"
	"movq %xmm3, 112(%r15)\n\tmovq %xmm4, 120(%r15)\n\tmovq %xmm5, 128(%r15)\n\t"
	"movq %xmm6, 136(%r15)\n\tmovq %xmm7, 144(%r15)\n\tmovq %xmm8, 152(%r15)\n\t"
	"movq %xmm9, 160(%r15)\n\tmovq %xmm10, 168(%r15)\n\tmovq %xmm11, 176(%r15)\n\t"
	"movq %xmm12, 184(%r15)\n\tmovq %xmm13, 192(%r15)\n\tmovq %xmm14, 200(%r15)\n\t"
	"movq %xmm15, 208(%r15)\n\tstmxcsr 216(%r15)\n\t"
	"movq %r15, 224(%r15)\n\tmovq %rdi, 232(%r15)\n\tmovq %rsi, 240(%r15)\n\t"
	"movq %rax, 248(%r15)\n\t"
	"ldmxcsr (%rsp)\n\taddq $8, %rsp\n\t"
	"popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbp\n\tpopq %rbx\n\t"
	"ret\n");

/* Everything the handler may change without restoring it, changed. */
static void clobber_registers(void)
{
	static const unsigned junk_mxcsr = 0x5f80; /* rounding toward zero */
	__asm__ __volatile__(
	    "movq $-1, %%rax\n\tmovq %%rax, %%rcx\n\tmovq %%rax, %%rdx\n\tmovq %%rax, %%rsi\n\t"
	    "movq %%rax, %%rdi\n\tmovq %%rax, %%r8\n\tmovq %%rax, %%r9\n\tmovq %%rax, %%r10\n\t"
	    "movq %%rax, %%r11\n\t"
	    "pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm1, %%xmm1\n\tpcmpeqd %%xmm2, %%xmm2\n\t"
	    "pcmpeqd %%xmm3, %%xmm3\n\tpcmpeqd %%xmm4, %%xmm4\n\tpcmpeqd %%xmm5, %%xmm5\n\t"
	    "pcmpeqd %%xmm6, %%xmm6\n\tpcmpeqd %%xmm7, %%xmm7\n\tpcmpeqd %%xmm8, %%xmm8\n\t"
	    "pcmpeqd %%xmm9, %%xmm9\n\tpcmpeqd %%xmm10, %%xmm10\n\tpcmpeqd %%xmm11, %%xmm11\n\t"
	    "pcmpeqd %%xmm12, %%xmm12\n\tpcmpeqd %%xmm13, %%xmm13\n\tpcmpeqd %%xmm14, %%xmm14\n\t"
	    "pcmpeqd %%xmm15, %%xmm15\n\tldmxcsr %[mx]"
	    :
	    : [mx] "m"(junk_mxcsr)
	    : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2",
	      "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
	      "xmm13", "xmm14", "xmm15", "cc", "memory");
}

static unsigned long *bumped_register(ucontext_t *uc)
{
	return (unsigned long *)&uc->uc_mcontext.gregs[REG_R12];
}

static unsigned fp_control_now(void)
{
	unsigned mxcsr;
	__asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
	return mxcsr;
}
#define FP_CONTROL_NAME "MXCSR"

#elif defined(__riscv) && __riscv_xlen == 64
#define REG_GP 24 /* ra s0 s2-s11 t0-t6 a2-a6 */
#define REG_BUMPED 11
#define REG_FP 32
static const char *const gp_names[REG_GP] = {"ra", "s0", "s2",	"s3",  "s4", "s5", "s6", "s7",
					     "s8", "s9", "s10", "s11", "t0", "t1", "t2", "t3",
					     "t4", "t5", "t6",	"a2",  "a3", "a4", "a5", "a6"};
#define FP_CONTROL 0x6aUL   /* fcsr: rounding up (frm 3), some flags */
#define OUT_KEPT(pid) 129UL /* a7: kill's number */
__asm__(".text\n"
	".globl regs_across_kill\n"
	"regs_across_kill:\n\t"
	"addi sp, sp, -112\n\t"
	"sd ra, 0(sp)\n\tsd s0, 8(sp)\n\tsd s1, 16(sp)\n\tsd s2, 24(sp)\n\tsd s3, 32(sp)\n\t"
	"sd s4, 40(sp)\n\tsd s5, 48(sp)\n\tsd s6, 56(sp)\n\tsd s7, 64(sp)\n\tsd s8, 72(sp)\n\t"
	"sd s9, 80(sp)\n\tsd s10, 88(sp)\n\tsd s11, 96(sp)\n\tfrcsr t0\n\tsd t0, 104(sp)\n\t"
	"mv s1, a1\n\tmv t6, a0\n\tmv a0, a2\n\tmv a1, a3\n\tli a7, 129\n\t" /* kill */
	"ld t0, 448(t6)\n\tfscsr t0\n\t"
	"fld f0, 192(t6)\n\tfld f1, 200(t6)\n\tfld f2, 208(t6)\n\tfld f3, 216(t6)\n\t"
	"fld f4, 224(t6)\n\tfld f5, 232(t6)\n\tfld f6, 240(t6)\n\tfld f7, 248(t6)\n\t"
	"fld f8, 256(t6)\n\tfld f9, 264(t6)\n\tfld f10, 272(t6)\n\tfld f11, 280(t6)\n\t"
	"fld f12, 288(t6)\n\tfld f13, 296(t6)\n\tfld f14, 304(t6)\n\tfld f15, 312(t6)\n\t"
	"fld f16, 320(t6)\n\tfld f17, 328(t6)\n\tfld f18, 336(t6)\n\tfld f19, 344(t6)\n\t"
	"fld f20, 352(t6)\n\tfld f21, 360(t6)\n\tfld f22, 368(t6)\n\tfld f23, 376(t6)\n\t"
	"fld f24, 384(t6)\n\tfld f25, 392(t6)\n\tfld f26, 400(t6)\n\tfld f27, 408(t6)\n\t"
	"fld f28, 416(t6)\n\tfld f29, 424(t6)\n\tfld f30, 432(t6)\n\tfld f31, 440(t6)\n\t"
	"ld ra, 0(t6)\n\tld s0, 8(t6)\n\tld s2, 16(t6)\n\tld s3, 24(t6)\n\tld s4, 32(t6)\n\t"
	"ld s5, 40(t6)\n\tld s6, 48(t6)\n\tld s7, 56(t6)\n\tld s8, 64(t6)\n\tld s9, 72(t6)\n\t"
	"ld s10, 80(t6)\n\tld s11, 88(t6)\n\tld t0, 96(t6)\n\tld t1, 104(t6)\n\t"
	"ld t2, 112(t6)\n\tld t3, 120(t6)\n\tld t4, 128(t6)\n\tld t5, 136(t6)\n\t"
	"ld a2, 152(t6)\n\tld a3, 160(t6)\n\tld a4, 168(t6)\n\tld a5, 176(t6)\n\t"
	"ld a6, 184(t6)\n\tld t6, 144(t6)\n\t"
	"ecall\n\t"
	"sd ra, 0(s1)\n\tsd s0, 8(s1)\n\tsd s2, 16(s1)\n\tsd s3, 24(s1)\n\tsd s4, 32(s1)\n\t"
	"sd s5, 40(s1)\n\tsd s6, 48(s1)\n\tsd s7, 56(s1)\n\tsd s8, 64(s1)\n\tsd s9, 72(s1)\n\t"
	"sd s10, 80(s1)\n\tsd s11, 88(s1)\n\tsd t0, 96(s1)\n\tsd t1, 104(s1)\n\t"
	"sd t2, 112(s1)\n\tsd t3, 120(s1)\n\tsd t4, 128(s1)\n\tsd t5, 136(s1)\n\t"
	"sd t6, 144(s1)\n\tsd a2, 152(s1)\n\tsd a3, 160(s1)\n\tsd a4, 168(s1)\n\t"
	"sd a5, 176(s1)\n\tsd a6, 184(s1)\n\t"
	"fsd f0, 192(s1)\n\tfsd f1, 200(s1)\n\tfsd f2, 208(s1)\n\tfsd f3, 216(s1)\n\t"
	"fsd f4, 224(s1)\n\tfsd f5, 232(s1)\n\tfsd f6, 240(s1)\n\tfsd f7, 248(s1)\n\t"
	"fsd f8, 256(s1)\n\tfsd f9, 264(s1)\n\tfsd f10, 272(s1)\n\tfsd f11, 280(s1)\n\t"
	"fsd f12, 288(s1)\n\tfsd f13, 296(s1)\n\tfsd f14, 304(s1)\n\tfsd f15, 312(s1)\n\t"
	"fsd f16, 320(s1)\n\tfsd f17, 328(s1)\n\tfsd f18, 336(s1)\n\tfsd f19, 344(s1)\n\t"
	"fsd f20, 352(s1)\n\tfsd f21, 360(s1)\n\tfsd f22, 368(s1)\n\tfsd f23, 376(s1)\n\t"
	"fsd f24, 384(s1)\n\tfsd f25, 392(s1)\n\tfsd f26, 400(s1)\n\tfsd f27, 408(s1)\n\t"
	"fsd f28, 416(s1)\n\tfsd f29, 424(s1)\n\tfsd f30, 432(s1)\n\tfsd f31, 440(s1)\n\t"
	"frcsr t0\n\tsd t0, 448(s1)\n\t"
	"sd s1, 456(s1)\n\tsd a7, 464(s1)\n\tsd a1, 472(s1)\n\tsd a0, 480(s1)\n\t"
	"ld ra, 0(sp)\n\tld s0, 8(sp)\n\tld s1, 16(sp)\n\tld s2, 24(sp)\n\tld s3, 32(sp)\n\t"
	"ld s4, 40(sp)\n\tld s5, 48(sp)\n\tld s6, 56(sp)\n\tld s7, 64(sp)\n\tld s8, 72(sp)\n\t"
	"ld s9, 80(sp)\n\tld s10, 88(sp)\n\tld s11, 96(sp)\n\tld t0, 104(sp)\n\tfscsr t0\n\t"
	"addi sp, sp, 112\n\t"
	"ret\n");

/* Everything the handler may change without restoring it, changed. */
static void clobber_registers(void)
{
	__asm__ __volatile__(
	    "li t0, -1\n\tmv t1, t0\n\tmv t2, t0\n\tmv t3, t0\n\tmv t4, t0\n\tmv t5, t0\n\t"
	    "mv t6, t0\n\tmv a0, t0\n\tmv a1, t0\n\tmv a2, t0\n\tmv a3, t0\n\tmv a4, t0\n\t"
	    "mv a5, t0\n\tmv a6, t0\n\tmv a7, t0\n\t"
	    "fmv.d.x ft0, t0\n\tfmv.d.x ft1, t0\n\tfmv.d.x ft2, t0\n\tfmv.d.x ft3, t0\n\t"
	    "fmv.d.x ft4, t0\n\tfmv.d.x ft5, t0\n\tfmv.d.x ft6, t0\n\tfmv.d.x ft7, t0\n\t"
	    "fmv.d.x ft8, t0\n\tfmv.d.x ft9, t0\n\tfmv.d.x ft10, t0\n\tfmv.d.x ft11, t0\n\t"
	    "fmv.d.x fa0, t0\n\tfmv.d.x fa1, t0\n\tfmv.d.x fa2, t0\n\tfmv.d.x fa3, t0\n\t"
	    "fmv.d.x fa4, t0\n\tfmv.d.x fa5, t0\n\tfmv.d.x fa6, t0\n\tfmv.d.x fa7, t0\n\t"
	    "li t0, 0x3f\n\tfscsr t0" /* rounding toward zero, every flag */
	    :
	    :
	    : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
	      "a7", "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "ft8", "ft9", "ft10",
	      "ft11", "fa0", "fa1", "fa2", "fa3", "fa4", "fa5", "fa6", "fa7", "memory");
}

static unsigned long *bumped_register(ucontext_t *uc)
{
	return &uc->uc_mcontext.__gregs[27]; /* x27, s11 */
}

static unsigned fp_control_now(void)
{
	unsigned long fcsr;
	__asm__ __volatile__("frcsr %0" : "=r"(fcsr));
	return (unsigned)fcsr;
}
#define FP_CONTROL_NAME "fcsr"
#else
#error "signals: x86_64 or riscv64"
#endif

#define REG_CONTROL (REG_GP + REG_FP)
#define REG_OUT_BASE (REG_CONTROL + 1)
#define REG_OUT_KEPT (REG_CONTROL + 2)
#define REG_OUT_SIG (REG_CONTROL + 3)
#define REG_OUT_RESULT (REG_CONTROL + 4)
#define REG_OUT_WORDS (REG_CONTROL + 5)

void regs_across_kill(const unsigned long *in, unsigned long *out, long pid, long sig);

static volatile sig_atomic_t handled;
static volatile int last_sig;
static siginfo_t last_info;

/* The order in which handlers entered and left, for SA_NODEFER: "+1 -1 ...". */
static char trace[64];
static volatile int depth, raises;

static void name_errno(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "ok");
}

static void show_status(const char *who, int status)
{
	if (WIFEXITED(status))
		printf("%s exited with status %d\n", who, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s was killed by signal %d (%s)\n", who, WTERMSIG(status),
		       sigabbrev_np(WTERMSIG(status)));
	else
		printf("%s ended otherwise: %#x\n", who, status);
}

static void set_handler(int sig, void (*fn)(int), int flags, const sigset_t *mask)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	if (mask)
		sa.sa_mask = *mask;
	else
		sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		perror("sigaction");
}

static void set_info_handler(int sig, void (*fn)(int, siginfo_t *, void *), int flags,
			     const sigset_t *mask)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	if (mask)
		sa.sa_mask = *mask;
	else
		sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		perror("sigaction");
}

static bool blocked_now(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

static void on_plain(int sig)
{
	last_sig = sig;
	handled++;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	last_sig = sig;
	last_info = *si;
	handled++;
}

/* A handler without SA_SIGINFO gets the signal; one with it, siginfo's code and sender. */
static void test_arguments(void)
{
	set_handler(SIGUSR1, on_plain, 0, NULL);
	handled = 0;
	raise(SIGUSR1);
	printf("plain handler: ran %d time(s), signal %s\n", handled, sigabbrev_np(last_sig));

	set_info_handler(SIGUSR2, on_info, 0, NULL);
	handled = 0;
	kill(getpid(), SIGUSR2);
	printf("SA_SIGINFO handler: ran %d time(s), signal %s, si_signo %s, si_code %s, "
	       "si_pid ours %s\n",
	       handled, sigabbrev_np(last_sig), sigabbrev_np(last_info.si_signo),
	       last_info.si_code == SI_USER ? "SI_USER" : "other",
	       yes(last_info.si_pid == getpid()));
	set_handler(SIGUSR1, SIG_DFL, 0, NULL);
	set_handler(SIGUSR2, SIG_DFL, 0, NULL);
}

static bool mask_had_usr1, mask_had_usr2, mask_had_term, frame_had_hup, frame_had_usr1;

static void on_mask(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)si;
	mask_had_usr1 = blocked_now(SIGUSR1);
	mask_had_usr2 = blocked_now(SIGUSR2);
	mask_had_term = blocked_now(SIGTERM);
	frame_had_hup = sigismember(&uc->uc_sigmask, SIGHUP);
	frame_had_usr1 = sigismember(&uc->uc_sigmask, SIGUSR1);
	/* sigreturn takes the mask from the frame: this one stays blocked after. */
	sigaddset(&uc->uc_sigmask, SIGTERM);
	last_sig = sig;
	handled++;
}

/*
 * While a handler runs, its sa_mask and its own signal are blocked on top of
 * what was; the frame holds the mask from before; sigreturn restores the frame's.
 */
static void test_masks(void)
{
	sigset_t set, usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	set_info_handler(SIGUSR1, on_mask, 0, &usr2);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	handled = 0;
	kill(getpid(), SIGUSR1);
	printf("in the handler: SIGUSR1 blocked %s, SIGUSR2 (sa_mask) blocked %s, SIGTERM blocked "
	       "%s\n",
	       yes(mask_had_usr1), yes(mask_had_usr2), yes(mask_had_term));
	printf("the frame's mask: SIGHUP %s, SIGUSR1 %s\n", yes(frame_had_hup),
	       yes(frame_had_usr1));
	printf("after the handler: SIGUSR1 blocked %s, SIGUSR2 blocked %s, SIGHUP blocked %s, "
	       "SIGTERM (added in the frame) blocked %s\n",
	       yes(blocked_now(SIGUSR1)), yes(blocked_now(SIGUSR2)), yes(blocked_now(SIGHUP)),
	       yes(blocked_now(SIGTERM)));
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);

	/* Blocked: pending, not delivered, until unblocked. */
	set_handler(SIGUSR2, on_plain, 0, NULL);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	handled = 0;
	raise(SIGUSR2);
	sigset_t pending;
	sigpending(&pending);
	printf("blocked SIGUSR2 raised: handler ran %d time(s), pending %s\n", handled,
	       yes(sigismember(&pending, SIGUSR2)));
	sigprocmask(SIG_UNBLOCK, &usr2, NULL);
	sigpending(&pending);
	printf("unblocked: handler ran %d time(s), pending %s\n", handled,
	       yes(sigismember(&pending, SIGUSR2)));
	set_handler(SIGUSR1, SIG_DFL, 0, NULL);
	set_handler(SIGUSR2, SIG_DFL, 0, NULL);
}

static void on_nest(int sig)
{
	size_t n = strlen(trace);
	int d = ++depth;
	snprintf(trace + n, sizeof(trace) - n, "+%d ", d);
	if (raises++ == 0)
		raise(sig);
	n = strlen(trace);
	snprintf(trace + n, sizeof(trace) - n, "-%d ", d);
	depth--;
}

/* A signal raised in its own handler: nested with SA_NODEFER, after it returns without. */
static void test_nodefer_and_resethand(void)
{
	const int flags[2] = {0, SA_NODEFER};
	for (int i = 0; i < 2; i++) {
		set_handler(SIGUSR1, on_nest, flags[i], NULL);
		trace[0] = 0;
		depth = raises = 0;
		raise(SIGUSR1);
		printf("raised in its handler%s: %s\n", flags[i] ? " with SA_NODEFER" : "", trace);
	}
	set_handler(SIGUSR1, SIG_DFL, 0, NULL);

	/* SA_RESETHAND: the first one runs the handler, the second the default action. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		set_handler(SIGUSR2, on_plain, SA_RESETHAND, NULL);
		handled = 0;
		raise(SIGUSR2);
		struct sigaction now;
		sigaction(SIGUSR2, NULL, &now);
		printf("SA_RESETHAND: handler ran %d time(s), disposition now %s\n", handled,
		       now.sa_handler == SIG_DFL ? "SIG_DFL" : "the handler");
		fflush(stdout);
		raise(SIGUSR2);
		printf("SA_RESETHAND: survived a second SIGUSR2\n");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	show_status("SA_RESETHAND's child", status);
}

static unsigned long reg_in[REG_OUT_WORDS], reg_out[REG_OUT_WORDS];
static unsigned handler_fp_control;
static bool handler_stack_aligned;
static volatile bool bump_register; /* only around regs_across_kill */

static void on_regs(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	handler_fp_control = fp_control_now();
	/* The frame pointer is the stack pointer at entry, less the return address on x86_64. */
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	handler_stack_aligned = fp % 16 == 0;
	if (bump_register)
		++*bumped_register(ucv);
	clobber_registers();
	handled++;
}

/* A double the compiler keeps in a register across the kill call and its handler. */
static double __attribute__((noinline)) fp_in_flight(double a)
{
	double x = a * 3.0;
	kill(getpid(), SIGUSR1);
	return x / 3.0 + a;
}

/* Every register as it was before the handler, but for what the handler changed in its frame. */
static void test_registers(void)
{
	set_info_handler(SIGUSR1, on_regs, 0, NULL);
	for (int i = 0; i < REG_CONTROL; i++)
		reg_in[i] = 0x1234567800000000UL + (unsigned long)i * 0x0101010101UL;
#if defined(__x86_64__)
	reg_in[REG_GP - 1] = 0x401; /* CF and DF, which regs_across_kill sets */
#endif
	reg_in[REG_CONTROL] = FP_CONTROL;
	handled = 0;
	bump_register = true;
	regs_across_kill(reg_in, reg_out, getpid(), SIGUSR1);
	bump_register = false;

	int bad = 0;
	for (int i = 0; i <= REG_CONTROL; i++) {
		unsigned long want = reg_in[i] + (i == REG_BUMPED);
		if (reg_out[i] == want)
			continue;
		if (i < REG_GP)
			printf("after the handler: %s is %#lx, expected %#lx\n", gp_names[i],
			       reg_out[i], want);
		else if (i < REG_CONTROL)
			printf("after the handler: FP register %d is %#lx, expected %#lx\n",
			       i - REG_GP, reg_out[i], want);
		else
			printf("after the handler: %s is %#lx, expected %#lx\n", FP_CONTROL_NAME,
			       reg_out[i], want);
		bad++;
	}
	if (reg_out[REG_OUT_BASE] != (uintptr_t)reg_out ||
	    reg_out[REG_OUT_KEPT] != (unsigned long)OUT_KEPT(getpid()) ||
	    reg_out[REG_OUT_SIG] != SIGUSR1 || reg_out[REG_OUT_RESULT] != 0) {
		printf("after the handler: kill's registers changed\n");
		bad++;
	}
	printf("registers across a handler that clobbers them: handler ran %d time(s), %s\n",
	       handled,
	       bad ? "some lost" : "all kept, and the one it changed in its frame changed");
	printf("handler's stack aligned as after a call: %s\n", yes(handler_stack_aligned));
#if defined(__x86_64__)
	/* Linux gives a handler a fresh x87/SSE state; riscv64 Linux leaves fcsr as it was. */
	printf("handler's MXCSR: %#x\n", handler_fp_control);
#endif
	printf("a double across a handler: %.17g\n", fp_in_flight(0.1));
	set_handler(SIGUSR1, SIG_DFL, 0, NULL);
}

static sigjmp_buf segv_env;
static void *volatile segv_addr;
static volatile int segv_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	segv_addr = si->si_addr;
	segv_code = si->si_code;
	siglongjmp(segv_env, 1);
}

static const char *segv_code_name(int code)
{
	return code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : "other";
}

/* A fault's handler gets the address, and may leave by siglongjmp (which unblocks SIGSEGV). */
static void test_segv(void)
{
	set_info_handler(SIGSEGV, on_segv, 0, NULL);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	char *const targets[2] = {gone + 123, ro + 7};
	for (int i = 0; i < 2; i++) {
		segv_addr = NULL;
		if (!sigsetjmp(segv_env, 1)) {
			*(volatile char *)targets[i] = 1;
			printf("write to %s: no fault\n",
			       i ? "a read-only page" : "an unmapped page");
			continue;
		}
		printf("write to %s: SIGSEGV, %s, si_addr the address written %s, SIGSEGV blocked "
		       "after siglongjmp %s\n",
		       i ? "a read-only page" : "an unmapped page", segv_code_name(segv_code),
		       yes(segv_addr == targets[i]), yes(blocked_now(SIGSEGV)));
	}
	munmap(ro, 4096);
	set_handler(SIGSEGV, SIG_DFL, 0, NULL);
}

/* A child's exit sends SIGCHLD, with its pid and status, while sigsuspend waits for it. */
static void test_sigchld(void)
{
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	set_info_handler(SIGCHLD, on_info, 0, NULL);
	sigprocmask(SIG_BLOCK, &chld, &old);
	handled = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	sigset_t wait_mask = old;
	sigdelset(&wait_mask, SIGCHLD);
	int ret = 0;
	while (!handled)
		ret = sigsuspend(&wait_mask);
	printf("sigsuspend: %s\n", ret < 0 ? strerrorname_np(errno) : "returned 0");
	int status;
	waitpid(pid, &status, 0);
	printf("SIGCHLD: si_signo %s, si_code %s, si_status %d, si_pid the child %s\n",
	       sigabbrev_np(last_info.si_signo),
	       last_info.si_code == CLD_EXITED ? "CLD_EXITED" : "other", last_info.si_status,
	       yes(last_info.si_pid == pid));
	sigprocmask(SIG_SETMASK, &old, NULL);
	set_handler(SIGCHLD, SIG_DFL, 0, NULL);
}

/* A write to a pipe without readers: SIGPIPE to the handler, and the write fails. */
static void test_sigpipe(void)
{
	int p[2];
	set_info_handler(SIGPIPE, on_info, 0, NULL);
	pipe(p);
	close(p[0]);
	handled = 0;
	long ret = write(p[1], "x", 1);
	name_errno("write to a pipe without readers", ret);
	printf("SIGPIPE: handler ran %d time(s), si_signo %s, si_code %s, si_pid ours %s\n",
	       handled, sigabbrev_np(last_info.si_signo),
	       last_info.si_code == SI_USER ? "SI_USER" : "other",
	       yes(last_info.si_pid == getpid()));
	close(p[1]);
	set_handler(SIGPIPE, SIG_DFL, 0, NULL);
}

#define KICK_US 20000 /* between the child's signals */
#define KICKS_BEFORE_DATA 5
#define KICKS_MAX 100 /* then it gives up and exits: a read never interrupted sees the end */

/*
 * A read on an empty pipe, interrupted by SIGUSR1 from a child that sends one
 * every KICK_US until the parent kills it: without SA_RESTART the read fails
 * with EINTR; with it, the read goes on through each handler until the child
 * writes a byte. A kernel that never interrupts the read gets end of file,
 * when the child gives up, rather than a hang.
 */
static void test_interrupted_read(bool restart)
{
	int data[2];
	pipe(data);
	set_handler(SIGUSR1, on_plain, restart ? SA_RESTART : 0, NULL);
	pid_t parent = getpid();
	handled = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(data[0]);
		for (int i = 0; i < KICKS_MAX; i++) {
			usleep(KICK_US);
			if (kill(parent, SIGUSR1))
				break;
			if (restart && i == KICKS_BEFORE_DATA)
				write(data[1], "d", 1);
		}
		_exit(0);
	}
	close(data[1]);
	char c = 0;
	long n = read(data[0], &c, 1);
	int err = errno;
	kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n < 0)
		printf("read interrupted%s: %s, handler ran %s\n",
		       restart ? " with SA_RESTART" : "", strerrorname_np(err), yes(handled > 0));
	else
		printf("read interrupted%s: %ld byte(s), '%c', handler ran %s\n",
		       restart ? " with SA_RESTART" : "", n, c, yes(handled > 0));
	close(data[0]);
	set_handler(SIGUSR1, SIG_DFL, 0, NULL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_arguments();
	test_masks();
	test_nodefer_and_resethand();
	test_registers();
	test_segv();
	test_sigchld();
	test_sigpipe();
	test_interrupted_read(false);
	test_interrupted_read(true);
	return 0;
}

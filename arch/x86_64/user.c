/*
 * Ring 3: the SYSCALL MSRs, the first ways out to user mode (arch_enter_user, and
 * arch_return_to_user for fork's child), the user's FS base and x87/SSE state as
 * fork hands them down, and the checks every way back out makes on a trap frame
 * the kernel may have rewritten.
 *
 * A trap frame from ring 3 can hold anything a system call or the signal code
 * wrote into it, so before it is restored the privilege fields are forced to
 * ring 3's (CS, SS, and RFLAGS with IF on and IOPL 0: the user keeps only the
 * flags POPF would let it change) and the return address must be canonical,
 * which IRETQ and SYSRETQ both check in ring 0: a #GP there would be the
 * kernel's. A non-canonical one is what a program gets for jumping there, a
 * SIGSEGV, as on Linux. SYSRETQ is cheaper than IRETQ but restores less: rip
 * from rcx, RFLAGS from r11, without RF, and TF traps at once in ring 3; so it
 * is used only when the frame still says what SYSCALL brought.
 */
#include <grace/arch.h>
#include <grace/pgtable.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/syscall.h>
#include <asm/irq.h>
#include <asm/memory.h>
#include <asm/switch.h>
#include "processor.h"
#include "x86_64.h"

/*
 * What SYSCALL clears in RFLAGS (Linux masks the same): IF, so the entry runs
 * uninterrupted until it is on the kernel stack; DF and AC, which the kernel's
 * code and SMAP assume clear; TF, so the entry is not single-stepped; NT, which
 * would make the kernel's next IRETQ a #GP; IOPL, which ring 3 cannot set anyway.
 */
#define SYSCALL_RFLAGS_MASK                                                                        \
	(RFLAGS_IF | RFLAGS_DF | RFLAGS_AC | RFLAGS_TF | RFLAGS_NT | RFLAGS_IOPL)
/* The flags a program may set (POPF in ring 3 changes these and no others). */
#define USER_RFLAGS                                                                                \
	(RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_TF | RFLAGS_DF |       \
	 RFLAGS_OF | RFLAGS_NT | RFLAGS_RF | RFLAGS_AC | RFLAGS_ID)
/*
 * SYSRETQ only below the last user page: a SYSCALL that ends that page leaves a
 * non-canonical rcx, and Intel's SYSRETQ to it raises #GP in ring 0, on the
 * user's rsp (why Linux's TASK_SIZE_MAX stops a page short). IRETQ takes those.
 */
#define SYSRET_RIP_END (USER_VA_END - PAGE_SIZE)

void x86_syscall_entry(void);
void __noreturn x86_enter_user(uintptr_t pc, uintptr_t sp, uintptr_t stack_top);
void __noreturn x86_return_to_user(const struct regs *regs, uintptr_t stack_top);

static bool canonical(u64 va)
{
	return (u64)((s64)(va << 16) >> 16) == va;
}

void x86_user_init_cpu(void)
{
	x86_fpu_init_cpu();
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	wrmsr(MSR_STAR, (u64)USER_BASE_SEL << 48 | (u64)KERNEL_CS << 32);
	wrmsr(MSR_LSTAR, (uintptr_t)x86_syscall_entry);
	wrmsr(MSR_SFMASK, SYSCALL_RFLAGS_MASK);
	/* Every user thread's GS base: SWAPGS puts it in place on the way out. */
	wrmsr(MSR_KERNEL_GS_BASE, 0);
}

/*
 * The last step of every way out to ring 3 (a system call, a trap from ring 3,
 * arch_enter_user), interrupts off: the generic exit work, then the frame made
 * restorable. true if SYSRETQ can restore it.
 */
bool x86_exit_to_user(struct regs *regs)
{
	for (;;) {
		exit_to_user_mode(regs);
		regs->cs = USER_CS;
		regs->ss = USER_DS;
		regs->rflags = (regs->rflags & USER_RFLAGS) | RFLAGS_IF | RFLAGS_FIXED;
		if (canonical(regs->rip))
			break;
		arch_irq_enable();
		user_exception(regs, SIGSEGV, "general protection fault (non-canonical return)");
		arch_irq_disable();
	}
	return regs->rcx == regs->rip && regs->r11 == regs->rflags && regs->rip < SYSRET_RIP_END &&
	       !(regs->rflags & (RFLAGS_RF | RFLAGS_TF));
}

/* From syscall.S, on the thread's kernel stack, interrupts off. */
bool x86_syscall(struct regs *regs)
{
	arch_irq_enable();
	syscall_entry(regs);
	arch_irq_disable();
	return x86_exit_to_user(regs);
}

void arch_enter_user(uintptr_t pc, uintptr_t sp)
{
	struct arch_context *ctx = &current->ctx;

	/*
	 * Interrupts off from here to IRETQ: the frame is built on this very stack,
	 * and the fresh registers are this thread's the moment ctx->user says so
	 * (a switch in between would save the old ones over them).
	 */
	arch_irq_disable();
	x86_fpu_init_state(&ctx->fx);
	x86_fpu_restore(&ctx->fx);
	ctx->fs_base = 0;
	wrmsr(MSR_FS_BASE, 0);
	ctx->user = true;
	x86_set_kernel_stack(ctx->stack_top);
	x86_enter_user(pc, sp, ctx->stack_top);
}

void arch_return_to_user(const struct regs *regs)
{
	struct arch_context *ctx = &current->ctx;

	/* Its x87/SSE registers and FS base are live since its switch-in: arch_user_fork's. */
	BUG_ON(!ctx->user);
	arch_irq_disable();
	x86_set_kernel_stack(ctx->stack_top);
	x86_return_to_user(regs, ctx->stack_top);
}

/*
 * The caller is a user thread in a system call: its x87/SSE registers are live
 * in the CPU, not in its ctx, so they are saved straight into the child's
 * image, with interrupts off so that a switch cannot come between.
 */
void arch_user_fork(struct task *child)
{
	BUG_ON(!current->ctx.user);
	unsigned long flags = arch_irq_save();

	x86_fpu_save(&child->ctx.fx);
	child->ctx.fs_base = current->ctx.fs_base;
	child->ctx.user = true;
	arch_irq_restore(flags);
}

/*
 * regs is unused: the FS base is not in the trap frame. The caller has checked
 * tls against USER_VA_END (arch_prctl returns -EPERM past it), which leaves it
 * canonical, as WRMSR needs: a non-canonical base is a #GP in ring 0.
 */
void arch_set_user_tls(struct regs *regs, uintptr_t tls)
{
	(void)regs;
	/* Interrupts off: a switch must not find the MSR and ctx->fs_base apart. */
	unsigned long flags = arch_irq_save();

	BUG_ON(!canonical(tls));
	current->ctx.fs_base = tls;
	wrmsr(MSR_FS_BASE, tls);
	arch_irq_restore(flags);
}

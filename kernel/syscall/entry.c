/*
 * The generic half of every trap from user mode (grace/syscall.h): system-call
 * dispatch through syscall_table, faults and exceptions that end the program,
 * and the work done on the way back to user mode.
 *
 * Each CPU counts the calls it dispatches, by number, in its own array, so the
 * count costs a system call no shared cache line; `syscalls` at the prompt sums
 * them. A number with no handler is counted like any other and returns -ENOSYS,
 * so the listing shows what programs asked for and did not get.
 *
 * Signals are delivered on the way back to user mode (kernel/proc/signal.c). A
 * fault's SIGSEGV, an illegal instruction's SIGILL and the others the kernel
 * raises itself are sent like any other: a handler runs, and without one the
 * default action ends the program (Linux adds a core dump, which there is
 * nowhere to write).
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/syscall.h>
#include <grace/vma.h>
#include <asm/irq.h>
#include <asm/unistd.h>
#include "syscall_internal.h"

/* Numbers at or past NR_SYSCALLS are counted in the last slot. */
struct syscall_counts {
	u64 calls[NR_SYSCALLS + 1];
};
static DEFINE_PER_CPU(struct syscall_counts, syscall_counts);

void syscall_entry(struct regs *regs)
{
	unsigned long nr = syscall_nr(regs);
	syscall_fn fn = nr < NR_SYSCALLS ? syscall_table[nr] : NULL;

	current->user_regs = regs;
	preempt_disable();
	this_cpu(syscall_counts).calls[MIN(nr, (unsigned long)NR_SYSCALLS)]++;
	preempt_enable();
	long ret = fn ? fn(syscall_arg(regs, 0), syscall_arg(regs, 1), syscall_arg(regs, 2),
			   syscall_arg(regs, 3), syscall_arg(regs, 4), syscall_arg(regs, 5))
		      : -ENOSYS;
	syscall_set_return(regs, ret);
	/* Interrupted by a signal: exit_to_user_mode() restarts it or makes it -EINTR. */
	current->syscall_restart = ret == -ERESTARTSYS && nr != NR_rt_sigreturn;
}

u64 syscall_count(unsigned nr)
{
	u64 sum = 0;
	unsigned cpu;
	for_each_online_cpu(cpu)
		sum += per_cpu(syscall_counts, cpu).calls[MIN(nr, NR_SYSCALLS)];
	return sum;
}

bool syscall_implemented(unsigned nr)
{
	return nr < NR_SYSCALLS && syscall_table[nr];
}

const struct syscall_meta *syscall_meta(unsigned nr)
{
	return nr < NR_SYSCALLS ? syscall_meta_table[nr] : NULL;
}

void user_signal_force(int sig, int code, uintptr_t addr)
{
	struct ksiginfo info = {.code = code, .addr = addr};
	signal_force(sig, &info);
}

void user_page_fault(struct regs *regs, uintptr_t addr, unsigned access)
{
	struct vma v;
	if (!handle_page_fault(regs, addr, access))
		return;
	struct process *p = current_process();
	bool mapped = vma_lookup(p->mm, addr, &v);
	/* Linux's show_signal_msg() line (its x86 error code left out), when no handler will run.
	 */
	if (!signal_handled(SIGSEGV))
		pr_info("%s[%d]: segfault at %lx ip %016lx sp %016lx (%s)\n", p->comm,
			current_thread()->tid, (unsigned long)addr, (unsigned long)regs_pc(regs),
			(unsigned long)regs_user_sp(regs),
			access == FAULT_EXEC	? "exec"
			: access == FAULT_WRITE ? "write"
						: "read");
	user_signal_force(SIGSEGV, mapped ? SEGV_ACCERR : SEGV_MAPERR, addr);
}

/* The si_code of each signal's commonest cause, as Linux's traps give it. */
static int exception_code(int sig)
{
	switch (sig) {
	case SIGILL:
		return ILL_ILLOPC;
	case SIGFPE:
		return FPE_INTDIV;
	case SIGBUS:
		return BUS_ADRALN;
	case SIGTRAP:
		return TRAP_BRKPT;
	default:
		return SI_KERNEL;
	}
}

void user_exception(struct regs *regs, int sig, const char *what)
{
	struct process *p = current_process();
	if (!signal_handled(sig))
		pr_info("%s[%d]: %s at ip %016lx sp %016lx: %s\n", p->comm, current_thread()->tid,
			what, (unsigned long)regs_pc(regs), (unsigned long)regs_user_sp(regs),
			signal_name(sig));
	user_signal_force(sig, exception_code(sig), regs_pc(regs));
}

void exit_to_user_mode(struct regs *regs)
{
	struct task *t = current;
	for (;;) {
		/* A reschedule asked for while in the kernel: take it before user code runs on. */
		if (need_resched()) {
			arch_irq_enable();
			schedule();
			arch_irq_disable();
			continue;
		}
		if (!signal_pending() && !t->syscall_restart)
			return;
		/* Delivery writes the user stack, which may fault and sleep: interrupts on. */
		long restart = t->syscall_restart ? -ERESTARTSYS : 0;
		t->syscall_restart = false;
		arch_irq_enable();
		signal_deliver(regs, restart);
		arch_irq_disable();
	}
}

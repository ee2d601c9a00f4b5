/*
 * Trap handling in C: trap_handler() sorts what trap_entry.S saved into interrupts
 * (timer, software = IPI, external = PLIC) and exceptions. From the kernel, page
 * faults go to handle_page_fault(), then to the exception fixup table, and only
 * then to die(); access faults (PMP, bus errors) may have a fixup too; every
 * other exception dies. From user mode nothing is a kernel bug: a system call, a
 * page fault or any other exception goes to the generic entry points
 * (grace/syscall.h) with interrupts on, and every such trap ends in
 * exit_to_user_mode(). Interrupts end in sched_irq_return(), which may switch
 * threads. Also the two debug helpers generic code asks for, arch_dump_regs()
 * and arch_unwind().
 */
#include <grace/arch.h>
#include <grace/extable.h>
#include <grace/fault.h>
#include <grace/plic.h>
#include <grace/printk.h>
#include <grace/signal.h>
#include <grace/syscall.h>
#include <asm/irq.h>
#include <asm/memory.h>
#include "hart.h"
#include "kernel_pgtable.h"
#include "riscv.h"

BUILD_BUG_ON(offsetof(struct regs, sepc) != REGS_SEPC);
BUILD_BUG_ON(offsetof(struct regs, sstatus) != REGS_SSTATUS);
BUILD_BUG_ON(offsetof(struct regs, scause) != REGS_SCAUSE);
BUILD_BUG_ON(offsetof(struct regs, stval) != REGS_STVAL);
BUILD_BUG_ON(offsetof(struct regs, frame_fp) != REGS_FRAME_FP);
BUILD_BUG_ON(offsetof(struct regs, frame_ra) != REGS_FRAME_RA);
BUILD_BUG_ON(sizeof(struct regs) != REGS_SIZE || REGS_SIZE % 16);
BUILD_BUG_ON(offsetof(struct regs, t6) != REGS_X(31));

extern char _text[], _etext[];

/* scause exception codes that the handlers sort out. */
#define EXC_INST_MISALIGNED 0
#define EXC_INST_ACCESS 1
#define EXC_BREAKPOINT 3
#define EXC_LOAD_MISALIGNED 4
#define EXC_LOAD_ACCESS 5
#define EXC_STORE_MISALIGNED 6
#define EXC_STORE_ACCESS 7
#define EXC_ECALL_U 8
#define EXC_INST_PAGE_FAULT 12
#define EXC_LOAD_PAGE_FAULT 13
#define EXC_STORE_PAGE_FAULT 15
#define EXC_SOFTWARE_CHECK 18

/* scause exception codes, from the privileged spec. */
static const char *const exception_names[] = {
    [0] = "instruction address misaligned",
    [1] = "instruction access fault",
    [2] = "illegal instruction",
    [3] = "breakpoint",
    [4] = "load address misaligned",
    [5] = "load access fault",
    [6] = "store/AMO address misaligned",
    [7] = "store/AMO access fault",
    [8] = "environment call from U-mode",
    [9] = "environment call from S-mode",
    [12] = "instruction page fault",
    [13] = "load page fault",
    [15] = "store/AMO page fault",
    [18] = "software check",
    [19] = "hardware error",
};

static const char *cause_name(unsigned long scause)
{
	unsigned long code = scause & ~SCAUSE_INTERRUPT;
	if (scause & SCAUSE_INTERRUPT) {
		switch (code) {
		case IRQ_S_SOFT:
			return "supervisor software interrupt";
		case IRQ_S_TIMER:
			return "supervisor timer interrupt";
		case IRQ_S_EXT:
			return "supervisor external interrupt";
		default:
			return "unknown interrupt";
		}
	}
	if (code < ARRAY_SIZE(exception_names) && exception_names[code])
		return exception_names[code];
	return "unknown exception";
}

static void trap_interrupt(unsigned long code, struct regs *regs)
{
	irq_enter();
	switch (code) {
	case IRQ_S_SOFT:
		/* Clear first: an IPI sent while we handle this one must trap again. */
		csr_clear(sip, SIP_SSIP);
		ipi_interrupt();
		break;
	case IRQ_S_TIMER:
		/* STIP stays pending until the compare value moves: disarm, generic re-arms. */
		riscv_timer_disarm();
		timer_interrupt(regs);
		break;
	case IRQ_S_EXT:
		plic_handle_irq(smp_processor_id());
		break;
	default:
		pr_warn("riscv: unexpected interrupt %lu, masking it\n", code);
		if (code < 64)
			csr_clear(sie, 1UL << code);
		break;
	}
	irq_exit();
}

bool fixup_exception(struct regs *regs)
{
	const struct exception_table_entry *e = search_exception_table(regs->sepc, EX_TYPE_INSN);
	if (!e && (regs->scause == EXC_INST_PAGE_FAULT || regs->scause == EXC_INST_ACCESS))
		/* A call whose target could not be fetched (probe_exec): match ra. */
		e = search_exception_table(regs->ra, EX_TYPE_CALL);
	if (!e)
		return false;
	regs->sepc = e->fixup;
	return true;
}

static void __noreturn fault_die(struct regs *regs, const char *access)
{
	char what[160];
	snprintf(what, sizeof(what), "%s: kernel %s at %016lx%s", cause_name(regs->scause), access,
		 regs->stval, kernel_fault_hint(regs->stval, PAGE_OFFSET + DIRECT_MAP_SIZE));
	die(what, regs);
}

/*
 * A page fault: the address space may resolve it (demand paging); else the
 * fixup table may cover the instruction; else it is a kernel bug. The handler
 * runs with interrupts on if the faulting code had them on, so that a fault
 * waiting for a page-table lock still takes the TLB-shootdown IPI its holder
 * may be waiting on.
 */
static void trap_page_fault(struct regs *regs, unsigned access)
{
	if (kernel_fault_resolved(regs, regs->stval, access, regs->sstatus & SSTATUS_SPIE))
		return;
	fault_die(regs, access == FAULT_EXEC	? "execute"
			: access == FAULT_WRITE ? "write"
						: "read");
}

static void trap_exception(struct regs *regs)
{
	switch (regs->scause) {
	case EXC_INST_PAGE_FAULT:
		trap_page_fault(regs, FAULT_EXEC);
		return;
	case EXC_LOAD_PAGE_FAULT:
		trap_page_fault(regs, FAULT_READ);
		return;
	case EXC_STORE_PAGE_FAULT:
		trap_page_fault(regs, FAULT_WRITE);
		return;
	case EXC_INST_ACCESS:
	case EXC_LOAD_ACCESS:
	case EXC_STORE_ACCESS:
		/* Physical memory protection or a bus error: no mapping to fix, maybe a fixup. */
		if (fixup_exception(regs))
			return;
		fault_die(regs, regs->scause == EXC_INST_ACCESS	   ? "execute"
				: regs->scause == EXC_STORE_ACCESS ? "write"
								   : "read");
	default:
		die(cause_name(regs->scause), regs);
	}
}

/*
 * The signal Linux sends for an exception in user mode that is neither a system
 * call nor a page fault (arch/riscv/kernel/traps.c): a misaligned address is a
 * bus error, a protection (access) fault or a control-flow check a segmentation
 * fault, a breakpoint a trap, and anything else an illegal instruction.
 */
static int user_exception_signal(unsigned long scause)
{
	switch (scause) {
	case EXC_INST_MISALIGNED:
	case EXC_LOAD_MISALIGNED:
	case EXC_STORE_MISALIGNED:
		return SIGBUS;
	case EXC_INST_ACCESS:
	case EXC_LOAD_ACCESS:
	case EXC_STORE_ACCESS:
	case EXC_SOFTWARE_CHECK:
		return SIGSEGV;
	case EXC_BREAKPOINT:
		return SIGTRAP;
	default:
		return SIGILL;
	}
}

/*
 * An exception in user mode, handled with interrupts on: user mode always runs
 * with them on, and a page fault may sleep. sepc moves past an ecall first, so
 * that the system call returns after it (and a signal frame saves that pc), and
 * a0 is kept in orig_a0 for arch_syscall_restart(), the result taking its place.
 */
static void user_trap_exception(struct regs *regs)
{
	unsigned long scause = regs->scause;

	arch_irq_enable();
	switch (scause) {
	case EXC_ECALL_U:
		regs->sepc += RISCV_ECALL_SIZE;
		regs->orig_a0 = regs->a0;
		syscall_entry(regs);
		break;
	case EXC_INST_PAGE_FAULT:
		user_page_fault(regs, regs->stval, FAULT_EXEC);
		break;
	case EXC_LOAD_PAGE_FAULT:
		user_page_fault(regs, regs->stval, FAULT_READ);
		break;
	case EXC_STORE_PAGE_FAULT:
		user_page_fault(regs, regs->stval, FAULT_WRITE);
		break;
	default:
		user_exception(regs, user_exception_signal(scause), cause_name(scause));
		break;
	}
	arch_irq_disable();
}

/*
 * A trap from user mode: the frame is the only one on this thread's kernel stack,
 * so it starts the trap-frame chain, and a backtrace ends at it: the user's s0
 * and pc are no kernel frame to walk. The entry left the depth at 0, so a page
 * fault in a user copy here, and an interrupt while that fault waits, nest as
 * they would in a kernel thread. It leaves through exit_to_user_mode(), which
 * may switch threads or end this one.
 */
static void trap_from_user(struct regs *regs)
{
	regs->frame_fp = 0;
	regs->frame_ra = 0;
	regs->outer = NULL;
	this_hart()->trap_regs = regs;
	if (regs->scause & SCAUSE_INTERRUPT) {
		trap_interrupt(regs->scause & ~SCAUSE_INTERRUPT, regs);
		sched_irq_return();
	} else {
		user_trap_exception(regs);
	}
	exit_to_user_mode(regs);
	this_hart()->trap_regs = NULL;
}

void trap_handler(struct regs *regs)
{
	if (regs_user_mode(regs)) {
		trap_from_user(regs);
		return;
	}

	struct riscv_hart *hart = this_hart();

	regs->outer = hart->trap_regs;
	hart->trap_regs = regs;
	if (hart->trap_depth >= TRAP_DEPTH_MAX) {
		/* The usual way here: the trap entry faulted saving to a stack's guard page. */
		if (kernel_stack_guard(regs->stval)) {
			char what[120];
			snprintf(what, sizeof(what),
				 "kernel stack overflow: the trap entry hit a guard page at %016lx",
				 regs->stval);
			die(what, regs);
		}
		die("kernel traps nested too deep: stack pointer bad?", regs);
	}
	if (regs->scause & SCAUSE_INTERRUPT) {
		trap_interrupt(regs->scause & ~SCAUSE_INTERRUPT, regs);
		/*
		 * Last, after irq_exit() and the source's acknowledgement (sip cleared,
		 * timer disarmed, PLIC claim completed), with interrupts still off: the
		 * scheduler may switch to another thread here and come back much later,
		 * and nothing of this interrupt may wait that long. Only if the
		 * interrupted code could have been preempted anyway (interrupts on),
		 * not in the middle of an irqs-off section.
		 */
		if (regs->sstatus & SSTATUS_SPIE)
			sched_irq_return();
	} else if (riscv_early_boot) {
		riscv_early_trap(cause_name(regs->scause), regs);
	} else {
		trap_exception(regs);
	}
	/*
	 * Not hart: the handler may have switched threads (above, or blocking in a
	 * fault), and this thread may be back on another hart, whose trap_regs
	 * arch_switch_to() loaded with this thread's.
	 */
	this_hart()->trap_regs = regs->outer;
}

static const char *const reg_names[31] = {
    "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0", "a1",
    "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5", "s6",
    "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

void arch_dump_regs(const struct regs *regs)
{
	const unsigned long *x = &regs->ra;
	printk("%s (scause %lx) at sepc %016lx, stval %016lx, sstatus %016lx\n",
	       cause_name(regs->scause), regs->scause, regs->sepc, regs->stval, regs->sstatus);
	for (unsigned i = 0; i < 31; i += 3) {
		if (i + 2 < 31)
			printk(" %-3s %016lx  %-3s %016lx  %-3s %016lx\n", reg_names[i], x[i],
			       reg_names[i + 1], x[i + 1], reg_names[i + 2], x[i + 2]);
		else
			printk(" %-3s %016lx\n", reg_names[i], x[i]);
	}
}

static bool is_kernel_text(uintptr_t pc)
{
	return pc >= (uintptr_t)_text && pc < (uintptr_t)_etext;
}

static bool is_frame_pointer(uintptr_t fp)
{
	/* s0 equals sp at function entry, and sp is 16-byte aligned. */
	return fp && fp % 16 == 0 && mmu_kernel_range_ok(fp - 16, 16);
}

/*
 * GCC's RISC-V frames keep the return address at fp - 8 and the caller's fp at
 * fp - 16, except in a leaf function, which saves no ra: there the caller's fp is
 * at fp - 8 and the return address is still in ra. That only happens in a frame
 * a trap interrupted, so one of this hart's trap frames supplies ra.
 */
bool arch_unwind(uintptr_t *fp, uintptr_t *pc)
{
	uintptr_t f = *fp;
	if (!is_frame_pointer(f))
		return false;
	const uintptr_t *rec = (const uintptr_t *)f;
	uintptr_t ra = rec[-1], prev = rec[-2];

	if (!is_kernel_text(ra)) {
		/* The trap frames on this hart, innermost first; bounded like the nesting. */
		const struct regs *trap = this_hart()->trap_regs;
		for (int depth = 0; trap && depth < TRAP_DEPTH_MAX && trap->s0 != f; depth++)
			trap = trap->outer;
		if (!trap || trap->s0 != f || !is_frame_pointer(ra) || !is_kernel_text(trap->ra))
			return false;
		*fp = ra;
		*pc = trap->ra;
		return true;
	}
	/* Callers' frames sit higher on the stack; anything else is a loop or garbage. */
	if (prev && prev <= f)
		return false;
	*fp = prev;
	*pc = ra;
	return true;
}

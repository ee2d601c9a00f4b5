/*
 * Trap dispatch (called from entry.S with the saved registers), the register dump
 * for die(), and the frame-pointer unwinder for backtraces.
 *
 * An exception in ring 3 is the program's: with interrupts on (as the program
 * had them), a page fault goes to user_page_fault() and anything else to
 * user_exception() with the signal Linux sends for it; never to die() or the
 * fixup table, which are for kernel code. A double fault or machine check is the
 * kernel's or the hardware's whichever ring it interrupted.
 *
 * In the kernel: page faults go to handle_page_fault(), then to the exception
 * fixup table, and only then to die(); a general protection fault (a
 * non-canonical address) may have a fixup too; an NMI is a spinlock kick
 * (spin_halt.c); every other exception dies. A double fault is almost always a
 * kernel stack overflow into a guard page (the #PF could not push its frame),
 * and says so. Device interrupts, the timer and the IPI are wrapped in
 * irq_enter()/irq_exit() and an EOI to the local APIC, then end in
 * sched_irq_return(); the spurious vector needs none of this. Every trap from
 * ring 3 but the NMI (on its IST stack, it must not switch threads) leaves
 * through x86_exit_to_user().
 */
#include <grace/arch.h>
#include <grace/extable.h>
#include <grace/fault.h>
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/signal.h>
#include <grace/syscall.h>
#include <asm/irq.h>
#include <asm/memory.h>
#include <grace/pgtable.h>
#include "processor.h"
#include "x86_64.h"

#define NR_EXCEPTIONS 32
#define VEC_NMI 2
#define VEC_DOUBLE_FAULT 8
#define VEC_GENERAL_PROTECTION 13
#define VEC_PAGE_FAULT 14
#define VEC_MACHINE_CHECK 18

/* #PF error code bits */
#define PF_PRESENT (1u << 0) /* a protection violation, not a missing page */
#define PF_WRITE (1u << 1)
#define PF_USER (1u << 2)
#define PF_INSN (1u << 4) /* an instruction fetch (with EFER.NXE) */

static const char *const exception_names[NR_EXCEPTIONS] = {
    [0] = "divide error",
    [1] = "debug exception",
    [2] = "NMI",
    [3] = "breakpoint",
    [4] = "overflow",
    [5] = "BOUND range exceeded",
    [6] = "invalid opcode",
    [7] = "device not available",
    [8] = "double fault",
    [9] = "coprocessor segment overrun",
    [10] = "invalid TSS",
    [11] = "segment not present",
    [12] = "stack-segment fault",
    [13] = "general protection fault",
    [14] = "page fault",
    [16] = "x87 floating-point error",
    [17] = "alignment check",
    [18] = "machine check",
    [19] = "SIMD floating-point exception",
    [20] = "virtualization exception",
    [21] = "control protection exception",
    [29] = "VMM communication exception",
    [30] = "security exception",
};

/*
 * The signal Linux sends a program for each exception (arch/x86/kernel/traps.c);
 * 0 here means SIGSEGV, Linux's answer for the ones a program should not see.
 */
static const u8 user_signals[NR_EXCEPTIONS] = {
    [0] = SIGFPE,  /* divide error */
    [1] = SIGTRAP, /* debug exception */
    [3] = SIGTRAP, /* breakpoint (int3, whose gate ring 3 may use) */
    [6] = SIGILL,  /* invalid opcode */
    [9] = SIGFPE,  /* coprocessor segment overrun */
    [11] = SIGBUS, /* segment not present */
    [12] = SIGBUS, /* stack-segment fault (a non-canonical stack address) */
    [16] = SIGFPE, /* x87 floating-point error */
    [17] = SIGBUS, /* alignment check */
    [19] = SIGFPE, /* SIMD floating-point exception */
};

static unsigned pf_access(u64 error)
{
	return error & PF_WRITE ? FAULT_WRITE : error & PF_INSN ? FAULT_EXEC : FAULT_READ;
}

bool fixup_exception(struct regs *regs)
{
	const struct exception_table_entry *e = search_exception_table(regs->rip, EX_TYPE_INSN);
	if (e) {
		regs->rip = e->fixup;
		return true;
	}
	/*
	 * A call whose target could not be fetched (probe_exec): RIP is the target
	 * and the return address is on top of the stack; pop it and continue.
	 */
	if (regs->vector == VEC_PAGE_FAULT && (regs->error & PF_INSN) && regs->rip == regs->cr2 &&
	    mmu_range_readable(regs->rsp, sizeof(u64))) {
		e = search_exception_table(*(const uintptr_t *)regs->rsp, EX_TYPE_CALL);
		if (e) {
			regs->rsp += sizeof(u64);
			regs->rip = e->fixup;
			return true;
		}
	}
	return false;
}

/*
 * A page fault: the address space may resolve it (demand paging); else the
 * fixup table may cover the instruction; else it is a kernel bug. The handler
 * runs with interrupts on if the faulting code had them on, so that a fault
 * waiting for a page-table lock still takes the TLB-shootdown IPI its holder
 * may be waiting on.
 */
static void x86_page_fault(struct regs *regs)
{
	unsigned access = pf_access(regs->error);
	if (kernel_fault_resolved(regs, regs->cr2, access, regs->rflags & RFLAGS_IF))
		return;

	char what[160];
	snprintf(what, sizeof(what), "page fault: kernel %s at %016llx, %s%s",
		 access == FAULT_EXEC	 ? "execute"
		 : access == FAULT_WRITE ? "write"
					 : "read",
		 (unsigned long long)regs->cr2,
		 regs->error & PF_PRESENT ? "protection violation" : "not mapped",
		 kernel_fault_hint(regs->cr2, VMAP_BASE));
	die(what, regs);
}

/* An exception in ring 3: the program's to answer for. Interrupts on meanwhile. */
static void x86_user_exception(struct regs *regs)
{
	unsigned vector = (unsigned)regs->vector;

	arch_irq_enable();
	if (vector == VEC_PAGE_FAULT) {
		user_page_fault(regs, regs->cr2, pf_access(regs->error));
	} else {
		const char *name = exception_names[vector];
		user_exception(regs, user_signals[vector] ? user_signals[vector] : SIGSEGV,
			       name ? name : "reserved exception");
	}
	arch_irq_disable();
}

static void x86_exception(struct regs *regs)
{
	unsigned vector = (unsigned)regs->vector;

	/*
	 * CR2 belongs to the CPU: read it before anything can enable interrupts,
	 * since a handler that does may be preempted and another thread fault.
	 */
	regs->cr2 = read_cr2();
	regs->fs_base = rdmsr(MSR_FS_BASE);
	regs->gs_base = rdmsr(MSR_GS_BASE);
	if (regs_user_mode(regs) && vector != VEC_DOUBLE_FAULT && vector != VEC_MACHINE_CHECK) {
		x86_user_exception(regs);
		return;
	}
	if (vector == VEC_PAGE_FAULT) {
		x86_page_fault(regs);
		return;
	}
	if (vector == VEC_GENERAL_PROTECTION && fixup_exception(regs))
		return;
	/* CR2 still holds the address of the #PF that could not be delivered. */
	if (vector == VEC_DOUBLE_FAULT && kernel_stack_guard(regs->cr2))
		die("double fault: kernel stack overflow (the stack's guard page was hit, "
		    "see CR2)",
		    regs);
	const char *name = exception_names[vector];
	die(name ? name : "reserved exception", regs);
}

static void x86_interrupt(struct regs *regs)
{
	unsigned vector = (unsigned)regs->vector;

	if (vector == SPURIOUS_VECTOR)
		return;
	if (vector >= PIC_VECTOR_BASE && vector < PIC_VECTOR_BASE + 16)
		return; /* a spurious 8259 interrupt: the PICs are masked, no EOI */

	irq_enter();
	if (vector == TIMER_VECTOR) {
		lapic_eoi();
		lapic_timer_interrupt(regs);
	} else if (vector == IPI_VECTOR) {
		lapic_eoi();
		ipi_interrupt();
	} else {
		int irq = ioapic_vector_irq(vector);
		if (irq < 0)
			irq = msi_vector_line(vector);
		if (irq >= 0)
			irq_dispatch((unsigned)irq);
		else if (vector >= MSI_VECTOR_BASE && vector < MSI_VECTOR_BASE + MSI_VECTORS)
			; /* a message before its line was unmasked: dropped, see msi.c */
		else if (vector == LAPIC_ERROR_VECTOR)
			pr_err("lapic: APIC error interrupt\n");
		else
			pr_warn("trap: unexpected interrupt vector 0x%x\n", vector);
		/* After the handler: a level-triggered line must be quiet before the EOI. */
		lapic_eoi();
	}
	irq_exit();
	/*
	 * Last, after irq_exit() and the EOI, with interrupts still off (interrupt
	 * gate): the scheduler may switch to another thread here and come back much
	 * later, maybe on another CPU, and this LAPIC must not keep the vector in
	 * service that long. The frame stays on this thread's stack and the iretq
	 * resumes the interrupted code wherever that is. Only if the interrupted
	 * code had interrupts on: never preempt an irqs-off section (ring 3 always
	 * has them on).
	 */
	if (regs->rflags & RFLAGS_IF)
		sched_irq_return();
}

void x86_trap(struct regs *regs)
{
	/*
	 * An NMI is a spinlock kick (spin_halt.c). It may interrupt anything, even
	 * with interrupts off: note it and return, touching nothing else.
	 */
	if (regs->vector == VEC_NMI) {
		x86_spin_nmi(regs);
		return;
	}
	if (regs->vector < NR_EXCEPTIONS)
		x86_exception(regs);
	else
		x86_interrupt(regs);
	if (regs_user_mode(regs))
		x86_exit_to_user(regs);
}

void arch_dump_regs(const struct regs *r)
{
	uintptr_t off, size;
	const char *sym = ksym_lookup(r->rip, &off, &size);

	const char *kind = r->vector == REGS_NO_VECTOR ? "system call"
			   : r->vector < NR_EXCEPTIONS && exception_names[r->vector]
			       ? exception_names[r->vector]
			       : "interrupt";
	printk("vector %llu (%s), error code 0x%llx\n", (unsigned long long)r->vector, kind,
	       (unsigned long long)r->error);
	if (sym)
		printk("RIP: %016llx %s+0x%lx/0x%lx\n", (unsigned long long)r->rip, sym, off, size);
	else
		printk("RIP: %016llx\n", (unsigned long long)r->rip);
	printk("CS: %04llx RFLAGS: %016llx RSP: %016llx SS: %04llx\n", (unsigned long long)r->cs,
	       (unsigned long long)r->rflags, (unsigned long long)r->rsp,
	       (unsigned long long)r->ss);
	printk("CR2: %016llx CR3: %016llx FS base: %016llx GS base: %016llx\n",
	       (unsigned long long)r->cr2, (unsigned long long)read_cr3(),
	       (unsigned long long)r->fs_base, (unsigned long long)r->gs_base);
	printk("RAX: %016llx RBX: %016llx RCX: %016llx\n", (unsigned long long)r->rax,
	       (unsigned long long)r->rbx, (unsigned long long)r->rcx);
	printk("RDX: %016llx RSI: %016llx RDI: %016llx\n", (unsigned long long)r->rdx,
	       (unsigned long long)r->rsi, (unsigned long long)r->rdi);
	printk("RBP: %016llx R08: %016llx R09: %016llx\n", (unsigned long long)r->rbp,
	       (unsigned long long)r->r8, (unsigned long long)r->r9);
	printk("R10: %016llx R11: %016llx R12: %016llx\n", (unsigned long long)r->r10,
	       (unsigned long long)r->r11, (unsigned long long)r->r12);
	printk("R13: %016llx R14: %016llx R15: %016llx\n", (unsigned long long)r->r13,
	       (unsigned long long)r->r14, (unsigned long long)r->r15);
}

/*
 * With -fno-omit-frame-pointer every frame starts with the caller's RBP, and the
 * return address sits just above it: [fp] = caller's fp, [fp + 8] = return address.
 */
bool arch_unwind(uintptr_t *fp, uintptr_t *pc)
{
	uintptr_t f = *fp;
	if (f == 0 || !IS_ALIGNED(f, sizeof(uintptr_t)) ||
	    !mmu_range_readable(f, 2 * sizeof(uintptr_t)))
		return false;
	const uintptr_t *frame = (const uintptr_t *)f;
	*fp = frame[0];
	*pc = frame[1];
	return *pc != 0;
}

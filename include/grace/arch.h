/*
 * The arch boundary: everything generic code may ask of an architecture, and the
 * generic entry points an architecture calls. Each arch implements these in
 * arch/<arch>/ and its inline parts in arch/<arch>/include/asm/:
 *
 *   asm/percpu.h  arch_percpu_base(), arch_set_percpu_base(), arch_current(),
 *                 PERCPU_HEAD_CURRENT
 *   asm/switch.h  struct arch_context, arch_context_init(), arch_switch_to()
 *   asm/irq.h     arch_irq_save/restore/enable/disable(), arch_irqs_disabled()
 *   asm/cpu.h     cpu_relax()
 *   asm/io.h      mmio_read8..64/mmio_write8..64; x86_64 also inb/outb (ARCH_HAS_PORT_IO)
 *   asm/memory.h  PAGE_SIZE, PAGE_OFFSET, phys_to_virt(), virt_to_phys()
 *   asm/pgtable.h page-table entries, TLB flushes, user access (see grace/pgtable.h)
 *   asm/regs.h    struct regs (the trap frame), regs_pc(), regs_fp()
 *
 * Boot: the arch's entry code sets up a stack, the MMU (kernel image at its link
 * address, all RAM in the direct map at PAGE_OFFSET), this CPU's trap vector and
 * a percpu base pointing at __percpu_start, fills boot_info from the firmware,
 * and calls kernel_main(). Secondary CPUs started by arch_cpu_start() do the
 * same per-CPU setup with the given stack and percpu_base(cpu), enable their own
 * timer and IPI interrupts, and call secondary_main().
 *
 * Threads: the per-CPU base (tp, the GS base) belongs to the CPU and is never
 * part of a thread's state. arch_current() reads the running thread from the
 * per-CPU header (current_task at offset PERCPU_HEAD_CURRENT, grace/percpu.h) in one load,
 * so a migration cannot fall between reading the base and reading the slot.
 * arch_context_init(ctx, stack_top, entry) prepares a new thread: its first
 * arch_switch_to() enters entry() on that stack with interrupts off, as if called
 * from nowhere (the frame-pointer chain ends there; entry must not return).
 * arch_switch_to(prev, next), called with interrupts off, saves the callee-saved
 * registers on the running stack, stores the stack pointer in prev, and returns
 * on next's stack, interrupts still off; each arch also swaps any trap state
 * that belongs to the thread (riscv64: the trap nesting depth and frame chain).
 * A CPU's boot/idle context needs no init: its first arch_switch_to() fills it.
 * Every interrupt (not exception) ends, after irq_exit() and the controller's
 * acknowledgement, in sched_irq_return(), with interrupts off, when the
 * interrupted code had them on; it may switch threads, and the trap exit then
 * resumes the interrupted code on whatever CPU the thread is on by then.
 */
#ifndef GRACE_ARCH_H
#define GRACE_ARCH_H

#include <grace/compiler.h>
#include <grace/cpumask.h>
#include <grace/types.h>
#include <asm/regs.h>

/* ---- provided by the arch ---- */

/* Interrupt controller, timers, IPIs: after memory and per-CPU areas exist. */
void arch_platform_init(void);

/*
 * Called with interrupts disabled. Waits (wfi/hlt) until an interrupt is pending,
 * lets it be handled, and returns with interrupts disabled again. Atomic with
 * respect to the caller's check for work: an interrupt that arrives between the
 * check and the wait still ends the wait.
 */
void arch_idle(void);

/* Start logical CPU cpu on stack_top. 0 if the firmware accepted the request. */
int arch_cpu_start(unsigned cpu, uintptr_t stack_top);

/* Send the one IPI vector to every CPU in mask; the target runs ipi_interrupt(). */
void arch_send_ipi(const struct cpumask *mask);

/* Monotonic nanoseconds since an arbitrary point at boot; same clock on every CPU. */
u64 arch_clock_ns(void);

/* Fire timer_interrupt() on this CPU at arch_clock_ns() >= deadline; U64_MAX disarms. */
void arch_timer_arm(u64 deadline_ns);

/* Route interrupt line irq (PLIC source / ISA IRQ) to the boot CPU and unmask it. */
int arch_irq_unmask(unsigned irq);

/* Map device registers; returns a virtual address or NULL. */
void *ioremap(phys_addr_t pa, size_t size);

/* Power off. status 0 = success; anything else makes QEMU exit with a failure status. */
void __noreturn arch_shutdown(int status);

/* Print the trap frame's registers. */
void arch_dump_regs(const struct regs *regs);

/*
 * One step of a frame-pointer backtrace: given a frame pointer, return the caller's
 * frame pointer and return address. false when fp does not look like a frame.
 */
bool arch_unwind(uintptr_t *fp, uintptr_t *pc);

/*
 * Is this machine emulated or virtualized (QEMU's TCG, KVM, another hypervisor)?
 * Decided once by discovery, before kernel_main(); a vCPU may then be descheduled
 * by the host at any moment, which is what paravirtual spinlock waits are for.
 * *why (when why is not NULL) gets a short phrase for the boot log saying what
 * told, either way. The rule per arch is in docs/architecture.md.
 */
bool arch_is_virtual(const char **why);

/*
 * Halting a spinlock waiter until the unlocker kicks it (kernel/locking/spinlock_pv.c).
 * All three run with interrupts off, on the waiting CPU:
 *   arch_spin_halt_prepare()  forget kicks that came before: a kick after it ends the
 *                             next arch_spin_halt();
 *   arch_spin_halt()          stop the CPU until a kick sent since the last prepare has
 *                             arrived (at once if it already has); it may also return
 *                             spuriously, so the caller re-checks what it waits for;
 *   arch_spin_halt_end()      after the last halt of a wait: hand back whatever the
 *                             halts held back (riscv64: a software interrupt that also
 *                             carried an ordinary IPI), to be taken when interrupts are on.
 * arch_spin_kick(cpu) ends cpu's halt; any context, interrupts on or off, never to
 * itself. It is an NMI on x86_64, since the waiter halts with interrupts off. The
 * caller's stores before the kick are visible to cpu once its halt has returned.
 */
void arch_spin_halt_prepare(void);
void arch_spin_halt(void);
void arch_spin_halt_end(void);
void arch_spin_kick(unsigned cpu);

/* The arch's name as printed in bench: lines ("riscv64", "x86_64"). */
extern const char arch_name[];
/* What boot_info's cpus[].hwid is on this arch ("hart", "apic"), for listings. */
extern const char arch_hwid_name[];

/*
 * ---- user mode ----
 *
 * A user thread is a kernel thread (made by kthread_create, so arch_context_init
 * knew its stack top) that called arch_enter_user(). From then on its kernel
 * stack is empty whenever it runs in user mode, and every trap from user mode
 * (system call, exception, interrupt) builds its struct regs at the top of that
 * stack, with every user register in it (riscv64: tp, the user's thread
 * pointer, too; x86_64: the FS base is per thread state instead, see below).
 * The arch then calls exactly one of syscall_entry(), user_page_fault(),
 * user_exception() (grace/syscall.h) or, for an interrupt, its handler and
 * sched_irq_return(); then exit_to_user_mode(regs) with interrupts off; then it
 * restores every user register from regs (which the kernel may have changed:
 * a result, a signal frame) and returns to user mode.
 *
 * Floating-point and vector state is per thread: saved when a thread that has
 * entered user mode is switched out and restored when it is switched in (the
 * kernel itself never uses those registers). x86_64's FS base is per thread the
 * same way (arch_set_user_tls()); the GS base stays the kernel's in the kernel
 * (swapgs on every way in from and out to ring 3).
 */

/*
 * Leave the kernel for user mode at pc with the stack pointer sp: every other
 * general register zero, the thread pointer (riscv64 tp, x86_64 FS base) zero,
 * the floating-point state fresh (riscv64: f0-f31 zero, fcsr 0; x86_64: FNINIT's
 * x87 state, MXCSR 0x1f80, XMM zero), interrupts on in user mode. Called with
 * current->mm loaded (mm_switch); never returns.
 */
void __noreturn arch_enter_user(uintptr_t pc, uintptr_t sp);

/* Set the running user thread's TLS pointer (riscv64: regs->tp; x86_64: its FS base). */
void arch_set_user_tls(struct regs *regs, uintptr_t tls);

/*
 * Return to user mode with every user register as regs holds it (a copy of a
 * trap frame of this arch: fork's child starts from its parent's, its result
 * register changed), on the calling thread's empty kernel stack; the thread's
 * floating-point state and TLS pointer are what arch_user_fork() gave it.
 * Never returns.
 */
void __noreturn arch_return_to_user(const struct regs *regs);

/*
 * Give child, a new thread not yet run, the calling user thread's
 * floating-point state and TLS pointer (x86_64's FS base), as fork's child
 * starts with them, and mark it a user thread for the context switch.
 */
struct task;
void arch_user_fork(struct task *child);

/* AT_HWCAP for a new program: what Linux puts there on this arch (riscv64: a bit per
 * single-letter extension; x86_64: CPUID.1:EDX). */
unsigned long arch_elf_hwcap(void);

/* ---- provided by generic code, called by the arch ---- */

void __noreturn kernel_main(void);
void __noreturn secondary_main(void);

/* Wrap every interrupt (not exception) handler in these; they count nesting. */
void irq_enter(void);
void irq_exit(void);
void ipi_interrupt(void);
void timer_interrupt(struct regs *regs);
void irq_dispatch(unsigned irq); /* an external interrupt line fired */

/*
 * Called last by every interrupt, with interrupts off, when the interrupted code
 * had interrupts on: preempt the running thread if the scheduler wants to. It
 * may switch threads and return much later, maybe on another CPU; it returns
 * with interrupts off.
 */
void sched_irq_return(void);

/* An exception the kernel cannot handle: print what, the registers, a backtrace; panic. */
void __noreturn die(const char *what, struct regs *regs);

#endif

/* Declarations shared by the riscv64 arch files (not part of the arch interface). */
#ifndef RISCV_RISCV_H
#define RISCV_RISCV_H

#include <grace/compiler.h>
#include <grace/fdt.h>
#include <asm/regs.h>
#include <asm/switch.h>

/* What the device tree said, kept for the platform code: nothing reads the DT after boot. */
extern struct fdt_machine riscv_machine;

/* True until kernel_main(): traps and fatal errors print through SBI, no console yet. */
extern bool riscv_early_boot;
void __noreturn riscv_early_trap(const char *what, struct regs *regs);

/* timer.c */
void riscv_timer_init(u64 hz, bool sstc);
void riscv_timer_disarm(void);
const char *riscv_timer_kind(void);

/* ipi.c */
void ipi_init(void);
const char *ipi_kind(void);

/* platform.c: this hart's interrupt sources (sie bits), timer disarmed. */
void riscv_hart_irqs_init(void);
/* Map the power-off device (before kernel_main, so that an early panic can use it). */
void riscv_poweroff_init(void);

/* ecall's length (it has no compressed form): sepc moves past it, a restart moves back. */
#define RISCV_ECALL_SIZE 4

/* fpu.S: a user thread's FP registers to and from memory, interrupts off. */
void riscv_fp_save(struct riscv_fp_state *fp);
void riscv_fp_restore(const struct riscv_fp_state *fp);

/*
 * The trap frame of a thread that has entered user mode, at the top of its kernel
 * stack: every trap from user mode builds it there (trap_entry.S).
 */
static inline struct regs *riscv_user_regs(const struct arch_context *ctx)
{
	return (struct regs *)(ctx->stack_top - REGS_SIZE);
}

/*
 * trap_entry.S: the ways out of arch_enter_user() and arch_return_to_user(),
 * through the trap exit, with frame (riscv_user_regs()) filled as given.
 */
void __noreturn riscv_enter_user(uintptr_t pc, uintptr_t sp, unsigned long sstatus,
				 struct regs *frame);
void __noreturn riscv_return_to_user(const struct regs *src, unsigned long sstatus,
				     struct regs *frame);

#endif

/* Declarations shared by the riscv64 arch files (not part of the arch interface). */
#ifndef RISCV_RISCV_H
#define RISCV_RISCV_H

#include <grace/compiler.h>
#include <grace/fdt.h>
#include <asm/regs.h>

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

#endif

/*
 * The RISC-V platform-level interrupt controller (drivers/irqchip/plic.c), as the
 * device tree describes it. Device lines are numbered on the PLIC the console is
 * wired to; every line goes to one hart.
 */
#ifndef GRACE_PLIC_H
#define GRACE_PLIC_H

#include <grace/fdt.h>

/* Map every PLIC in m, mask all lines, clear our harts' contexts. m must outlive the kernel. */
void plic_init(const struct fdt_machine *m);
/* Deliver line irq (to the boot hart when it can): 0, -EINVAL, or -ENODEV without a PLIC. */
int plic_unmask(unsigned irq);
/* Supervisor external interrupt on cpu: claim, dispatch and complete every pending line. */
void plic_handle_irq(unsigned cpu);

#endif

/*
 * The PC's interrupt controllers outside the CPU (drivers/irqchip/): the I/O APICs
 * the MADT describes, which deliver every device line, and the legacy 8259 pair,
 * which is only masked.
 */
#ifndef GRACE_IOAPIC_H
#define GRACE_IOAPIC_H

#include <grace/acpi.h>
#include <grace/types.h>

#define IOAPIC_MAX_GSIS 0x80 /* GSIs routed: 0 .. IOAPIC_MAX_GSIS - 1 */

/* What the MADT says about external interrupts, and where their vectors start. */
struct ioapic_config {
	struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
	unsigned nr_ioapics;
	struct acpi_override overrides[ACPI_MAX_OVERRIDES];
	unsigned nr_overrides;
	unsigned vector_base; /* GSI g arrives at vector vector_base + g */
};

/* Map every I/O APIC in c and mask all its pins. c must outlive the kernel. */
void ioapic_init(const struct ioapic_config *c);
/* Route line irq (ISA IRQ or GSI) to the CPU with APIC id dest: 0, -ERANGE, -ENODEV. */
int ioapic_unmask(unsigned irq, u32 dest_apic_id);
/* The line an I/O APIC vector was routed for (as passed to ioapic_unmask), or -1. */
int ioapic_vector_irq(unsigned vector);

/* Remap the 8259s' 16 lines to vector_base.. and mask them all. */
void i8259_disable(unsigned vector_base);

#endif

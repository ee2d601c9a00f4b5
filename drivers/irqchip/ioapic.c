/*
 * The I/O APICs the MADT describes: external interrupts on a PC.
 *
 * ioapic_unmask(irq) takes an ISA IRQ (0-15) or a GSI (16 and up), applies the
 * MADT's interrupt source overrides (an ISA IRQ may arrive on another GSI, with
 * another polarity and trigger mode: on QEMU the PIT's IRQ 0 is GSI 2, and the
 * PCI-routed IRQs 5, 9, 10, 11 are level-triggered), and routes the GSI to one
 * CPU at vector vector_base + GSI.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/ioapic.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/io.h>
#include <asm/memory.h>

#define IOAPIC_REGSEL 0x00
#define IOAPIC_WINDOW 0x10
#define IOAPIC_REG_VERSION 0x01
#define IOAPIC_REG_REDIR(pin) (0x10 + 2 * (pin)) /* low word; high word at +1 */

#define REDIR_ACTIVE_LOW (1u << 13)
#define REDIR_LEVEL (1u << 15)
#define REDIR_MASKED (1u << 16)
#define REDIR_DEST_SHIFT 24 /* in the high word: physical APIC id */

#define ISA_IRQS 16

struct ioapic {
	uintptr_t base; /* virtual */
	u32 gsi_base, nr_pins;
};

static const struct ioapic_config *config;
static struct ioapic ioapics[ACPI_MAX_IOAPICS];
static unsigned nr_ioapics;
static s16 gsi_irq[IOAPIC_MAX_GSIS]; /* line passed to ioapic_unmask, by GSI */
static DEFINE_SPINLOCK(ioapic_lock); /* the REGSEL/WINDOW pair and gsi_irq */

static u32 ioapic_read(const struct ioapic *io, u32 reg)
{
	mmio_write32(io->base + IOAPIC_REGSEL, reg);
	return mmio_read32(io->base + IOAPIC_WINDOW);
}

static void ioapic_write(const struct ioapic *io, u32 reg, u32 v)
{
	mmio_write32(io->base + IOAPIC_REGSEL, reg);
	mmio_write32(io->base + IOAPIC_WINDOW, v);
}

void ioapic_init(const struct ioapic_config *c)
{
	config = c;
	for (unsigned i = 0; i < IOAPIC_MAX_GSIS; i++)
		gsi_irq[i] = -1;
	for (unsigned i = 0; i < c->nr_ioapics; i++) {
		const struct acpi_ioapic *a = &c->ioapics[i];
		struct ioapic *io = &ioapics[nr_ioapics];
		io->base = (uintptr_t)ioremap(a->addr, PAGE_SIZE);
		if (!io->base) {
			pr_err("ioapic: cannot map I/O APIC %u at %x\n", a->id, a->addr);
			continue;
		}
		io->gsi_base = a->gsi_base;
		io->nr_pins = ((ioapic_read(io, IOAPIC_REG_VERSION) >> 16) & 0xff) + 1;
		for (u32 pin = 0; pin < io->nr_pins; pin++) {
			ioapic_write(io, IOAPIC_REG_REDIR(pin), REDIR_MASKED);
			ioapic_write(io, IOAPIC_REG_REDIR(pin) + 1, 0);
		}
		printk("ioapic: id %u at %x, GSIs %u-%u\n", a->id, a->addr, io->gsi_base,
		       io->gsi_base + io->nr_pins - 1);
		nr_ioapics++;
	}
	if (!nr_ioapics)
		pr_err("ioapic: no I/O APIC: device interrupts (console input) will not work\n");
}

/* The GSI and redirection flags for line irq, after the MADT's overrides. */
static u32 irq_to_gsi(unsigned irq, u32 *redir_flags)
{
	u32 gsi = irq;
	/* ISA lines are edge-triggered, active high; PCI lines level-triggered, active low. */
	u16 polarity = irq < ISA_IRQS ? ACPI_POLARITY_ACTIVE_HIGH : ACPI_POLARITY_ACTIVE_LOW;
	u16 trigger = irq < ISA_IRQS ? ACPI_TRIGGER_EDGE : ACPI_TRIGGER_LEVEL;

	for (unsigned i = 0; irq < ISA_IRQS && i < config->nr_overrides; i++) {
		const struct acpi_override *o = &config->overrides[i];
		if (o->bus != 0 || o->source != irq)
			continue;
		gsi = o->gsi;
		/* "Conforms to the bus" (0) keeps the ISA default. */
		if (o->flags & ACPI_POLARITY_MASK)
			polarity = o->flags & ACPI_POLARITY_MASK;
		if (o->flags & ACPI_TRIGGER_MASK)
			trigger = o->flags & ACPI_TRIGGER_MASK;
	}
	*redir_flags = (polarity == ACPI_POLARITY_ACTIVE_LOW ? REDIR_ACTIVE_LOW : 0) |
		       (trigger == ACPI_TRIGGER_LEVEL ? REDIR_LEVEL : 0);
	return gsi;
}

int ioapic_unmask(unsigned irq, u32 dest_apic_id)
{
	u32 flags;
	u32 gsi = irq_to_gsi(irq, &flags);

	if (gsi >= IOAPIC_MAX_GSIS)
		return -ERANGE;
	for (unsigned i = 0; i < nr_ioapics; i++) {
		const struct ioapic *io = &ioapics[i];
		if (gsi < io->gsi_base || gsi >= io->gsi_base + io->nr_pins)
			continue;
		u32 pin = gsi - io->gsi_base;
		unsigned long irqflags = spin_lock_irqsave(&ioapic_lock);
		gsi_irq[gsi] = (s16)irq;
		/* Destination first, then the unmasked low word. */
		ioapic_write(io, IOAPIC_REG_REDIR(pin) + 1, dest_apic_id << REDIR_DEST_SHIFT);
		ioapic_write(io, IOAPIC_REG_REDIR(pin), (config->vector_base + gsi) | flags);
		spin_unlock_irqrestore(&ioapic_lock, irqflags);
		return 0;
	}
	return -ENODEV;
}

int ioapic_vector_irq(unsigned vector)
{
	if (!config || vector < config->vector_base ||
	    vector >= config->vector_base + IOAPIC_MAX_GSIS)
		return -1;
	return READ_ONCE(gsi_irq[vector - config->vector_base]);
}

/*
 * Message-signalled interrupts: a device raises one by writing a message, data to
 * an address, which the chipset turns into an interrupt at a local APIC (Intel SDM
 * vol. 3, "Message Signalled Interrupts"): the address 0xfee00000 with the
 * destination APIC id in bits 19:12, the data the vector (fixed delivery, edge).
 * No I/O APIC and no interrupt routing are involved, which is why a PCI Express
 * device's MSI-X works alike on every machine, where its INTx pin goes wherever
 * the chipset wires it (on q35 the pins reach I/O APIC inputs 16-23 through the
 * ICH9's PIRQ links, which only ACPI's _PRT methods describe).
 *
 * Each message gets a vector of its own from MSI_VECTOR_BASE up, and a line above
 * the I/O APIC's GSIs (MSI_LINE_BASE + n) for irq_register(). Messages go to the
 * boot CPU, as the I/O APIC's lines do. Until arch_irq_unmask() the line is masked
 * here: a message that arrives earlier is dropped, as an edge on a masked I/O APIC
 * pin is, and the driver's first run of its handler after irq_register() picks up
 * what it signalled. Allocation is boot-time and never undone.
 */
#include <grace/arch.h>
#include <grace/atomic.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/spinlock.h>
#include <asm/irq.h>
#include "x86_64.h"

#define MSI_ADDRESS_BASE 0xfee00000u /* the local APICs' message window */
#define MSI_ADDRESS_DEST_SHIFT 12

static DEFINE_SPINLOCK(msi_lock); /* nr_msi: allocations */
static unsigned nr_msi;
static bool msi_unmasked[MSI_VECTORS]; /* set once by arch_irq_unmask(); read in the trap */

int arch_msi_alloc(unsigned *line, u64 *addr, u32 *data)
{
	unsigned long flags = spin_lock_irqsave(&msi_lock);
	unsigned n = nr_msi;
	if (n < MSI_VECTORS)
		WRITE_ONCE(nr_msi, n + 1); /* read locklessly by the trap path */
	spin_unlock_irqrestore(&msi_lock, flags);
	if (n == MSI_VECTORS)
		return -ENOSPC;
	*line = MSI_LINE_BASE + n;
	*addr = MSI_ADDRESS_BASE | boot_info.cpus[boot_info.boot_cpu].hwid
				       << MSI_ADDRESS_DEST_SHIFT;
	*data = MSI_VECTOR_BASE + n;
	return 0;
}

bool msi_line(unsigned line)
{
	return line >= MSI_LINE_BASE && line < MSI_LINE_BASE + MSI_VECTORS;
}

int msi_unmask(unsigned line)
{
	if (!msi_line(line) || line - MSI_LINE_BASE >= READ_ONCE(nr_msi))
		return -ERANGE;
	/* Pairs with the READ_ONCE() in msi_vector_line(): from now on it is delivered. */
	WRITE_ONCE(msi_unmasked[line - MSI_LINE_BASE], true);
	return 0;
}

int msi_vector_line(unsigned vector)
{
	if (vector < MSI_VECTOR_BASE || vector >= MSI_VECTOR_BASE + MSI_VECTORS)
		return -1;
	unsigned n = vector - MSI_VECTOR_BASE;
	return READ_ONCE(msi_unmasked[n]) ? (int)(MSI_LINE_BASE + n) : -1;
}

/*
 * PCI configuration access selftests. The mechanism follows the firmware: ECAM
 * exactly when the booted machine's ACPI tables hold an MCFG allocation for segment 0
 * (QEMU's q35), configuration mechanism #1 otherwise (pc). Where ECAM is in use, the
 * PC's ports still reach the same registers, so every found function's header reads
 * the same both ways, and a write through ECAM (the interrupt line register, which
 * only software uses) is what the ports read back. Machines without multiboot2 and
 * ACPI (riscv64) skip.
 */
#include <grace/pci.h>
#include <grace/test.h>
#include <asm/io.h>
#include <asm/irq.h>

#include "boot_acpi.h"

#define PCI_HEADER_DWORDS 16 /* the type 0 and type 1 headers: 64 bytes */

static struct mb2_info mb2;
static struct acpi_info acpi; /* large: not on the test's stack */

TEST(pci, ecam_is_used_exactly_when_the_mcfg_gives_it)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	bool mcfg_segment0 = false;
	for (unsigned i = 0; i < acpi.nr_mcfg; i++)
		mcfg_segment0 |= acpi.mcfg[i].segment == 0;
	pci_scan();
	EXPECT_EQ(pci_uses_ecam(), mcfg_segment0);
}

#ifdef ARCH_HAS_PORT_IO
/* Configuration mechanism #1 by hand, beside the PCI code's own (the test is alone). */
static u32 port_read(const struct pci_dev *d, unsigned off)
{
	outl(0xcf8, 1u << 31 | (u32)d->bus << 16 | (u32)d->dev << 11 | (u32)d->fn << 8 | off);
	return inl(0xcfc);
}

TEST(pci, ecam_and_the_ports_reach_the_same_registers)
{
	unsigned n = pci_scan();
	if (!pci_uses_ecam()) {
		test_skip("configuration space is not reached through ECAM on this machine");
		return;
	}
	ASSERT_GT(n, 0);
	unsigned long flags = arch_irq_save(); /* nothing else touches port 0xcf8 meanwhile */
	for (unsigned i = 0; i < n; i++) {
		const struct pci_dev *d = pci_device(i);
		for (unsigned r = 0; r < PCI_HEADER_DWORDS; r++) {
			u32 ecam = pci_read32(d, 4 * r), port = port_read(d, 4 * r);
			/* Status (the high half of dword 1) may change between the reads. */
			u32 mask = r == 1 ? 0x0000ffffu : ~0u;
			if ((ecam & mask) != (port & mask))
				test_fail(__FILE__, __LINE__,
					  "%02x:%02x.%u offset %#x: %#x through ECAM, %#x through "
					  "the ports",
					  d->bus, d->dev, d->fn, 4 * r, ecam, port);
		}
	}
	/* A write through ECAM lands in the register the ports read. */
	const struct pci_dev *d = pci_device(n - 1);
	u32 old = pci_read32(d, PCI_INTERRUPT_LINE);
	u32 probe = (old & ~0xffu) | (u8)~old;
	pci_write32(d, PCI_INTERRUPT_LINE, probe);
	EXPECT_EQ(port_read(d, PCI_INTERRUPT_LINE), probe);
	pci_write32(d, PCI_INTERRUPT_LINE, old);
	EXPECT_EQ(port_read(d, PCI_INTERRUPT_LINE), old);
	arch_irq_restore(flags);
}
#endif

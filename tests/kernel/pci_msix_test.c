/*
 * MSI-X selftests (drivers/pci/msix.c) on the virtio-net function, which
 * virtio-pci gives one message where the arch has message-signalled interrupts:
 * MSI-X enabled with the function unmasked, INTx off, entry 0 unmasked with a
 * message for a local APIC (address 0xfee00000 and up) and every other entry
 * masked. That the messages then arrive is what virtio_net's exchanges with the
 * host prove: their replies come in only by the device's interrupt. Machines without
 * PCI or without MSI (riscv64) skip.
 */
#include <grace/arch.h>
#include <grace/pci.h>
#include <grace/test.h>
#include <grace/virtio.h>
#include <asm/io.h>
#include <asm/irq.h>

#define MSIX_CONTROL 2
#define MSIX_CONTROL_TABLE_SIZE 0x7ff
#define MSIX_CONTROL_FUNCTION_MASK (1u << 14)
#define MSIX_CONTROL_ENABLE (1u << 15)
#define MSIX_TABLE 4
#define MSIX_ENTRY_SIZE 16
#define MSIX_ENTRY_MASKED 0x1
#define LAPIC_MSI_WINDOW 0xfee00000u
#define LAPIC_MSI_WINDOW_MASK 0xfff00000u
#define FIRST_DEVICE_VECTOR 0x20 /* 0-31 are the CPU's exceptions */

#ifdef ARCH_HAS_MSI
static const struct pci_dev *virtio_net_function(void)
{
	unsigned n = pci_scan();
	for (unsigned i = 0; i < n; i++) {
		const struct pci_dev *d = pci_device(i);
		if (d->vendor == 0x1af4 && d->device == 0x1040 + VIRTIO_ID_NET)
			return d;
	}
	return NULL;
}
#endif

TEST(pci, virtio_net_signals_by_msix)
{
#ifndef ARCH_HAS_MSI
	test_skip("no message-signalled interrupts on this arch");
#else
	const struct pci_dev *d = virtio_net_function();
	if (!d) {
		test_skip("no modern virtio-net PCI function");
		return;
	}
	unsigned cap = pci_find_capability(d, PCI_CAP_ID_MSIX, 0);
	ASSERT_NE(cap, 0);
	u16 control = pci_read16(d, cap + MSIX_CONTROL);
	EXPECT_TRUE(control & MSIX_CONTROL_ENABLE);
	EXPECT_FALSE(control & MSIX_CONTROL_FUNCTION_MASK);
	EXPECT_TRUE(pci_read16(d, PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE);

	u32 table = pci_read32(d, cap + MSIX_TABLE);
	unsigned bir = table & 7, entries = (control & MSIX_CONTROL_TABLE_SIZE) + 1;
	ASSERT_LT(bir, PCI_NUM_BARS);
	ASSERT_NE(d->bar[bir], 0);
	uintptr_t t = (uintptr_t)ioremap(d->bar[bir] + (table & ~7u), entries * MSIX_ENTRY_SIZE);
	ASSERT_NE(t, 0);
	u32 addr_lo = mmio_read32(t), addr_hi = mmio_read32(t + 4), data = mmio_read32(t + 8);
	EXPECT_EQ(addr_lo & LAPIC_MSI_WINDOW_MASK, LAPIC_MSI_WINDOW);
	EXPECT_EQ(addr_hi, 0);
	EXPECT_GE(data & 0xff, FIRST_DEVICE_VECTOR);
	EXPECT_EQ(mmio_read32(t + 12) & MSIX_ENTRY_MASKED, 0);
	for (unsigned i = 1; i < entries; i++)
		if (!(mmio_read32(t + i * MSIX_ENTRY_SIZE + 12) & MSIX_ENTRY_MASKED))
			test_fail(__FILE__, __LINE__, "MSI-X entry %u of %u is unmasked", i,
				  entries);
#endif
}

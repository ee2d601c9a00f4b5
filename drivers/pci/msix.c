/*
 * MSI-X (PCI Local Bus 3.0, 6.8.2): a function's interrupts as messages it writes,
 * one per entry of a table in one of its memory BARs. The capability's message
 * control word holds the table size and two bits, enable and function mask; the
 * table offset word names the BAR (low 3 bits) and the offset in it. Each 16-byte
 * entry is the message address (low, high), the data, and a vector control word
 * whose bit 0 masks the entry.
 *
 * Grace uses one message per function: entry 0, given a fresh line by the arch
 * (arch_msi_alloc()), every other entry masked. The sequence keeps the function
 * from sending anything half-programmed: enable with the whole function masked,
 * fill the table, then unmask the function. With MSI-X on, the function stops
 * using its INTx pin (6.8.2: the pin is disabled while MSI-X is enabled); INTx is
 * also turned off in the command register to say so.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include <asm/io.h>
#include <asm/irq.h>

#define MSIX_CONTROL 2
#define MSIX_CONTROL_TABLE_SIZE 0x7ff /* entries - 1 */
#define MSIX_CONTROL_FUNCTION_MASK (1u << 14)
#define MSIX_CONTROL_ENABLE (1u << 15)
#define MSIX_TABLE 4
#define MSIX_TABLE_BIR 0x7
#define MSIX_ENTRY_SIZE 16
#define MSIX_ENTRY_ADDR_LO 0
#define MSIX_ENTRY_ADDR_HI 4
#define MSIX_ENTRY_DATA 8
#define MSIX_ENTRY_VECTOR_CONTROL 12
#define MSIX_ENTRY_MASKED 0x1

#ifdef ARCH_HAS_MSI
/* The function's MSI-X table, mapped, and its entries; 0 when it cannot be reached. */
static uintptr_t msix_map_table(const struct pci_dev *d, unsigned cap, unsigned *entries)
{
	u32 table = pci_read32(d, cap + MSIX_TABLE);
	unsigned bir = table & MSIX_TABLE_BIR;
	u64 off = table & ~(u32)MSIX_TABLE_BIR;
	*entries = (pci_read16(d, cap + MSIX_CONTROL) & MSIX_CONTROL_TABLE_SIZE) + 1;
	u64 len = (u64)*entries * MSIX_ENTRY_SIZE;
	if (bir >= PCI_NUM_BARS || !d->bar[bir] || off + len > d->bar_size[bir]) {
		pr_warn("pci: %02x:%02x.%u: MSI-X table in BAR %u at %llx is not in a memory BAR "
			"we read\n",
			d->bus, d->dev, d->fn, bir, (unsigned long long)off);
		return 0;
	}
	return (uintptr_t)ioremap(d->bar[bir] + off, len);
}

int pci_msix_enable_one(const struct pci_dev *d, unsigned *line)
{
	unsigned cap = pci_find_capability(d, PCI_CAP_ID_MSIX, 0), entries;
	if (!cap)
		return -ENODEV;
	uintptr_t table = msix_map_table(d, cap, &entries);
	if (!table)
		return -ENODEV;
	u64 addr;
	u32 data;
	int err = arch_msi_alloc(line, &addr, &data);
	if (err)
		return err;

	u16 control = pci_read16(d, cap + MSIX_CONTROL);
	pci_write16(d, cap + MSIX_CONTROL,
		    control | MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
	for (unsigned i = 0; i < entries; i++) {
		uintptr_t e = table + i * MSIX_ENTRY_SIZE;
		mmio_write32(e + MSIX_ENTRY_VECTOR_CONTROL, MSIX_ENTRY_MASKED);
		if (i == 0) {
			mmio_write32(e + MSIX_ENTRY_ADDR_LO, (u32)addr);
			mmio_write32(e + MSIX_ENTRY_ADDR_HI, (u32)(addr >> 32));
			mmio_write32(e + MSIX_ENTRY_DATA, data);
			mmio_write32(e + MSIX_ENTRY_VECTOR_CONTROL, 0);
		}
	}
	pci_write16(d, PCI_COMMAND, pci_read16(d, PCI_COMMAND) | PCI_COMMAND_INTX_DISABLE);
	pci_write16(d, cap + MSIX_CONTROL,
		    (control | MSIX_CONTROL_ENABLE) & ~MSIX_CONTROL_FUNCTION_MASK);
	return 0;
}
#else
int pci_msix_enable_one(const struct pci_dev *d, unsigned *line)
{
	return -ENODEV; /* no message-signalled interrupts on this arch */
}
#endif

/*
 * PCI enumeration: a depth-first walk from bus 0 through PCI-to-PCI bridges, and
 * each function's memory BARs (address and size) read into a table. Runs once at
 * boot, on the boot CPU before the others start (virtio_prepare); the table is
 * read-only after. Configuration space is reached through drivers/pci/config.c.
 */
#include <grace/errno.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include "pci_internal.h"

#define PCI_MAX_BUSES 256
#define PCI_SLOTS 32
#define PCI_FUNCTIONS 8
#define PCI_HEADER_MULTIFUNCTION 0x80
#define PCI_HEADER_BRIDGE 0x01
#define PCI_BAR_IO 0x1
#define PCI_BAR_MEM_TYPE_MASK 0x6
#define PCI_BAR_MEM_64 0x4
#define PCI_BAR_MEM_MASK (~0xfull)
#define PCI_CAP_MAX 48 /* capabilities followed before a list is taken as looped */

static struct pci_dev devices[PCI_MAX_DEVICES];
static unsigned nr_devices;
static bool scanned;

/* Address and size of each memory BAR; decoding is off while the sizes are probed. */
static void pci_read_bars(struct pci_dev *d)
{
	u16 cmd = pci_read16(d, PCI_COMMAND);
	pci_write16(d, PCI_COMMAND, cmd & ~(PCI_COMMAND_MEMORY | PCI_COMMAND_IO));
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		unsigned off = PCI_BAR0 + 4 * i;
		u32 lo = pci_read32(d, off);
		if (lo & PCI_BAR_IO)
			continue;
		bool is64 = (lo & PCI_BAR_MEM_TYPE_MASK) == PCI_BAR_MEM_64 && i + 1 < PCI_NUM_BARS;
		u32 hi = is64 ? pci_read32(d, off + 4) : 0;
		pci_write32(d, off, 0xffffffffu);
		u64 mask = pci_read32(d, off) & PCI_BAR_MEM_MASK;
		pci_write32(d, off, lo);
		if (is64) {
			pci_write32(d, off + 4, 0xffffffffu);
			mask |= (u64)pci_read32(d, off + 4) << 32;
			pci_write32(d, off + 4, hi);
		} else if (mask) {
			mask |= 0xffffffff00000000ull;
		}
		u64 addr = ((u64)hi << 32 | lo) & PCI_BAR_MEM_MASK;
		if (mask && addr) {
			d->bar[i] = addr;
			d->bar_size[i] = ~mask + 1;
		}
		if (is64)
			i++; /* the upper half is not a BAR of its own */
	}
	pci_write16(d, PCI_COMMAND, cmd);
}

static void pci_scan_bus(u8 bus, unsigned depth);

static void pci_scan_function(u8 bus, u8 dev, u8 fn, unsigned depth)
{
	struct pci_dev probe = {.bus = bus, .dev = dev, .fn = fn};
	u32 id = pci_read32(&probe, PCI_VENDOR_ID);
	u8 header = pci_read8(&probe, PCI_HEADER_TYPE);

	if ((header & 0x7f) == PCI_HEADER_BRIDGE) {
		u8 secondary = pci_read8(&probe, PCI_SECONDARY_BUS);
		/* Firmware numbered the buses; a bridge to bus 0 or to itself is unconfigured. */
		if (secondary > bus && depth + 1 < PCI_MAX_BUSES)
			pci_scan_bus(secondary, depth + 1);
		return;
	}
	if (nr_devices == PCI_MAX_DEVICES) {
		pr_warn("pci: more than %u functions, %02x:%02x.%u skipped\n", PCI_MAX_DEVICES, bus,
			dev, fn);
		return;
	}
	struct pci_dev *d = &devices[nr_devices++];
	*d = probe;
	d->vendor = (u16)id;
	d->device = (u16)(id >> 16);
	d->class_rev = pci_read32(d, PCI_CLASS_REVISION);
	d->irq_line = pci_read8(d, PCI_INTERRUPT_LINE);
	d->irq_pin = pci_read8(d, PCI_INTERRUPT_PIN);
	pci_read_bars(d);
}

static void pci_scan_bus(u8 bus, unsigned depth)
{
	for (u8 dev = 0; dev < PCI_SLOTS; dev++) {
		struct pci_dev probe = {.bus = bus, .dev = dev};
		if ((u16)pci_read32(&probe, PCI_VENDOR_ID) == 0xffff)
			continue;
		bool multi = pci_read8(&probe, PCI_HEADER_TYPE) & PCI_HEADER_MULTIFUNCTION;
		for (u8 fn = 0; fn < (multi ? PCI_FUNCTIONS : 1); fn++) {
			probe.fn = fn;
			if ((u16)pci_read32(&probe, PCI_VENDOR_ID) != 0xffff)
				pci_scan_function(bus, dev, fn, depth);
		}
	}
}

unsigned pci_scan(void)
{
	if (!scanned) {
		scanned = true;
		pci_config_init();
		pci_scan_bus(0, 0);
		if (nr_devices)
			printk("pci: %u functions found through %s\n", nr_devices,
			       pci_uses_ecam() ? "ECAM" : "configuration mechanism #1");
	}
	return nr_devices;
}

struct pci_dev *pci_device(unsigned i)
{
	return i < nr_devices ? &devices[i] : NULL;
}

unsigned pci_find_capability(const struct pci_dev *d, u8 id, unsigned after)
{
	if (!(pci_read16(d, PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return 0;
	unsigned pos = after ? pci_read8(d, after + 1) : pci_read8(d, PCI_CAPABILITY_LIST);
	for (unsigned n = 0; n < PCI_CAP_MAX && pos >= 0x40; n++) {
		pos &= ~3u;
		if (pci_read8(d, pos) == id)
			return pos;
		pos = pci_read8(d, pos + 1);
	}
	return 0;
}

/*
 * PCI enumeration: configuration mechanism #1, a depth-first walk from bus 0 through
 * PCI-to-PCI bridges, and each function's memory BARs (address and size) read into a
 * table. Runs once at boot on one thread (virtio_init); the table is read-only after.
 * Config cycles go through one address/data port pair, so pci_lock keeps each
 * address write and its data access together.
 */
#include <grace/errno.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/io.h>

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define PCI_CONFIG_ENABLE (1u << 31)
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

#ifdef ARCH_HAS_PORT_IO
static DEFINE_SPINLOCK(pci_lock); /* the CONFIG_ADDRESS/CONFIG_DATA pair */

static u32 pci_conf_read(u8 bus, u8 dev, u8 fn, unsigned off)
{
	u32 addr =
	    PCI_CONFIG_ENABLE | (u32)bus << 16 | (u32)dev << 11 | (u32)fn << 8 | (off & 0xfc);
	unsigned long flags = spin_lock_irqsave(&pci_lock);
	outl(PCI_CONFIG_ADDRESS, addr);
	u32 v = inl(PCI_CONFIG_DATA);
	spin_unlock_irqrestore(&pci_lock, flags);
	return v;
}

static void pci_conf_write(u8 bus, u8 dev, u8 fn, unsigned off, u32 v)
{
	u32 addr =
	    PCI_CONFIG_ENABLE | (u32)bus << 16 | (u32)dev << 11 | (u32)fn << 8 | (off & 0xfc);
	unsigned long flags = spin_lock_irqsave(&pci_lock);
	outl(PCI_CONFIG_ADDRESS, addr);
	outl(PCI_CONFIG_DATA, v);
	spin_unlock_irqrestore(&pci_lock, flags);
}
#else
/* No configuration mechanism: every slot reads as absent (all ones). */
static u32 pci_conf_read(u8 bus, u8 dev, u8 fn, unsigned off)
{
	return 0xffffffffu;
}

static void pci_conf_write(u8 bus, u8 dev, u8 fn, unsigned off, u32 v) {}
#endif

u32 pci_read32(const struct pci_dev *d, unsigned off)
{
	return pci_conf_read(d->bus, d->dev, d->fn, off);
}

u16 pci_read16(const struct pci_dev *d, unsigned off)
{
	return (u16)(pci_read32(d, off) >> (8 * (off & 2)));
}

u8 pci_read8(const struct pci_dev *d, unsigned off)
{
	return (u8)(pci_read32(d, off) >> (8 * (off & 3)));
}

/* A read-modify-write of the dword: the 16 bits beside off are written back as read. */
void pci_write16(const struct pci_dev *d, unsigned off, u16 v)
{
	u32 old = pci_read32(d, off), shift = 8 * (off & 2);
	u32 dword = (old & ~(0xffffu << shift)) | (u32)v << shift;
	/* The status register beside the command register clears bits written as 1. */
	if ((off & ~3u) == PCI_COMMAND)
		dword &= 0xffff;
	pci_conf_write(d->bus, d->dev, d->fn, off, dword);
}

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
		pci_conf_write(d->bus, d->dev, d->fn, off, 0xffffffffu);
		u64 mask = pci_read32(d, off) & PCI_BAR_MEM_MASK;
		pci_conf_write(d->bus, d->dev, d->fn, off, lo);
		if (is64) {
			pci_conf_write(d->bus, d->dev, d->fn, off + 4, 0xffffffffu);
			mask |= (u64)pci_read32(d, off + 4) << 32;
			pci_conf_write(d->bus, d->dev, d->fn, off + 4, hi);
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
		pci_scan_bus(0, 0);
		if (nr_devices)
			printk("pci: %u functions found through configuration mechanism #1\n",
			       nr_devices);
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

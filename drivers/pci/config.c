/*
 * PCI configuration space access, by one of two mechanisms:
 *
 *   - ECAM (PCI Express's enhanced configuration access mechanism): each function's
 *     4 KiB of configuration space is memory at base + (bus << 20 | dev << 15 |
 *     fn << 12), one MMIO access per register. Used for segment 0's buses when
 *     the firmware describes an ECAM region (ACPI's MCFG: q35, every PCIe PC).
 *   - the PC's configuration mechanism #1: an address written to port 0xcf8, then
 *     the data at port 0xcfc. Two accesses per register, so pci_lock keeps each
 *     pair together. Every x86 chipset QEMU models has it (i440FX and q35 alike);
 *     it is the fallback for buses outside the ECAM region, and the only mechanism
 *     on a machine without an MCFG (QEMU's pc).
 *
 * A machine with neither (riscv64: Grace reads no PCI host bridge from its device
 * tree) reads every function as absent (all ones). The ECAM region is set once at boot, before the
 * scan, and read-only after.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/io.h>
#include "pci_internal.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define PCI_CONFIG_ENABLE (1u << 31)
#define ECAM_BUS_SHIFT 20
#define ECAM_DEV_SHIFT 15
#define ECAM_FN_SHIFT 12

static struct {
	phys_addr_t base; /* of bus 0, even when start_bus > 0 (the MCFG's convention) */
	u8 start_bus, end_bus;
	uintptr_t va; /* bus start_bus's configuration space, mapped; 0: ECAM not in use */
} ecam;

int pci_set_ecam(phys_addr_t base, u8 start_bus, u8 end_bus)
{
	if (ecam.base || end_bus < start_bus)
		return -EINVAL;
	ecam.base = base;
	ecam.start_bus = start_bus;
	ecam.end_bus = end_bus;
	return 0;
}

bool pci_uses_ecam(void)
{
	return ecam.va != 0;
}

/* Once, from pci_scan(), before the first access: after it the region is fixed. */
void pci_config_init(void)
{
	if (!ecam.base || ecam.va)
		return;
	phys_addr_t start = ecam.base + ((phys_addr_t)ecam.start_bus << ECAM_BUS_SHIFT);
	size_t size = (size_t)(ecam.end_bus - ecam.start_bus + 1) << ECAM_BUS_SHIFT;
	ecam.va = (uintptr_t)ioremap(start, size);
	if (!ecam.va)
		pr_err("pci: cannot map the ECAM region at %llx (%zu MiB); using ports\n",
		       (unsigned long long)start, size >> 20);
}

/* The ECAM address of a register, or 0 when its bus is not in the region. */
static uintptr_t ecam_addr(u8 bus, u8 dev, u8 fn, unsigned off)
{
	if (!ecam.va || bus < ecam.start_bus || bus > ecam.end_bus)
		return 0;
	return ecam.va + ((uintptr_t)(bus - ecam.start_bus) << ECAM_BUS_SHIFT) +
	       ((uintptr_t)dev << ECAM_DEV_SHIFT) + ((uintptr_t)fn << ECAM_FN_SHIFT) +
	       (off & 0xffc);
}

#ifdef ARCH_HAS_PORT_IO
static DEFINE_SPINLOCK(pci_lock); /* the CONFIG_ADDRESS/CONFIG_DATA pair */

static u32 port_conf_addr(u8 bus, u8 dev, u8 fn, unsigned off)
{
	return PCI_CONFIG_ENABLE | (u32)bus << 16 | (u32)dev << 11 | (u32)fn << 8 | (off & 0xfc);
}

static u32 port_conf_read(u8 bus, u8 dev, u8 fn, unsigned off)
{
	unsigned long flags = spin_lock_irqsave(&pci_lock);
	outl(PCI_CONFIG_ADDRESS, port_conf_addr(bus, dev, fn, off));
	u32 v = inl(PCI_CONFIG_DATA);
	spin_unlock_irqrestore(&pci_lock, flags);
	return v;
}

static void port_conf_write(u8 bus, u8 dev, u8 fn, unsigned off, u32 v)
{
	unsigned long flags = spin_lock_irqsave(&pci_lock);
	outl(PCI_CONFIG_ADDRESS, port_conf_addr(bus, dev, fn, off));
	outl(PCI_CONFIG_DATA, v);
	spin_unlock_irqrestore(&pci_lock, flags);
}
#else
static u32 port_conf_read(u8 bus, u8 dev, u8 fn, unsigned off)
{
	return 0xffffffffu;
}

static void port_conf_write(u8 bus, u8 dev, u8 fn, unsigned off, u32 v) {}
#endif

static u32 pci_conf_read(u8 bus, u8 dev, u8 fn, unsigned off)
{
	uintptr_t a = ecam_addr(bus, dev, fn, off);
	return a ? mmio_read32(a) : port_conf_read(bus, dev, fn, off);
}

static void pci_conf_write(u8 bus, u8 dev, u8 fn, unsigned off, u32 v)
{
	uintptr_t a = ecam_addr(bus, dev, fn, off);
	if (a)
		mmio_write32(a, v);
	else
		port_conf_write(bus, dev, fn, off, v);
}

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

void pci_write32(const struct pci_dev *d, unsigned off, u32 v)
{
	pci_conf_write(d->bus, d->dev, d->fn, off, v);
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

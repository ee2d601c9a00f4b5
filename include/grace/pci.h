/*
 * PCI: configuration space access and a scan of the buses at boot.
 *
 * Configuration space is reached through ECAM when the firmware describes it (the
 * arch calls pci_set_ecam() from ACPI's MCFG before the scan), else through the PC's
 * configuration mechanism #1 (ports 0xcf8/0xcfc), which every x86 chipset QEMU
 * models has; a machine with neither (riscv64, whose PCIe host would need ECAM from
 * the device tree) has no PCI here and pci_scan() finds nothing. The firmware
 * (SeaBIOS, OVMF) has assigned the BARs and the interrupt line by the time we run;
 * Grace reads them and assigns nothing.
 */
#ifndef GRACE_PCI_H
#define GRACE_PCI_H

#include <grace/types.h>

#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_CLASS_REVISION 0x08
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_SECONDARY_BUS 0x19 /* of a PCI-to-PCI bridge (header type 1) */
#define PCI_CAPABILITY_LIST 0x34
#define PCI_INTERRUPT_LINE 0x3c
#define PCI_INTERRUPT_PIN 0x3d

#define PCI_COMMAND_IO (1u << 0)
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_COMMAND_MASTER (1u << 2)
#define PCI_COMMAND_INTX_DISABLE (1u << 10)
#define PCI_STATUS_CAP_LIST (1u << 4)

#define PCI_CAP_ID_VNDR 0x09 /* vendor-specific: virtio's structures */
#define PCI_CAP_ID_MSIX 0x11

#define PCI_NUM_BARS 6
#define PCI_MAX_DEVICES 64

struct pci_dev {
	u8 bus, dev, fn;
	u16 vendor, device;
	u32 class_rev;		    /* class, subclass, prog-if, revision */
	u64 bar[PCI_NUM_BARS];	    /* memory BARs' physical addresses, 0: none or I/O */
	u64 bar_size[PCI_NUM_BARS]; /* bytes decoded */
	u8 irq_line;		    /* the line the firmware routed INTx to (ISA IRQ), 0xff: none */
	u8 irq_pin;		    /* 1-4 = INTA-INTD, 0: no INTx */
};

u32 pci_read32(const struct pci_dev *d, unsigned off);
u16 pci_read16(const struct pci_dev *d, unsigned off);
u8 pci_read8(const struct pci_dev *d, unsigned off);
void pci_write32(const struct pci_dev *d, unsigned off, u32 v);
void pci_write16(const struct pci_dev *d, unsigned off, u16 v);

/*
 * Segment 0's ECAM region: buses start_bus..end_bus, base the address of bus 0 (as
 * the MCFG gives it). Once, before pci_scan(); -EINVAL for a second call or no buses.
 */
int pci_set_ecam(phys_addr_t base, u8 start_bus, u8 end_bus);
/* True once the scan reaches configuration space through ECAM. */
bool pci_uses_ecam(void);

/*
 * MSI-X with one message (drivers/pci/msix.c): table entry 0 raises a new interrupt
 * line, *line for irq_register(), the other entries masked, INTx off. 0; -ENODEV
 * when the function has no MSI-X, its table is not in a memory BAR we read or the
 * arch has no message-signalled interrupts (riscv64 here); -ENOSPC when the arch
 * has no message left.
 */
int pci_msix_enable_one(const struct pci_dev *d, unsigned *line);

/* Enumerate bus 0 and the buses behind its bridges, once; the devices found. */
unsigned pci_scan(void);
/* Device i of the scan (0 .. pci_scan() - 1). */
struct pci_dev *pci_device(unsigned i);
/* The config offset of the first capability of type id after the one at after (0: from the
 * start of the list); 0 when there is none. */
unsigned pci_find_capability(const struct pci_dev *d, u8 id, unsigned after);

#endif

/*
 * The modern virtio-pci transport (virtio 1.1, 4.1): vendor 0x1af4, device 0x1040 +
 * the virtio device id (0x1041 for net). The device's registers are in its memory
 * BARs, located by vendor-specific capabilities in configuration space: common
 * configuration (features, status, queue setup), notification (one doorbell per
 * queue at queue_notify_off * notify_off_multiplier), ISR status (read to acknowledge)
 * and the device-specific configuration. Legacy devices (0x1000-0x103f, I/O BAR
 * registers) are not handled: QEMU makes a modern-only one with disable-legacy=on.
 *
 * Interrupts are MSI-X where the arch has message-signalled interrupts (x86_64):
 * one message, table entry 0, for every queue (4.1.4.3: queue_msix_vector = 0), and
 * none for configuration changes (config_msix_vector = NO_VECTOR), so a message
 * always means "look at the queues" and the ISR register is not read (4.1.4.5.2).
 * A message needs no routing, so this works alike on every PC: on q35 a device's
 * INTx pin reaches I/O APIC inputs 16-23 by ways only ACPI's _PRT describes.
 *
 * Otherwise INTx: the device raises its PCI interrupt pin, which the firmware routed
 * to the ISA IRQ in the interrupt line register; the I/O APIC code takes that IRQ with
 * the MADT's overrides (level-triggered on QEMU). Reading the ISR register lowers the
 * line, which virtio_interrupt() does before the end of interrupt.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/virtio.h>
#include <asm/cpu.h>
#include <asm/io.h>

#define VIRTIO_PCI_VENDOR 0x1af4
#define VIRTIO_PCI_MODERN_BASE 0x1040 /* device id = this + virtio device id */
#define VIRTIO_PCI_MODERN_LAST 0x107f

/* struct virtio_pci_cap: cfg_type, the BAR, and the structure's offset and length in it. */
#define VIRTIO_PCI_CAP_CFG_TYPE 3
#define VIRTIO_PCI_CAP_BAR 4
#define VIRTIO_PCI_CAP_OFFSET 8
#define VIRTIO_PCI_CAP_LENGTH 12
#define VIRTIO_PCI_NOTIFY_MULTIPLIER 16 /* after the cap, in the notify cap only */
#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define VIRTIO_PCI_CAP_ISR_CFG 3
#define VIRTIO_PCI_CAP_DEVICE_CFG 4

/* struct virtio_pci_common_cfg */
#define VPCI_DEVICE_FEATURE_SELECT 0x00
#define VPCI_DEVICE_FEATURE 0x04
#define VPCI_DRIVER_FEATURE_SELECT 0x08
#define VPCI_DRIVER_FEATURE 0x0c
#define VPCI_CONFIG_MSIX_VECTOR 0x10
#define VPCI_NUM_QUEUES 0x12
#define VPCI_DEVICE_STATUS 0x14
#define VPCI_QUEUE_SELECT 0x16
#define VPCI_QUEUE_SIZE 0x18
#define VPCI_QUEUE_MSIX_VECTOR 0x1a
#define VPCI_QUEUE_ENABLE 0x1c
#define VPCI_QUEUE_NOTIFY_OFF 0x1e
#define VPCI_QUEUE_DESC 0x20
#define VPCI_QUEUE_DRIVER 0x28
#define VPCI_QUEUE_DEVICE 0x30
#define VPCI_COMMON_MIN_LEN 0x38
#define VIRTIO_MSI_NO_VECTOR 0xffff
#define VPCI_MSIX_ENTRY 0 /* the one message: MSI-X table entry 0 */

struct virtio_pci {
	struct pci_dev *pci;
	uintptr_t common, isr, device; /* virtual addresses of the structures */
	uintptr_t notify_base;
	u32 notify_mult;
	bool msix; /* interrupts are MSI-X entry 0, not INTx */
	struct virtio_device vdev;
};

static struct virtio_pci *vp_of(struct virtio_device *vdev)
{
	return vdev->transport;
}

static u64 vp_get_features(struct virtio_device *vdev)
{
	uintptr_t c = vp_of(vdev)->common;
	mmio_write32(c + VPCI_DEVICE_FEATURE_SELECT, 1);
	u64 high = mmio_read32(c + VPCI_DEVICE_FEATURE);
	mmio_write32(c + VPCI_DEVICE_FEATURE_SELECT, 0);
	return high << 32 | mmio_read32(c + VPCI_DEVICE_FEATURE);
}

static void vp_set_features(struct virtio_device *vdev, u64 features)
{
	uintptr_t c = vp_of(vdev)->common;
	mmio_write32(c + VPCI_DRIVER_FEATURE_SELECT, 1);
	mmio_write32(c + VPCI_DRIVER_FEATURE, (u32)(features >> 32));
	mmio_write32(c + VPCI_DRIVER_FEATURE_SELECT, 0);
	mmio_write32(c + VPCI_DRIVER_FEATURE, (u32)features);
}

static u8 vp_get_status(struct virtio_device *vdev)
{
	return mmio_read8(vp_of(vdev)->common + VPCI_DEVICE_STATUS);
}

static void vp_set_status(struct virtio_device *vdev, u8 status)
{
	uintptr_t c = vp_of(vdev)->common;
	mmio_write8(c + VPCI_DEVICE_STATUS, status);
	/* A reset completes when the device reads back 0 (4.1.4.3.2). */
	if (status == 0)
		while (mmio_read8(c + VPCI_DEVICE_STATUS) != 0)
			cpu_relax();
}

static u8 vp_config_read8(struct virtio_device *vdev, unsigned off)
{
	return mmio_read8(vp_of(vdev)->device + off);
}

static u16 vp_queue_max(struct virtio_device *vdev, u16 index)
{
	uintptr_t c = vp_of(vdev)->common;
	if (index >= mmio_read16(c + VPCI_NUM_QUEUES))
		return 0;
	mmio_write16(c + VPCI_QUEUE_SELECT, index);
	if (mmio_read16(c + VPCI_QUEUE_ENABLE))
		return 0;
	return mmio_read16(c + VPCI_QUEUE_SIZE);
}

static void vp_notify(struct virtqueue *vq)
{
	mmio_write16((uintptr_t)vq->priv, vq->index);
}

/* A 64-bit field as two 32-bit writes, low half first: what 4.1.3.1 lets every driver do. */
static void vp_write64(uintptr_t addr, u64 v)
{
	mmio_write32(addr, (u32)v);
	mmio_write32(addr + 4, (u32)(v >> 32));
}

static int vp_queue_enable(struct virtio_device *vdev, struct virtqueue *vq)
{
	struct virtio_pci *vp = vp_of(vdev);
	uintptr_t c = vp->common;
	mmio_write16(c + VPCI_QUEUE_SELECT, vq->index);
	mmio_write16(c + VPCI_QUEUE_SIZE, vq->num);
	vp_write64(c + VPCI_QUEUE_DESC, vq->desc_pa);
	vp_write64(c + VPCI_QUEUE_DRIVER, vq->avail_pa);
	vp_write64(c + VPCI_QUEUE_DEVICE, vq->used_pa);
	u16 off = mmio_read16(c + VPCI_QUEUE_NOTIFY_OFF);
	vq->priv = (void *)(vp->notify_base + (uintptr_t)off * vp->notify_mult);
	vq->notify = vp_notify;
	if (vp->msix) {
		/* The device says NO_VECTOR back when it could not take the vector (4.1.4.3). */
		mmio_write16(c + VPCI_QUEUE_MSIX_VECTOR, VPCI_MSIX_ENTRY);
		if (mmio_read16(c + VPCI_QUEUE_MSIX_VECTOR) != VPCI_MSIX_ENTRY)
			return -EIO;
	}
	mmio_write16(c + VPCI_QUEUE_ENABLE, 1);
	return mmio_read16(c + VPCI_QUEUE_ENABLE) == 1 ? 0 : -EIO;
}

static u32 vp_ack_interrupt(struct virtio_device *vdev)
{
	/* The one message is the queues' (config changes have none): nothing to read. */
	if (vp_of(vdev)->msix)
		return VIRTIO_ISR_QUEUE;
	/* Reading ISR status clears it and lowers the INTx line (4.1.4.5). */
	return mmio_read8(vp_of(vdev)->isr);
}

/* MSI-X's one message for the queues, none for config changes; false: stay with INTx. */
static bool vp_setup_msix(struct virtio_pci *vp, unsigned *line)
{
	if (pci_msix_enable_one(vp->pci, line))
		return false;
	uintptr_t c = vp->common;
	mmio_write16(c + VPCI_CONFIG_MSIX_VECTOR, VIRTIO_MSI_NO_VECTOR);
	return true;
}

static const struct virtio_config_ops virtio_pci_ops = {
    .get_features = vp_get_features,
    .set_features = vp_set_features,
    .get_status = vp_get_status,
    .set_status = vp_set_status,
    .config_read8 = vp_config_read8,
    .queue_max = vp_queue_max,
    .queue_enable = vp_queue_enable,
    .ack_interrupt = vp_ack_interrupt,
};

/* The structure a capability points at, mapped; 0 if its BAR is not a memory BAR we read. */
static uintptr_t vp_map_cap(struct pci_dev *d, unsigned cap, u32 min_len)
{
	u8 bar = pci_read8(d, cap + VIRTIO_PCI_CAP_BAR);
	u32 off = pci_read32(d, cap + VIRTIO_PCI_CAP_OFFSET);
	u32 len = pci_read32(d, cap + VIRTIO_PCI_CAP_LENGTH);
	if (bar >= PCI_NUM_BARS || !d->bar[bar] || len < min_len ||
	    (u64)off + len > d->bar_size[bar])
		return 0;
	return (uintptr_t)ioremap(d->bar[bar] + off, len);
}

static void virtio_pci_probe(struct pci_dev *d)
{
	struct virtio_pci *vp = kzalloc(sizeof(*vp));
	if (!vp)
		return;
	vp->pci = d;
	for (unsigned cap = 0; (cap = pci_find_capability(d, PCI_CAP_ID_VNDR, cap)) != 0;) {
		u8 type = pci_read8(d, cap + VIRTIO_PCI_CAP_CFG_TYPE);
		/* The spec lets a device offer a structure twice; the first is the preferred. */
		if (type == VIRTIO_PCI_CAP_COMMON_CFG && !vp->common)
			vp->common = vp_map_cap(d, cap, VPCI_COMMON_MIN_LEN);
		else if (type == VIRTIO_PCI_CAP_ISR_CFG && !vp->isr)
			vp->isr = vp_map_cap(d, cap, 1);
		else if (type == VIRTIO_PCI_CAP_DEVICE_CFG && !vp->device)
			vp->device = vp_map_cap(d, cap, 1);
		else if (type == VIRTIO_PCI_CAP_NOTIFY_CFG && !vp->notify_base) {
			vp->notify_base = vp_map_cap(d, cap, 2);
			vp->notify_mult = pci_read32(d, cap + VIRTIO_PCI_NOTIFY_MULTIPLIER);
		}
	}
	snprintf(vp->vdev.name, sizeof(vp->vdev.name), "virtio-pci@%02x:%02x.%u", d->bus, d->dev,
		 d->fn);
	if (!vp->common || !vp->isr || !vp->device || !vp->notify_base) {
		pr_warn("virtio-pci: %s: a configuration structure is missing or unmapped\n",
			vp->vdev.name);
		kfree(vp);
		return;
	}
	vp->vdev.id = d->device - VIRTIO_PCI_MODERN_BASE;
	vp->vdev.ops = &virtio_pci_ops;
	vp->vdev.transport = vp;
	unsigned line;
	vp->msix = vp_setup_msix(vp, &line);
	if (vp->msix) {
		vp->vdev.irq = line;
	} else {
		/* 0 and 0xff mean the firmware routed no line: the device is then polled. */
		vp->vdev.irq = d->irq_pin && d->irq_line && d->irq_line != 0xff ? d->irq_line : 0;
	}
	printk("virtio-pci: %s: device id %u, %s line %u\n", vp->vdev.name, vp->vdev.id,
	       vp->msix ? "MSI-X" : "interrupt", vp->vdev.irq);
	if (virtio_add_device(&vp->vdev))
		kfree(vp);
}

static bool virtio_pci_modern(const struct pci_dev *d)
{
	return d->vendor == VIRTIO_PCI_VENDOR && d->device >= VIRTIO_PCI_MODERN_BASE &&
	       d->device <= VIRTIO_PCI_MODERN_LAST;
}

/*
 * Memory decoding for the BARs, bus mastering for the rings, and INTx on. The first
 * two change the machine's memory map, as the scan's BAR sizing does: all are done
 * here, before the other CPUs start (virtio_prepare()).
 */
static void virtio_pci_prepare_all(void)
{
	unsigned n = pci_scan();
	for (unsigned i = 0; i < n; i++) {
		struct pci_dev *d = pci_device(i);
		if (!virtio_pci_modern(d))
			continue;
		u16 cmd = pci_read16(d, PCI_COMMAND);
		pci_write16(d, PCI_COMMAND,
			    (cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER) &
				~PCI_COMMAND_INTX_DISABLE);
	}
}

static void virtio_pci_probe_all(void)
{
	unsigned n = pci_scan();
	for (unsigned i = 0; i < n; i++) {
		struct pci_dev *d = pci_device(i);
		if (d->vendor != VIRTIO_PCI_VENDOR)
			continue;
		if (!virtio_pci_modern(d)) {
			printk("virtio-pci: %02x:%02x.%u: legacy device %04x, not supported\n",
			       d->bus, d->dev, d->fn, d->device);
			continue;
		}
		virtio_pci_probe(d);
	}
}
VIRTIO_TRANSPORT(pci, virtio_pci_prepare_all, virtio_pci_probe_all);

/*
 * The virtio-mmio transport, version 2 (virtio 1.1, 4.2.2): a device's registers in
 * one page of MMIO, found as a "virtio,mmio" node of the device tree (boot_info's
 * virtio_mmio[], filled by the FDT scan). Version 1 is the legacy interface, with
 * page-frame queue addresses and the guest's byte order; QEMU offers it unless told
 * -global virtio-mmio.force-legacy=false, and it is skipped here with a message.
 * A slot without a device reads device id 0.
 *
 * Registers are 32 bits wide; the device-specific configuration space from 0x100 is
 * read bytewise, which every device must accept.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/virtio.h>
#include <asm/io.h>

#define VIRTIO_MMIO_MAGIC_VALUE 0x000
#define VIRTIO_MMIO_VERSION 0x004
#define VIRTIO_MMIO_DEVICE_ID 0x008
#define VIRTIO_MMIO_DEVICE_FEATURES 0x010
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014
#define VIRTIO_MMIO_DRIVER_FEATURES 0x020
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024
#define VIRTIO_MMIO_QUEUE_SEL 0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX 0x034
#define VIRTIO_MMIO_QUEUE_NUM 0x038
#define VIRTIO_MMIO_QUEUE_READY 0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY 0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS 0x060
#define VIRTIO_MMIO_INTERRUPT_ACK 0x064
#define VIRTIO_MMIO_STATUS 0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW 0x080
#define VIRTIO_MMIO_QUEUE_DESC_HIGH 0x084
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW 0x090
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH 0x094
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW 0x0a0
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH 0x0a4
#define VIRTIO_MMIO_CONFIG 0x100

#define VIRTIO_MMIO_MAGIC 0x74726976 /* "virt" */
#define VIRTIO_MMIO_MODERN 2
#define VIRTIO_MMIO_MIN_SIZE 0x200 /* the registers and some configuration space */

struct virtio_mmio {
	uintptr_t base; /* virtual */
	struct virtio_device vdev;
};

static uintptr_t mmio_base(struct virtio_device *vdev)
{
	return ((struct virtio_mmio *)vdev->transport)->base;
}

static u64 vm_get_features(struct virtio_device *vdev)
{
	uintptr_t b = mmio_base(vdev);
	mmio_write32(b + VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	u64 high = mmio_read32(b + VIRTIO_MMIO_DEVICE_FEATURES);
	mmio_write32(b + VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	return high << 32 | mmio_read32(b + VIRTIO_MMIO_DEVICE_FEATURES);
}

static void vm_set_features(struct virtio_device *vdev, u64 features)
{
	uintptr_t b = mmio_base(vdev);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES, (u32)(features >> 32));
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	mmio_write32(b + VIRTIO_MMIO_DRIVER_FEATURES, (u32)features);
}

static u8 vm_get_status(struct virtio_device *vdev)
{
	return (u8)mmio_read32(mmio_base(vdev) + VIRTIO_MMIO_STATUS);
}

static void vm_set_status(struct virtio_device *vdev, u8 status)
{
	mmio_write32(mmio_base(vdev) + VIRTIO_MMIO_STATUS, status);
}

static u8 vm_config_read8(struct virtio_device *vdev, unsigned off)
{
	return mmio_read8(mmio_base(vdev) + VIRTIO_MMIO_CONFIG + off);
}

static u16 vm_queue_max(struct virtio_device *vdev, u16 index)
{
	uintptr_t b = mmio_base(vdev);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_SEL, index);
	/* A queue already in use is not ours to set up again. */
	if (mmio_read32(b + VIRTIO_MMIO_QUEUE_READY))
		return 0;
	u32 max = mmio_read32(b + VIRTIO_MMIO_QUEUE_NUM_MAX);
	return max > VIRTQ_MAX_SIZE ? VIRTQ_MAX_SIZE : (u16)max;
}

static void vm_notify(struct virtqueue *vq)
{
	/* The write orders after our ring stores: mmio_write32 has the arch's write fence. */
	mmio_write32(mmio_base(vq->vdev) + VIRTIO_MMIO_QUEUE_NOTIFY, vq->index);
}

static int vm_queue_enable(struct virtio_device *vdev, struct virtqueue *vq)
{
	uintptr_t b = mmio_base(vdev);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_SEL, vq->index);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_NUM, vq->num);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DESC_LOW, (u32)vq->desc_pa);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DESC_HIGH, (u32)(vq->desc_pa >> 32));
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DRIVER_LOW, (u32)vq->avail_pa);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (u32)(vq->avail_pa >> 32));
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DEVICE_LOW, (u32)vq->used_pa);
	mmio_write32(b + VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (u32)(vq->used_pa >> 32));
	mmio_write32(b + VIRTIO_MMIO_QUEUE_READY, 1);
	vq->notify = vm_notify;
	return mmio_read32(b + VIRTIO_MMIO_QUEUE_READY) == 1 ? 0 : -EIO;
}

static u32 vm_ack_interrupt(struct virtio_device *vdev)
{
	uintptr_t b = mmio_base(vdev);
	u32 isr = mmio_read32(b + VIRTIO_MMIO_INTERRUPT_STATUS);
	/* Acknowledged before the queues are read: a later use raises the line again. */
	mmio_write32(b + VIRTIO_MMIO_INTERRUPT_ACK, isr);
	return isr;
}

static const struct virtio_config_ops virtio_mmio_ops = {
    .get_features = vm_get_features,
    .set_features = vm_set_features,
    .get_status = vm_get_status,
    .set_status = vm_set_status,
    .config_read8 = vm_config_read8,
    .queue_max = vm_queue_max,
    .queue_enable = vm_queue_enable,
    .ack_interrupt = vm_ack_interrupt,
};

static void virtio_mmio_probe(const struct mmio_device_desc *d)
{
	if (d->size < VIRTIO_MMIO_MIN_SIZE) {
		pr_warn("virtio-mmio: %llx: %llu bytes of registers are too few\n",
			(unsigned long long)d->base, (unsigned long long)d->size);
		return;
	}
	uintptr_t base = (uintptr_t)ioremap(d->base, d->size);
	if (!base)
		return;
	u32 magic = mmio_read32(base + VIRTIO_MMIO_MAGIC_VALUE);
	u32 version = mmio_read32(base + VIRTIO_MMIO_VERSION);
	u32 id = mmio_read32(base + VIRTIO_MMIO_DEVICE_ID);
	if (magic != VIRTIO_MMIO_MAGIC) {
		pr_warn("virtio-mmio: %llx: bad magic %x\n", (unsigned long long)d->base, magic);
		return;
	}
	if (id == 0)
		return; /* an empty slot */
	if (version != VIRTIO_MMIO_MODERN) {
		pr_warn("virtio-mmio: %llx: version %u (legacy), only 2 is supported; QEMU needs "
			"-global virtio-mmio.force-legacy=false\n",
			(unsigned long long)d->base, version);
		return;
	}
	/* One per device for the kernel's life: the driver keeps pointers into it. */
	struct virtio_mmio *vm = kzalloc(sizeof(*vm));
	if (!vm)
		return;
	vm->base = base;
	vm->vdev.id = id;
	vm->vdev.ops = &virtio_mmio_ops;
	vm->vdev.transport = vm;
	vm->vdev.irq = d->irq;
	snprintf(vm->vdev.name, sizeof(vm->vdev.name), "virtio-mmio@%llx",
		 (unsigned long long)d->base);
	printk("virtio-mmio: %s: device id %u, interrupt %u\n", vm->vdev.name, id, d->irq);
	if (virtio_add_device(&vm->vdev))
		kfree(vm);
}

static void virtio_mmio_probe_all(void)
{
	for (unsigned i = 0; i < boot_info.nr_virtio_mmio; i++)
		virtio_mmio_probe(&boot_info.virtio_mmio[i]);
}
VIRTIO_TRANSPORT(mmio, NULL, virtio_mmio_probe_all);

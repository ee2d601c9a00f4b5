/*
 * The transport-independent part of a virtio device's life (virtio 1.1, 3.1): the
 * status handshake and feature negotiation, queue setup, the interrupt, and handing
 * a device to the driver for its id. A transport calls virtio_add_device() once per
 * device it found, at boot, from one thread; nothing here is reentered after that
 * except virtio_interrupt().
 */
#include <grace/arch.h>
#include <grace/compiler.h>
#include <grace/errno.h>
#include <asm/irq.h>
#include <grace/irq.h>
#include <grace/printk.h>
#include <grace/virtio.h>

/*
 * How often a device without a usable interrupt line is looked at: QEMU's multi-socket
 * riscv64 virt machine wires virtio-mmio to the second socket's PLIC, whose lines
 * plic.c does not deliver. 10 ms is the tick's period (HZ), so the poll costs what
 * one more ticking CPU would, and a ping round trip stays under a few periods.
 */
#define VIRTIO_POLL_NS (10 * 1000 * 1000ull)

static unsigned nr_devices; /* written at boot only (virtio_init runs on one thread) */

int virtio_negotiate(struct virtio_device *vdev, u64 wanted)
{
	const struct virtio_config_ops *ops = vdev->ops;
	ops->set_status(vdev, 0);
	ops->set_status(vdev, VIRTIO_STATUS_ACKNOWLEDGE);
	ops->set_status(vdev, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);

	u64 offered = ops->get_features(vdev);
	if (!(offered & (1ull << VIRTIO_F_VERSION_1))) {
		pr_warn("virtio: %s: no VIRTIO_F_VERSION_1 (a legacy-only device), skipped\n",
			vdev->name);
		virtio_device_fail(vdev);
		return -ENODEV;
	}
	vdev->features = offered & (wanted | 1ull << VIRTIO_F_VERSION_1);
	ops->set_features(vdev, vdev->features);
	ops->set_status(vdev, ops->get_status(vdev) | VIRTIO_STATUS_FEATURES_OK);
	/* The device says here whether it can work with the subset we took. */
	if (!(ops->get_status(vdev) & VIRTIO_STATUS_FEATURES_OK)) {
		pr_warn("virtio: %s: the device refused features %llx\n", vdev->name,
			vdev->features);
		virtio_device_fail(vdev);
		return -ENODEV;
	}
	return 0;
}

struct virtqueue *virtio_setup_vq(struct virtio_device *vdev, u16 index, u16 max_num,
				  void (*callback)(struct virtqueue *vq))
{
	if (vdev->nr_vqs == VIRTIO_MAX_VQS)
		return NULL;
	u16 dev_max = vdev->ops->queue_max(vdev, index);
	if (dev_max == 0)
		return NULL;
	/* The largest power of two under both limits: the ring arithmetic masks with num - 1. */
	u16 num = 1;
	while ((u32)num * 2 <= MIN(dev_max, max_num))
		num *= 2;
	struct virtqueue *vq = virtqueue_alloc(num, index);
	if (!vq)
		return NULL;
	vq->vdev = vdev;
	vq->callback = callback;
	int err = vdev->ops->queue_enable(vdev, vq);
	if (err) {
		pr_warn("virtio: %s: queue %u: %s\n", vdev->name, index, errno_name(err));
		virtqueue_free(vq);
		return NULL;
	}
	/* Published before the interrupt handler, which only runs once DRIVER_OK is set. */
	vdev->vqs[vdev->nr_vqs++] = vq;
	return vq;
}

void virtio_device_ready(struct virtio_device *vdev)
{
	vdev->ops->set_status(vdev, vdev->ops->get_status(vdev) | VIRTIO_STATUS_DRIVER_OK);
}

void virtio_device_fail(struct virtio_device *vdev)
{
	vdev->ops->set_status(vdev, vdev->ops->get_status(vdev) | VIRTIO_STATUS_FAILED);
}

/* The device's line fired: acknowledge it at the device, then let each queue's driver look. */
static void virtio_interrupt(void *arg)
{
	struct virtio_device *vdev = arg;
	u32 isr = vdev->ops->ack_interrupt(vdev);
	vdev->interrupts++;
	if (!(isr & VIRTIO_ISR_QUEUE))
		return;
	for (unsigned i = 0; i < vdev->nr_vqs; i++) {
		struct virtqueue *vq = vdev->vqs[i];
		if (vq->callback)
			vq->callback(vq);
	}
}

extern const struct virtio_transport __virtio_transports_start[], __virtio_transports_end[];
extern const struct virtio_driver __virtio_drivers_start[], __virtio_drivers_end[];

/* The poll timer: hard irq on the CPU that probed the device, as the line would be. */
static void virtio_poll(struct timer *t)
{
	struct virtio_device *vdev = container_of(t, struct virtio_device, poll);
	virtio_interrupt(vdev);
	timer_add(t, arch_clock_ns() + VIRTIO_POLL_NS);
}

int virtio_add_device(struct virtio_device *vdev)
{
	const struct virtio_driver *drv = __virtio_drivers_start;
	int err;

	while (drv < __virtio_drivers_end && drv->id != vdev->id)
		drv++;
	if (drv == __virtio_drivers_end) {
		printk("virtio: %s: device id %u, no driver\n", vdev->name, vdev->id);
		vdev->ops->set_status(vdev, 0);
		return -ENODEV;
	}
	err = drv->probe(vdev);
	if (err) {
		pr_warn("virtio: %s: driver probe failed: %s\n", vdev->name, errno_name(err));
		return err;
	}
	/*
	 * The driver has its queues and set DRIVER_OK, so the device may have raised its
	 * line already, while it was masked. An I/O APIC ignores a rising edge on a masked
	 * pin and samples a level one only when it changes (QEMU's does), so a line held high
	 * from before would never be delivered: once unmasked, run the handler ourselves,
	 * which reads the interrupt status and lowers the line, and the next use raises it
	 * afresh.
	 */
	err = vdev->irq ? irq_register(vdev->irq, virtio_interrupt, vdev) : -ENODEV;
	if (err) {
		printk("virtio: %s: no usable interrupt line (%s); polling every %llu ms\n",
		       vdev->name, errno_name(err), VIRTIO_POLL_NS / 1000000);
		timer_init(&vdev->poll, virtio_poll);
		timer_add(&vdev->poll, arch_clock_ns() + VIRTIO_POLL_NS);
	} else {
		unsigned long flags = arch_irq_save();
		virtio_interrupt(vdev);
		arch_irq_restore(flags);
	}
	nr_devices++;
	return 0;
}

unsigned virtio_nr_devices(void)
{
	return nr_devices;
}

void virtio_prepare(void)
{
	for (const struct virtio_transport *t = __virtio_transports_start;
	     t < __virtio_transports_end; t++)
		if (t->prepare)
			t->prepare();
}

void virtio_init(void)
{
	for (const struct virtio_transport *t = __virtio_transports_start;
	     t < __virtio_transports_end; t++)
		t->probe_all();
}

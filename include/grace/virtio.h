/*
 * Virtio 1.x devices (OASIS virtio spec v1.1): split virtqueues, the device status and
 * feature handshake, and the transports that reach a device's registers.
 *
 * A transport (virtio-mmio from the device tree, drivers/virtio/virtio_mmio.c; modern
 * virtio-pci from PCI enumeration, drivers/virtio/virtio_pci.c) fills a struct
 * virtio_device with its ops and calls virtio_add_device(), which claims the interrupt
 * line and hands the device to the driver for its device id (virtio-net,
 * drivers/net/virtio_net.c). The driver negotiates features, sets up its queues and
 * sets DRIVER_OK through the helpers below.
 *
 * Everything the device reads or writes in memory is little-endian (a virtio 1.x
 * device has no legacy byte order); both arches Grace runs on are, so the ring fields
 * are plain integers.
 */
#ifndef GRACE_VIRTIO_H
#define GRACE_VIRTIO_H

#include <grace/spinlock.h>
#include <grace/timer.h>
#include <grace/types.h>

/* Device ids (spec 5). */
#define VIRTIO_ID_NET 1

/* Device status bits (spec 2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER 2
#define VIRTIO_STATUS_DRIVER_OK 4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED 128

/* Transport-independent feature bits (spec 6). */
#define VIRTIO_F_VERSION_1 32 /* a modern device: little-endian, no legacy layout */

/* Split virtqueue layout (spec 2.6). */
#define VRING_DESC_F_NEXT 1  /* the chain continues at next */
#define VRING_DESC_F_WRITE 2 /* the device writes this buffer (else reads it) */
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY 1
#define VIRTQ_MAX_SIZE 32768 /* the spec's largest queue */

struct vring_desc {
	u64 addr; /* physical */
	u32 len;
	u16 flags;
	u16 next;
};

struct vring_avail {
	u16 flags;
	u16 idx; /* where the driver puts the next entry; free-running, wraps at 2^16 */
	u16 ring[];
};

struct vring_used_elem {
	u32 id;	 /* head of the chain the device is done with */
	u32 len; /* bytes it wrote into the chain's device-writable buffers */
};

struct vring_used {
	u16 flags;
	u16 idx; /* where the device puts the next entry; free-running */
	struct vring_used_elem ring[];
};

struct virtio_device;

/*
 * One split virtqueue: descriptor table, available ring and used ring in one
 * physically contiguous block. The driver serialises every call on one queue with
 * its own lock (interrupt handler and submitters alike); the rings themselves are
 * shared with the device and ordered by the barriers in virtio_ring.c.
 */
struct virtqueue {
	u16 num;       /* descriptors: a power of two */
	u16 index;     /* the queue's number on the device */
	u16 num_free;  /* descriptors on the free list */
	u16 free_head; /* first free descriptor, chained through next */
	u16 avail_idx; /* our copy of avail->idx: only we write it */
	u16 last_used; /* the next used entry to read */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	phys_addr_t desc_pa, avail_pa, used_pa;
	void **token; /* the caller's pointer, by head descriptor; NULL: free */
	void *mem;    /* the ring block, for virtqueue_free */
	unsigned mem_order;
	/* Tell the device there is new work (the transport's doorbell). */
	void (*notify)(struct virtqueue *vq);
	/* The device used buffers (from the interrupt; may be NULL). */
	void (*callback)(struct virtqueue *vq);
	struct virtio_device *vdev;
	void *priv;	   /* the transport's, e.g. the notify address */
	void *driver_priv; /* the driver's */
	u64 notifies;	   /* doorbells rung, for the tests and statistics */
};

/* A buffer of a chain: physical address and length. */
struct vq_buf {
	phys_addr_t addr;
	u32 len;
};

/* A queue of num descriptors (a power of two, 1..VIRTQ_MAX_SIZE), zeroed; NULL on ENOMEM. */
struct virtqueue *virtqueue_alloc(u16 num, u16 index);
void virtqueue_free(struct virtqueue *vq);
/*
 * Make a chain of out device-readable buffers then in device-writable ones and put it
 * in the available ring; token (not NULL) comes back from virtqueue_get_used().
 * 0, -EINVAL, or -ENOSPC when fewer than out + in descriptors are free. The queue's
 * lock held.
 */
int virtqueue_add(struct virtqueue *vq, const struct vq_buf *bufs, unsigned out, unsigned in,
		  void *token);
/* Ring the doorbell unless the device asked not to be notified. The queue's lock held. */
void virtqueue_kick(struct virtqueue *vq);
/*
 * The token of the next chain the device is done with, its descriptors freed, and in *len
 * the bytes the device wrote; NULL when none. The queue's lock held.
 */
void *virtqueue_get_used(struct virtqueue *vq, u32 *len);
/* Does the used ring hold entries we have not read? Lock-free peek. */
bool virtqueue_has_used(const struct virtqueue *vq);

/* ---- devices and transports ---- */

#define VIRTIO_MAX_VQS 4

struct virtio_config_ops {
	u64 (*get_features)(struct virtio_device *vdev);
	void (*set_features)(struct virtio_device *vdev, u64 features);
	u8 (*get_status)(struct virtio_device *vdev);
	void (*set_status)(struct virtio_device *vdev, u8 status); /* 0 resets the device */
	/* Byte off of the device-specific configuration space. */
	u8 (*config_read8)(struct virtio_device *vdev, unsigned off);
	/* The largest size queue index may have; 0 when the device has no such queue. */
	u16 (*queue_max)(struct virtio_device *vdev, u16 index);
	/* Give the device vq's ring addresses and size and enable it; sets vq->notify. */
	int (*queue_enable)(struct virtio_device *vdev, struct virtqueue *vq);
	/* Read and acknowledge the interrupt cause: bit 0 used buffers, bit 1 config change. */
	u32 (*ack_interrupt)(struct virtio_device *vdev);
};

#define VIRTIO_ISR_QUEUE 1
#define VIRTIO_ISR_CONFIG 2

struct virtio_device {
	u32 id; /* VIRTIO_ID_* */
	const struct virtio_config_ops *ops;
	void *transport; /* the transport's state */
	unsigned irq;	 /* interrupt line (PLIC source, ISA IRQ/GSI); 0: none */
	u64 features;	 /* negotiated */
	char name[32];	 /* where it was found, for messages: "virtio-mmio@10008000" */
	struct virtqueue *vqs[VIRTIO_MAX_VQS];
	unsigned nr_vqs;
	void *priv;	   /* the driver's */
	u64 interrupts;	   /* taken (or polls run), for the tests */
	struct timer poll; /* without a usable line: runs the handler every VIRTIO_POLL_NS */
};

/*
 * Reset, ACKNOWLEDGE and DRIVER, then accept the device's features that are in wanted
 * (VIRTIO_F_VERSION_1 always) and check FEATURES_OK. 0, or -ENODEV for a device
 * without VERSION_1 or one that refuses the set (the device is left FAILED).
 */
int virtio_negotiate(struct virtio_device *vdev, u64 wanted);
static inline bool virtio_has_feature(const struct virtio_device *vdev, unsigned bit)
{
	return vdev->features & (1ull << bit);
}
/* Queue index with at most max_num descriptors, enabled on the device; NULL on failure. */
struct virtqueue *virtio_setup_vq(struct virtio_device *vdev, u16 index, u16 max_num,
				  void (*callback)(struct virtqueue *vq));
/* Set DRIVER_OK: the device may use the queues from now on. */
void virtio_device_ready(struct virtio_device *vdev);
/* Mark the device FAILED after a setup error (the driver gives up on it). */
void virtio_device_fail(struct virtio_device *vdev);

/* A transport found vdev: claim its interrupt and probe its driver. 0 or -errno. */
int virtio_add_device(struct virtio_device *vdev);
/* Devices virtio_add_device() gave to a driver that took them. */
unsigned virtio_nr_devices(void);

/*
 * What a transport must do to the machine before the other CPUs start, on the boot
 * CPU: for PCI, size the BARs and turn on decoding and bus mastering, each a change
 * to the machine's memory map (kernel/main.c says why that must come first).
 */
void virtio_prepare(void);
/* Find every virtio device the firmware or the PCI bus describes and probe its driver. */
void virtio_init(void);

/*
 * A transport registers its scan, and a driver its device id, where its code lives,
 * as shell commands and tests are added, so that virtio.c names neither:
 *
 *	VIRTIO_TRANSPORT(mmio, NULL, virtio_mmio_probe_all);
 *	VIRTIO_DRIVER(net, VIRTIO_ID_NET, virtio_net_probe);
 *
 * virtio_prepare() runs the transports' prepare steps (NULL: none), virtio_init() their
 * scans, each in link order; each device found goes to the driver whose id it has
 * (virtio_add_device()).
 */
struct virtio_transport {
	const char *name;
	void (*prepare)(void);	 /* before the other CPUs start; NULL: nothing to do */
	void (*probe_all)(void); /* find the devices, virtio_add_device() each */
};
struct virtio_driver {
	const char *name;
	u32 id;					  /* VIRTIO_ID_* */
	int (*probe)(struct virtio_device *vdev); /* 0, or -errno and the device left alone */
};

#define VIRTIO_TRANSPORT(name_, prepare_, probe_all_)                                              \
	static const struct virtio_transport __virtio_transport_##name_ __section(                 \
	    ".virtio_transports") __used __aligned(8) = {#name_, prepare_, probe_all_}
#define VIRTIO_DRIVER(name_, id_, fn)                                                              \
	static const struct virtio_driver __virtio_driver_##name_ __section(".virtio_drivers")     \
	    __used __aligned(8) = {#name_, id_, fn}

#endif

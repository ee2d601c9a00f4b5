/*
 * Split virtqueues (virtio 1.1, 2.6): the driver's half of the three rings a device
 * shares with us.
 *
 * Layout: one block from the page allocator, physically contiguous because the
 * device reaches it by physical address: the descriptor table (16 bytes each), then
 * the available ring (flags, idx, num entries, used_event) at 2-byte alignment, then
 * the used ring (flags, idx, num 8-byte entries, avail_event) rounded up to 4 bytes
 * as the spec asks. Modern transports take the three addresses apart, so nothing
 * needs the legacy page-aligned used ring.
 *
 * Free descriptors form a list through their next fields, headed by free_head. A
 * chain taken from it is written completely, then its head goes into the available
 * ring, and only then does avail->idx move (a release store: the device that sees
 * the new idx sees the entry and the descriptors). The device does the reverse on
 * the used ring, so we read used->idx with acquire before the entries it covers.
 * Both indices run free and wrap at 2^16; entry i lives at slot i % num, which the
 * power-of-two size keeps consistent across the wrap.
 *
 * These are Linux's weak barriers (virtio_wmb/virtio_rmb as smp_ barriers): enough
 * for a device that is another CPU, which is what a virtio device without
 * VIRTIO_F_ACCESS_PLATFORM is; the doorbell write itself is ordered after our stores
 * by the arch's MMIO accessors (riscv64: fence w,o).
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/virtio.h>
#include <asm/memory.h>

#define VRING_USED_ALIGN 4

static size_t vring_avail_size(u16 num)
{
	return sizeof(struct vring_avail) + sizeof(u16) * num + sizeof(u16); /* + used_event */
}

static size_t vring_used_size(u16 num)
{
	return sizeof(struct vring_used) + sizeof(struct vring_used_elem) * num +
	       sizeof(u16); /* + avail_event */
}

struct virtqueue *virtqueue_alloc(u16 num, u16 index)
{
	if (num == 0 || num > VIRTQ_MAX_SIZE || (num & (num - 1)))
		return NULL;
	size_t avail_off = sizeof(struct vring_desc) * num;
	size_t used_off = ALIGN_UP(avail_off + vring_avail_size(num), VRING_USED_ALIGN);
	size_t bytes = used_off + vring_used_size(num);
	unsigned order = pages_order(bytes);
	if (order > MAX_ORDER)
		return NULL;

	struct virtqueue *vq = kzalloc(sizeof(*vq));
	void **token = kzalloc(sizeof(void *) * num);
	u8 *mem = alloc_pages(order); /* zeroed: both ring indices start at 0 */
	if (!vq || !token || !mem) {
		kfree(vq);
		kfree(token);
		free_pages(mem, order);
		return NULL;
	}
	vq->num = num;
	vq->index = index;
	vq->mem = mem;
	vq->mem_order = order;
	vq->token = token;
	vq->desc = (struct vring_desc *)mem;
	vq->avail = (struct vring_avail *)(mem + avail_off);
	vq->used = (struct vring_used *)(mem + used_off);
	vq->desc_pa = virt_to_phys(vq->desc);
	vq->avail_pa = virt_to_phys(vq->avail);
	vq->used_pa = virt_to_phys(vq->used);
	for (u16 i = 0; i + 1 < num; i++)
		vq->desc[i].next = i + 1;
	vq->free_head = 0;
	vq->num_free = num;
	return vq;
}

void virtqueue_free(struct virtqueue *vq)
{
	if (!vq)
		return;
	free_pages(vq->mem, vq->mem_order);
	kfree(vq->token);
	kfree(vq);
}

int virtqueue_add(struct virtqueue *vq, const struct vq_buf *bufs, unsigned out, unsigned in,
		  void *token)
{
	unsigned total = out + in;
	if (total == 0 || !token)
		return -EINVAL;
	if (total > vq->num_free)
		return -ENOSPC;

	u16 head = vq->free_head, i = head, last = head;
	for (unsigned n = 0; n < total; n++) {
		struct vring_desc *d = &vq->desc[i];
		d->addr = bufs[n].addr;
		d->len = bufs[n].len;
		d->flags =
		    (n >= out ? VRING_DESC_F_WRITE : 0) | (n + 1 < total ? VRING_DESC_F_NEXT : 0);
		last = i;
		i = d->next; /* the free list's link becomes the chain's */
	}
	vq->free_head = vq->desc[last].next;
	vq->num_free -= total;
	vq->token[head] = token;

	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = head;
	vq->avail_idx++;
	/*
	 * The descriptors and the ring entry before the index that publishes them. Pairs
	 * with the device's read barrier between reading avail->idx and the entries.
	 */
	smp_store_release(&vq->avail->idx, vq->avail_idx);
	return 0;
}

void virtqueue_kick(struct virtqueue *vq)
{
	/*
	 * Our avail->idx store before the read of the device's flags: a device that set
	 * NO_NOTIFY and then checks avail->idx one last time before sleeping either sees
	 * our entry or has cleared the flag by the time we read it (spec 2.6.10.1). Pairs
	 * with the device's full barrier between its flags write and its idx read.
	 */
	smp_mb();
	if (READ_ONCE(vq->used->flags) & VRING_USED_F_NO_NOTIFY)
		return;
	vq->notifies++;
	vq->notify(vq);
}

bool virtqueue_has_used(const struct virtqueue *vq)
{
	return READ_ONCE(vq->used->idx) != vq->last_used;
}

/* Put the chain that starts at head back on the free list. */
static void vring_free_chain(struct virtqueue *vq, u16 head)
{
	u16 i = head, n = 1;
	while ((vq->desc[i].flags & VRING_DESC_F_NEXT) && n < vq->num) {
		i = vq->desc[i].next & (vq->num - 1);
		n++;
	}
	vq->desc[i].next = vq->free_head;
	vq->desc[i].flags = 0;
	vq->free_head = head;
	vq->num_free += n;
}

void *virtqueue_get_used(struct virtqueue *vq, u32 *len)
{
	/*
	 * used->idx before the entries it covers. Pairs with the device's write barrier
	 * between writing an entry and moving used->idx.
	 */
	u16 used_idx = smp_load_acquire(&vq->used->idx);
	if (used_idx == vq->last_used)
		return NULL;
	struct vring_used_elem e = vq->used->ring[vq->last_used & (vq->num - 1)];
	vq->last_used++;
	if (e.id >= vq->num || !vq->token[e.id]) {
		/* A device bug; the entry is skipped rather than free descriptors twice. */
		pr_warn("virtio: queue %u: used entry names descriptor %u, not one in flight\n",
			vq->index, e.id);
		return NULL;
	}
	void *token = vq->token[e.id];
	vq->token[e.id] = NULL;
	vring_free_chain(vq, (u16)e.id);
	if (len)
		*len = e.len;
	return token;
}

/*
 * Selftests for the split virtqueue (drivers/virtio/virtio_ring.c), against a fake
 * device that lives in this file: it reads the available ring as a device would
 * (acquire on avail->idx), checks each chain's descriptors against what was added, and
 * returns the chains through the used ring (release on used->idx).
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/virtio.h>

struct fake_device {
	u16 last_avail; /* the next available entry the device reads */
	u16 used_idx;	/* the device's used->idx */
	unsigned chains, descs;
	bool bad; /* a chain did not look as expected */
};

/* What a chain of the tests carries: out readable buffers, then in writable ones. */
struct chain_spec {
	unsigned out, in;
	phys_addr_t base; /* buffer n is at base + n */
};

/*
 * Use every chain the driver made available, checking it against specs[chain % nr], and
 * report `written` bytes for each.
 */
static void fake_device_run(struct virtqueue *vq, struct fake_device *fd,
			    const struct chain_spec *specs, unsigned nr, u32 written)
{
	/* Pairs with the release in virtqueue_add(): the entries and descriptors are there. */
	u16 avail = smp_load_acquire(&vq->avail->idx);
	for (; fd->last_avail != avail; fd->last_avail++) {
		const struct chain_spec *s = &specs[fd->chains % nr];
		u16 head = vq->avail->ring[fd->last_avail & (vq->num - 1)], i = head;
		for (unsigned n = 0; n < s->out + s->in; n++) {
			const struct vring_desc *d = &vq->desc[i];
			bool want_write = n >= s->out, want_next = n + 1 < s->out + s->in;
			if (d->addr != s->base + n ||
			    !!(d->flags & VRING_DESC_F_WRITE) != want_write ||
			    !!(d->flags & VRING_DESC_F_NEXT) != want_next)
				fd->bad = true;
			i = d->next & (vq->num - 1);
			fd->descs++;
		}
		vq->used->ring[fd->used_idx & (vq->num - 1)] =
		    (struct vring_used_elem){head, written};
		fd->used_idx++;
		fd->chains++;
	}
	/* Pairs with the acquire in virtqueue_get_used(). */
	smp_store_release(&vq->used->idx, fd->used_idx);
}

static int add_chain(struct virtqueue *vq, const struct chain_spec *s, void *token)
{
	struct vq_buf bufs[8];
	for (unsigned n = 0; n < s->out + s->in; n++)
		bufs[n] = (struct vq_buf){s->base + n, 100 + n};
	return virtqueue_add(vq, bufs, s->out, s->in, token);
}

TEST(virtio_ring, chains_come_back_in_order_and_free_their_descriptors)
{
	struct virtqueue *vq = virtqueue_alloc(8, 0);
	ASSERT_TRUE(vq != NULL);
	const struct chain_spec specs[] = {{2, 1, 0x1000}, {1, 0, 0x2000}, {0, 2, 0x3000}};
	int tokens[3];
	for (unsigned i = 0; i < 3; i++)
		EXPECT_EQ(add_chain(vq, &specs[i], &tokens[i]), 0);
	EXPECT_EQ(vq->num_free, 8 - 6);
	/* Three more do not fit in the two that are left, and nothing changes. */
	EXPECT_EQ(add_chain(vq, &specs[0], &tokens[0]), -ENOSPC);
	EXPECT_EQ(vq->num_free, 2);
	EXPECT_EQ(vq->avail->idx, 3);

	EXPECT_TRUE(virtqueue_get_used(vq, NULL) == NULL);
	EXPECT_FALSE(virtqueue_has_used(vq));
	struct fake_device fd = {0};
	fake_device_run(vq, &fd, specs, 3, 64);
	EXPECT_FALSE(fd.bad);
	EXPECT_EQ(fd.descs, 6);
	EXPECT_TRUE(virtqueue_has_used(vq));
	for (unsigned i = 0; i < 3; i++) {
		u32 len = 0;
		EXPECT_TRUE(virtqueue_get_used(vq, &len) == &tokens[i]);
		EXPECT_EQ(len, 64);
	}
	EXPECT_TRUE(virtqueue_get_used(vq, NULL) == NULL);
	EXPECT_EQ(vq->num_free, 8);
	/* The whole table is one free chain again: a chain of all 8 fits. */
	const struct chain_spec all = {4, 4, 0x4000};
	EXPECT_EQ(add_chain(vq, &all, &tokens[0]), 0);
	EXPECT_EQ(vq->num_free, 0);
	fake_device_run(vq, &fd, &all, 1, 0);
	EXPECT_FALSE(fd.bad);
	EXPECT_TRUE(virtqueue_get_used(vq, NULL) == &tokens[0]);
	EXPECT_EQ(vq->num_free, 8);
	virtqueue_free(vq);
}

/* 2^16 + some round trips: both free-running indices wrap and the slots stay right. */
#define WRAP_ROUNDS 70000

TEST(virtio_ring, indices_wrap_at_65536)
{
	struct virtqueue *vq = virtqueue_alloc(4, 0);
	ASSERT_TRUE(vq != NULL);
	const struct chain_spec specs[] = {{1, 0, 0x10}, {1, 2, 0x20}, {0, 1, 0x30}};
	struct fake_device fd = {0};
	int token;
	unsigned lost = 0;
	for (unsigned r = 0; r < WRAP_ROUNDS; r++) {
		if (add_chain(vq, &specs[r % 3], &token)) {
			lost++;
			break;
		}
		fake_device_run(vq, &fd, specs, 3, r);
		u32 len = ~0u;
		if (virtqueue_get_used(vq, &len) != &token || len != r)
			lost++;
	}
	EXPECT_EQ(lost, 0);
	EXPECT_FALSE(fd.bad);
	EXPECT_EQ(fd.chains, WRAP_ROUNDS);
	EXPECT_EQ(vq->avail->idx, (u16)WRAP_ROUNDS);
	EXPECT_EQ(vq->last_used, (u16)WRAP_ROUNDS);
	EXPECT_EQ(vq->num_free, 4);
	virtqueue_free(vq);
}

static unsigned notified;

static void count_notify(struct virtqueue *vq)
{
	notified++;
}

TEST(virtio_ring, kick_rings_unless_the_device_says_no_notify)
{
	struct virtqueue *vq = virtqueue_alloc(2, 1);
	ASSERT_TRUE(vq != NULL);
	vq->notify = count_notify;
	notified = 0;
	virtqueue_kick(vq);
	EXPECT_EQ(notified, 1);
	WRITE_ONCE(vq->used->flags, VRING_USED_F_NO_NOTIFY);
	virtqueue_kick(vq);
	EXPECT_EQ(notified, 1);
	EXPECT_EQ(vq->notifies, 1);
	virtqueue_free(vq);
}

TEST(virtio_ring, bad_sizes_and_used_entries_are_refused)
{
	EXPECT_TRUE(virtqueue_alloc(0, 0) == NULL);
	EXPECT_TRUE(virtqueue_alloc(3, 0) == NULL);
	EXPECT_TRUE(virtqueue_alloc(65535, 0) == NULL);
	struct virtqueue *vq = virtqueue_alloc(4, 0);
	ASSERT_TRUE(vq != NULL);
	int token;
	struct vq_buf b = {0x1000, 10};
	EXPECT_EQ(virtqueue_add(vq, &b, 0, 0, &token), -EINVAL);
	EXPECT_EQ(virtqueue_add(vq, &b, 1, 0, NULL), -EINVAL);
	/* A device that returns a descriptor that is not in flight frees nothing. */
	vq->used->ring[0] = (struct vring_used_elem){2, 0};
	smp_store_release(&vq->used->idx, 1);
	EXPECT_TRUE(virtqueue_get_used(vq, NULL) == NULL);
	EXPECT_EQ(vq->num_free, 4);
	virtqueue_free(vq);
}

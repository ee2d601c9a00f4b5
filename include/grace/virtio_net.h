#ifndef GRACE_VIRTIO_NET_H
#define GRACE_VIRTIO_NET_H

#include <grace/netdevice.h>

/*
 * The transmit ring of a virtio-net device, for tests that need it in a given state.
 * Both return -ENODEV for a device that is not virtio-net.
 */
int virtio_net_hold_tx(struct net_device *dev, bool hold); /* post, do not notify */
int virtio_net_tx_in_flight(struct net_device *dev);	   /* descriptors not yet reaped */

#endif

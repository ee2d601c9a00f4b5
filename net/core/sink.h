/*
 * sink0's knobs, for the benchmark and the selftests (net/core/sink.c). Nothing
 * but them and the shell includes this.
 */
#ifndef NET_CORE_SINK_H
#define NET_CORE_SINK_H

#include <grace/netdevice.h>

/* The longest per-packet cost accepted: a millisecond, far past any driver's. */
#define SINK_COST_MAX_NS 1000000ull

struct net_device *sink_dev(void);
/* Busy time per packet spent holding the sink's lock; -EINVAL above SINK_COST_MAX_NS. */
int sink_set_cost_ns(u64 ns);
u64 sink_cost_ns(void);
/*
 * Called with every packet the sink takes, under the sink's lock (so in the order
 * they were sent, one at a time), before it is freed; NULL for none. The caller
 * keeps fn valid until it has set another and the packets in flight are done.
 */
void sink_set_rx_hook(void (*fn)(struct sk_buff *skb));

#endif

/*
 * What net/core's files offer one another at boot: net_core_init() (dev.c) sets
 * up the sk_buff caches and then registers the two software devices.
 */
#ifndef NET_CORE_CORE_H
#define NET_CORE_CORE_H

void skb_init(void);
/* 0 or -errno: register lo and sink0. */
int loopback_init(void);
int sink_init(void);

#endif

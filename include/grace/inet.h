/*
 * IPv4 and what runs on it here: ARP, ICMP echo, UDP sockets. Wire formats are
 * in network byte order (htons/htonl); addresses are u32 in network order.
 *
 * Receive runs in the NET_RX softirq (net_rx_handler): every malformed,
 * truncated, oversized, wrong-checksum, wrong-version or wrong-length packet,
 * every ARP reply nobody asked for, and every datagram for a full socket queue
 * is dropped and counted by reason (inet_drops).
 */
#ifndef GRACE_INET_H
#define GRACE_INET_H

#include <grace/netdevice.h>
#include <grace/types.h>
#include <grace/wait.h>

#define ETH_P_IP 0x0800
#define ETH_P_ARP 0x0806
#define IPPROTO_ICMP 1
#define IPPROTO_UDP 17

/*
 * Shifts, not __builtin_bswap*: without Zbb, riscv64 GCC turns a byte swap of a
 * variable into a call to libgcc's __bswapsi2, which a freestanding kernel lacks.
 * The shifts fold to a constant for constants (static initializers included) and
 * to a bswap where the CPU has one. Both arches are little-endian.
 */
#define INET_SWAB32(v)                                                                             \
	((u32)(((u32)(v) << 24) | (((u32)(v)&0xff00) << 8) | (((u32)(v) >> 8) & 0xff00) |          \
	       ((u32)(v) >> 24)))
static inline u16 htons(u16 v)
{
	return (u16)(v << 8 | v >> 8);
}
static inline u32 htonl(u32 v)
{
	return INET_SWAB32(v);
}
#define ntohs htons
#define ntohl htonl
/* a.b.c.d in network order */
#define IPV4(a, b, c, d) INET_SWAB32(((u32)(a) << 24) | ((u32)(b) << 16) | ((u32)(c) << 8) | (d))

struct ethhdr {
	u8 h_dest[ETH_ALEN], h_source[ETH_ALEN];
	u16 h_proto;
} __attribute__((packed));

struct iphdr {
	u8 ihl_version; /* version 4 in the high nibble, header words in the low */
	u8 tos;
	u16 tot_len, id, frag_off;
	u8 ttl, protocol;
	u16 check;
	u32 saddr, daddr;
} __attribute__((packed));

struct udphdr {
	u16 source, dest, len, check;
} __attribute__((packed));

struct icmphdr {
	u8 type, code;
	u16 checksum, id, sequence;
} __attribute__((packed));

struct arphdr {
	u16 ar_hrd, ar_pro;
	u8 ar_hln, ar_pln;
	u16 ar_op;
	u8 ar_sha[ETH_ALEN];
	u32 ar_sip;
	u8 ar_tha[ETH_ALEN];
	u32 ar_tip;
} __attribute__((packed));

/* The Internet checksum (RFC 1071) of len bytes, folded, not inverted, added to sum. */
u32 csum_partial(const void *data, size_t len, u32 sum);
u16 csum_fold(u32 sum);
/* The UDP checksum of a datagram (header and payload, len bytes) from saddr to daddr. */
u16 udp_checksum(u32 saddr, u32 daddr, const void *udp, size_t len);

/*
 * Send skb (data at the transport header) as an IPv4 packet of protocol to daddr,
 * from the address of the device its route leaves by. 0 or -errno (-ENETUNREACH,
 * -EMSGSIZE past the device's MTU: no fragmentation); skb is consumed either way.
 */
int ip_output(struct sk_buff *skb, u32 daddr, u8 protocol, u8 tos);

/*
 * The receive path: a frame (skb->dev set, data at the Ethernet header), consumed.
 * It is what net_init() installs as net_rx_handler; any thread may call it too.
 */
void inet_rcv(struct sk_buff *skb);

/*
 * Give dev the address addr/mask (network order), add the on-link route to its
 * subnet and, if gateway is not 0, a default route through gateway; an address
 * the device had goes, with its subnet's on-link route through dev, and the route
 * cache is flushed. 0 or -errno (-EINVAL for a zero address or a mask that is not
 * a prefix, -EEXIST, -ENOMEM). Thread context.
 */
int inet_add_device(struct net_device *dev, u32 addr, u32 mask, u32 gateway);
/* Is addr (network order) one a device of ours has? */
bool inet_addr_is_local(u32 addr);
/* "a.b.c.d/n" (n in 1..32) into *addr and *mask, network order: 0 or -EINVAL. */
int inet_parse_prefix(const char *s, u32 *addr, u32 *mask);
/* Dotted quad "a.b.c.d" (each 0-255, decimal) into *addr, network order: 0 or -EINVAL. */
int inet_parse_addr(const char *s, u32 *addr);
#define INET_ADDRSTRLEN 16
/* addr as "a.b.c.d" in buf (INET_ADDRSTRLEN bytes); returns buf. */
char *inet_format_addr(u32 addr, char *buf);

/* Why a received packet was dropped; inet_drops(reason) counts them. */
enum inet_drop {
	DROP_ETH_SHORT,	      /* shorter than an Ethernet header */
	DROP_ETH_PROTO,	      /* neither IPv4 nor ARP */
	DROP_ETH_OTHERHOST,   /* unicast to another station's MAC (a promiscuous device) */
	DROP_IP_SHORT,	      /* truncated IPv4 header */
	DROP_IP_VERSION,      /* not version 4 */
	DROP_IP_HDR_LEN,      /* header length below 20 or past the packet */
	DROP_IP_LEN,	      /* total length past the packet or below the header */
	DROP_IP_CSUM,	      /* bad header checksum */
	DROP_IP_FRAGMENT,     /* fragments are not reassembled */
	DROP_IP_NOT_OURS,     /* for another address */
	DROP_IP_MARTIAN_SRC,  /* from a broadcast, multicast, 0/8 or (off lo) 127/8 address */
	DROP_IP_OPTIONS,      /* a malformed option (a length past the header, a bad pointer) */
	DROP_IP_SOURCE_ROUTE, /* a source route option: not accepted (Linux's default) */
	DROP_IP_PROTO,	      /* no handler for the protocol */
	DROP_UDP_SHORT,	      /* truncated UDP header */
	DROP_UDP_LEN,	      /* UDP length disagrees with the IP payload */
	DROP_UDP_CSUM,	      /* bad UDP checksum */
	DROP_UDP_NO_PORT,     /* nobody bound the port */
	DROP_UDP_QUEUE_FULL,  /* the socket's receive queue is full */
	DROP_ICMP_SHORT,      /* truncated ICMP */
	DROP_ICMP_CSUM,	      /* bad ICMP checksum */
	DROP_ICMP_BROADCAST,  /* to a broadcast address (echo included: no smurf replies) */
	DROP_ARP_SHORT,	      /* truncated ARP */
	DROP_ARP_BAD,	      /* not Ethernet/IPv4, or a bad opcode */
	DROP_ARP_UNSOLICITED, /* a reply nobody asked for */
	DROP_ARP_BAD_SHA,     /* a broadcast or multicast sender MAC */
	DROP_TX_OVERSIZE,     /* a datagram too big for one frame (no fragmentation) */
	NR_INET_DROPS
};
u64 inet_drops(enum inet_drop reason);
const char *inet_drop_name(enum inet_drop reason);
/* Count one drop for reason, on this CPU. Any context. */
void inet_drop_count(enum inet_drop reason);

/* ARP (RFC 826) over Ethernet: who has ip? Broadcast on dev from dev->ipv4_addr. */
void arp_send_request(struct net_device *dev, u32 ip);
/*
 * A received ARP packet (skb->dev set, skb->data at the ARP header); it owns skb.
 * Answers requests for dev->ipv4_addr, completes the neighbour entries that
 * asked, and counts what it drops (DROP_ARP_*).
 */
void arp_rcv(struct sk_buff *skb);

/*
 * What the receive path did with the frames it was not dropping, per CPU and
 * summed on read: every frame into inet_rcv() ends as exactly one drop (of a
 * reason other than the DROP_ARP_* ones, which arp_rcv() counts among the
 * frames handed to it) or one of INET_RX_ARP, INET_RX_UDP, INET_RX_ICMP.
 */
enum inet_stat {
	INET_RX_FRAMES,	      /* into inet_rcv() */
	INET_RX_ARP,	      /* handed to arp_rcv() */
	INET_RX_UDP,	      /* queued to a socket */
	INET_RX_ICMP,	      /* taken by ICMP: an echo request answered, any other message read */
	INET_TX_PACKETS,      /* IPv4 packets ip_output() handed to the neighbour layer */
	INET_TX_ICMP_REPLIES, /* echo replies sent */
	NR_INET_STATS
};
u64 inet_stat(enum inet_stat s);
const char *inet_stat_name(enum inet_stat s);

/* UDP sockets, shaped like the calls of the same names; -errno on failure. */
struct udp_sock;
struct udp_sock *udp_socket(void);
/* Bind to port (host order; 0: an ephemeral one) on any address. */
int udp_bind(struct udp_sock *s, u16 port);
/*
 * Bind to addr (network order; 0: any) and port, as bind() does: -EADDRNOTAVAIL
 * for an address that is not this host's, -EINVAL if s has a port already,
 * -EADDRINUSE. Another socket's port is refused whatever its address (one
 * socket per port, where Linux lets two addresses share one).
 */
int udp_bind_addr(struct udp_sock *s, u32 addr, u16 port);
u16 udp_port(const struct udp_sock *s);
/* An ephemeral port if s has none (what a send or connect does first): 0 or -EADDRINUSE. */
int udp_autobind(struct udp_sock *s);
/*
 * connect(): s sends to daddr:dport by default and takes datagrams only from
 * there, from the source address the route gives (unless bound to one); an
 * unbound s gets an ephemeral port first. 0.0.0.0 is this host. 0, -EAGAIN (no
 * port free), -ENETUNREACH, -EACCES (the broadcast address).
 */
int udp_connect(struct udp_sock *s, u32 daddr, u16 dport);
/* connect() to AF_UNSPEC: no peer, and the address and port bind() did not fix are let go. */
void udp_disconnect(struct udp_sock *s);
/* s's own address and port (peer false) or its peer's: 0, or -ENOTCONN for no peer. */
int udp_getname(struct udp_sock *s, bool peer, u32 *addr, u16 *port);
/* Send len bytes to daddr:dport (host-order port). The bytes sent, or -errno. */
long udp_sendto(struct udp_sock *s, const void *buf, size_t len, u32 daddr, u16 dport);
/*
 * The same with the datagram in a copy cursor, all it holds: -EFAULT, and
 * nothing sent, if it cannot all be copied (Linux's udp_sendmsg()).
 */
struct iov_iter;
long udp_sendto_iter(struct udp_sock *s, struct iov_iter *from, u32 daddr, u16 dport);
/* Send to the peer connect() gave: the bytes sent, -EDESTADDRREQ if none, or -errno. */
long udp_send(struct udp_sock *s, struct iov_iter *from);
/*
 * Receive one datagram, waiting up to timeout_ns (0: not at all; UINT64_MAX: for ever): its
 * length (cut to len), or -EAGAIN. *saddr and *sport, if not NULL, say who sent it.
 */
long udp_recvfrom(struct udp_sock *s, void *buf, size_t len, u32 *saddr, u16 *sport,
		  u64 timeout_ns);
/*
 * The first datagram waiting, without waiting: as much of it as the cursor has
 * room for copied there, its sender into *saddr and *sport; its whole length,
 * or -EAGAIN if none is queued. peek leaves it queued (MSG_PEEK). A copy that
 * faults gives -EFAULT, and the datagram is gone unless peek, as on Linux
 * (udp_recvmsg()).
 */
long udp_recv_one(struct udp_sock *s, struct iov_iter *to, u32 *saddr, u16 *sport, bool peek);
/* Sleep until a datagram waits on s: 0, or -ERESTARTSYS when a signal comes first. */
int udp_wait_rcv(struct udp_sock *s);
/* fn is called (in the receive softirq) after each datagram queued on s: poll's wake-up. */
void udp_set_data_ready(struct udp_sock *s, void (*fn)(void));
void udp_close(struct udp_sock *s);
#define UDP_RCVQ_MAX 64 /* datagrams a socket queues before it drops */
/* Datagrams waiting on s now. */
u32 udp_rcvq_len(struct udp_sock *s);
/* Call fn on every bound socket (netstat), under the port table's lock: fn must not sleep. */
void udp_for_each(void (*fn)(u16 port, u32 rcvq, u64 drops, void *arg), void *arg);

/* The UDP echo service (RFC 862) on port 7, started once networking is up. */
#define UDP_ECHO_PORT 7
/* Datagrams the echo service sent back since boot. */
u64 udp_echo_count(void);

/* ICMP echo: send one request to daddr and wait for the reply; its round trip in ns, or -errno. */
s64 icmp_ping(u32 daddr, u16 seq, u64 timeout_ns);

/* Bring networking up: loopback, the sink, the drivers' devices, the echo service. */
void net_init(void);

#endif

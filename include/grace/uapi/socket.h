/*
 * The socket interface of Linux's ABI (include/linux/socket.h, linux/net.h,
 * uapi/linux/in.h; riscv64 and x86_64 share it): address families, socket
 * types and their flags, message flags and struct sockaddr_in. Ports and
 * addresses in a sockaddr_in are in network byte order.
 */
#ifndef GRACE_UAPI_SOCKET_H
#define GRACE_UAPI_SOCKET_H

#include <grace/types.h>

#define AF_UNSPEC 0
#define AF_INET 2
#define AF_PACKET 17
#define NPROTO 46 /* AF_MAX: families at or past it are refused before any lookup */

#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define SOCK_PACKET 10
#define SOCK_MAX 11
#define SOCK_TYPE_MASK 0xf
#define SOCK_CLOEXEC 02000000 /* O_CLOEXEC */
#define SOCK_NONBLOCK 04000   /* O_NONBLOCK */

#define IPPROTO_IP 0
#define IPPROTO_MAX 263 /* IPPROTO_MPTCP + 1 */

#define MSG_OOB 0x1
#define MSG_PEEK 0x2
#define MSG_TRUNC 0x20
#define MSG_DONTWAIT 0x40

#define INADDR_ANY 0

/* What move_addr_to_kernel() takes at most: sizeof(struct sockaddr_storage). */
#define SOCKADDR_STORAGE_SIZE 128

struct sockaddr_in {
	u16 sin_family;
	u16 sin_port; /* network order */
	u32 sin_addr; /* network order */
	u8 sin_zero[8];
};
_Static_assert(sizeof(struct sockaddr_in) == 16, "struct sockaddr_in is 16 bytes");

#endif

/*
 * The socket layer (net/socket.c): the calls of socket(2) and its kin on
 * kernel buffers and addresses, with Linux's errors; kernel/syscall/
 * sys_socket.c copies from and to user memory around them. A socket is an open
 * file with socket calls (fs's anon_fd_open()), so close, dup, fork, poll,
 * read, write and fcntl's O_NONBLOCK work on it as on any descriptor. Only
 * AF_INET's SOCK_DGRAM (UDP, over include/grace/inet.h) exists.
 *
 * Addresses are a struct sockaddr_in's bytes as a program gave them, with
 * their length: each call checks the length and family as Linux's does.
 */
#ifndef GRACE_SOCKET_H
#define GRACE_SOCKET_H

#include <grace/skbuff.h>
#include <grace/types.h>
#include <grace/uapi/socket.h>

struct file;

/* socket(): a descriptor, or -EINVAL, -EAFNOSUPPORT, -ESOCKTNOSUPPORT, -EPROTONOSUPPORT, ... */
int sock_create(int family, int type, int protocol);
/*
 * The socket fd names, with a reference for sock_put(): NULL with *err -EBADF
 * (not open) or -ENOTSOCK (another kind of file).
 */
struct file *sock_lookup(int fd, int *err);
void sock_put(struct file *sock);
int sock_bind(struct file *sock, const void *addr, int len);
/* connect(): AF_INET to set the peer, AF_UNSPEC to drop it. */
int sock_connect(struct file *sock, const void *addr, int len);
/*
 * sendto(): all that from holds, to addr (addrlen bytes), or to the peer when
 * addr is NULL. The bytes sent, or -errno (-EFAULT, nothing sent, if from
 * cannot all be copied).
 */
struct iov_iter;
long sock_sendto(struct file *sock, struct iov_iter *from, unsigned flags, const void *addr,
		 int addrlen);
/*
 * recvfrom(): one datagram, as much of it as to has room for (the result is its
 * whole length with MSG_TRUNC), its sender into *from if from is not NULL.
 * Waits unless MSG_DONTWAIT or O_NONBLOCK (-EAGAIN); -ERESTARTSYS when a signal
 * comes. A copy that faults gives -EFAULT, and the datagram is gone unless
 * MSG_PEEK, as on Linux.
 */
long sock_recvfrom(struct file *sock, struct iov_iter *to, unsigned flags,
		   struct sockaddr_in *from);
/* getsockname() (peer false) and getpeername(): -ENOTCONN for a socket with no peer. */
int sock_getname(struct file *sock, struct sockaddr_in *out, bool peer);

/* The most bytes a datagram can have here: one packet buffer's (no fragmentation). */
#define SOCK_DATAGRAM_MAX SKB_BUF_SIZE

#endif

/*
 * The socket layer: socket(2) and the calls on a socket, over UDP (grace/inet.h).
 * A socket is an open file (fs's anon_fd_open()) whose private data is its
 * struct udp_sock; the file's last reference closes it, so a socket lives as
 * long as any descriptor, fork's copy or call in flight holds the file.
 *
 * Errors follow Linux's order, call by call: __sys_socket() and inet_create()
 * for socket(), inet_bind(), inet_dgram_connect() and udp_sendmsg() for the
 * rest (checked against Linux by tests/user/udp.c). A family, type or protocol
 * that does not exist here gets the error Linux gives one it has no code for:
 * EAFNOSUPPORT for a family, ESOCKTNOSUPPORT for a type of AF_INET with no
 * protocol (SOCK_STREAM: there is no TCP), EPROTONOSUPPORT for a protocol.
 */
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/inet.h>
#include <grace/socket.h>
#include <grace/string.h>
#include <grace/uio.h>

/* Linux's largest UDP datagram, before it looks at anything else (udp_sendmsg). */
#define UDP_LEN_MAX 0xffff

static struct udp_sock *sock_udp(struct file *sock)
{
	return file_private(sock);
}

static bool sock_nonblock(struct file *sock, unsigned flags)
{
	return (flags & MSG_DONTWAIT) || (file_flags(sock) & O_NONBLOCK);
}

/* read(): a datagram, as recv() with no flags; 0 for a read of 0 bytes, which takes none. */
static long sock_file_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *f = iocb->ki_filp;
	if (!iov_iter_count(to))
		return 0;
	return sock_recvfrom(f, to, 0, NULL);
}

/* write(): a datagram to the peer, -EDESTADDRREQ without one. */
static long sock_file_write(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *f = iocb->ki_filp;
	return sock_sendto(f, from, 0, NULL, 0);
}

static short sock_file_poll(struct file *f)
{
	/* A datagram send never waits here: always writable. */
	return (udp_rcvq_len(sock_udp(f)) ? POLLIN : 0) | POLLOUT;
}

static void sock_file_release(struct file *f)
{
	udp_close(sock_udp(f));
}

static const struct file_operations sock_ops = {
    .read_iter = sock_file_read,
    .write_iter = sock_file_write,
    .release = sock_file_release,
    .poll = sock_file_poll,
};

int sock_create(int family, int type, int protocol)
{
	int flags = type & ~SOCK_TYPE_MASK;

	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	type &= SOCK_TYPE_MASK;
	if (family < 0 || family >= NPROTO)
		return -EAFNOSUPPORT;
	if (type >= SOCK_MAX)
		return -EINVAL;
	/* Linux turns AF_INET's SOCK_PACKET into AF_PACKET, a family there is none of here. */
	if (family != AF_INET || type == SOCK_PACKET)
		return -EAFNOSUPPORT;
	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	if (type != SOCK_DGRAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != IPPROTO_IP && protocol != IPPROTO_UDP)
		return -EPROTONOSUPPORT;

	struct udp_sock *s = udp_socket();
	if (!s)
		return -ENOMEM;
	/* Each datagram queued may make a poller's descriptor readable. */
	udp_set_data_ready(s, poll_notify);
	int fd = anon_fd_open(S_IFSOCK | 0777, &sock_ops, s,
			      O_RDWR | ((flags & SOCK_NONBLOCK) ? O_NONBLOCK : 0) |
				  ((flags & SOCK_CLOEXEC) ? O_CLOEXEC : 0));
	if (fd < 0) {
		udp_close(s);
		return fd;
	}
	return fd;
}

struct file *sock_lookup(int fd, int *err)
{
	return file_get_ops(fd, &sock_ops, err);
}

void sock_put(struct file *sock)
{
	file_put(sock);
}

int sock_bind(struct file *sock, const void *addr, int len)
{
	struct sockaddr_in sin;

	if (len < (int)sizeof(sin))
		return -EINVAL;
	memcpy(&sin, addr, sizeof(sin));
	/* Linux takes AF_UNSPEC for AF_INET here, for old programs, with INADDR_ANY only. */
	if (sin.sin_family != AF_INET &&
	    (sin.sin_family != AF_UNSPEC || sin.sin_addr != INADDR_ANY))
		return -EAFNOSUPPORT;
	return udp_bind_addr(sock_udp(sock), sin.sin_addr, ntohs(sin.sin_port));
}

int sock_connect(struct file *sock, const void *addr, int len)
{
	struct udp_sock *s = sock_udp(sock);
	struct sockaddr_in sin;

	if (len < (int)sizeof(sin.sin_family))
		return -EINVAL;
	memcpy(&sin.sin_family, addr, sizeof(sin.sin_family));
	if (sin.sin_family == AF_UNSPEC) {
		udp_disconnect(s);
		return 0;
	}
	if (udp_autobind(s))
		return -EAGAIN;
	if (len < (int)sizeof(sin))
		return -EINVAL;
	memcpy(&sin, addr, sizeof(sin));
	if (sin.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	return udp_connect(s, sin.sin_addr, ntohs(sin.sin_port));
}

long sock_sendto(struct file *sock, struct iov_iter *from, unsigned flags, const void *addr,
		 int addrlen)
{
	struct udp_sock *s = sock_udp(sock);
	size_t len = iov_iter_count(from);
	struct sockaddr_in sin;

	/* Linux binds a port before it looks at the datagram, even one it then refuses. */
	if (udp_autobind(s))
		return -EAGAIN;
	if (len > UDP_LEN_MAX)
		return -EMSGSIZE;
	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	long sent;
	if (!addr) {
		sent = udp_send(s, from);
	} else {
		if (addrlen < (int)sizeof(sin))
			return -EINVAL;
		memcpy(&sin, addr, sizeof(sin));
		if (sin.sin_family != AF_INET && sin.sin_family != AF_UNSPEC)
			return -EAFNOSUPPORT;
		if (!sin.sin_port)
			return -EINVAL;
		sent = udp_sendto_iter(s, from, sin.sin_addr, ntohs(sin.sin_port));
	}
	/*
	 * A full device queue drops the datagram (the qdisc counts it) and, as on
	 * Linux without IP_RECVERR, the sender is not told: UDP promises no delivery.
	 */
	return sent == -ENOBUFS ? (long)len : sent;
}

static void sockaddr_in_fill(struct sockaddr_in *sin, u32 addr, u16 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr = addr;
}

long sock_recvfrom(struct file *sock, struct iov_iter *to, unsigned flags, struct sockaddr_in *from)
{
	struct udp_sock *s = sock_udp(sock);
	size_t len = iov_iter_count(to);
	u32 saddr;
	u16 sport;
	long n;

	while ((n = udp_recv_one(s, to, &saddr, &sport, flags & MSG_PEEK)) == -EAGAIN) {
		if (sock_nonblock(sock, flags))
			return -EAGAIN;
		int err = udp_wait_rcv(s);
		if (err)
			return err;
	}
	if (n < 0)
		return n; /* -EFAULT: the copy out faulted */
	if (from)
		sockaddr_in_fill(from, saddr, sport);
	return (flags & MSG_TRUNC) ? n : (long)MIN((size_t)n, len);
}

int sock_getname(struct file *sock, struct sockaddr_in *out, bool peer)
{
	u32 addr;
	u16 port;
	int err = udp_getname(sock_udp(sock), peer, &addr, &port);

	if (!err)
		sockaddr_in_fill(out, addr, port);
	return err;
}

/*
 * The socket calls of the user ABI over the socket layer (grace/socket.h):
 * addresses and data are copied across here, in the order Linux's
 * net/socket.c copies them, so a call given a bad pointer and something else
 * wrong fails with the error Linux would give first. An address comes in as
 * move_addr_to_kernel() takes it (a length in [0, 128], then the bytes) and
 * goes out as move_addr_to_user() gives it (the caller's length read first,
 * the address cut to it, the full length written back).
 *
 * A datagram's data crosses through a kernel buffer: recvfrom takes the
 * datagram off the queue before copying it out, so a copy that faults loses
 * it, as on Linux.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/slab.h>
#include <grace/socket.h>
#include <grace/uaccess.h>
#include "syscall_internal.h"

/* Linux's MAX_RW_COUNT: one call moves at most INT_MAX bytes rounded down to a page. */
#define MAX_RW_COUNT 0x7ffff000UL

/* Linux's move_addr_to_kernel(): into k, SOCKADDR_STORAGE_SIZE bytes. */
static int sockaddr_from_user(u8 *k, const void __user *uaddr, int len)
{
	if (len < 0 || len > SOCKADDR_STORAGE_SIZE)
		return -EINVAL;
	if (len && copy_from_user(k, uaddr, (size_t)len))
		return -EFAULT;
	return 0;
}

/* Linux's move_addr_to_user(). */
static int sockaddr_to_user(const struct sockaddr_in *k, void __user *uaddr, int __user *ulen)
{
	int len, klen = sizeof(*k);

	if (copy_from_user(&len, ulen, sizeof(len)))
		return -EFAULT;
	if (len > klen)
		len = klen;
	if (len < 0)
		return -EINVAL;
	if (len && copy_to_user(uaddr, k, (size_t)len))
		return -EFAULT;
	return copy_to_user(ulen, &klen, sizeof(klen)) ? -EFAULT : 0;
}

SYSCALL_DEFINE3(socket, int, family, int, type, int, protocol)
{
	return sock_create(family, type, protocol);
}

SYSCALL_DEFINE3(bind, int, fd, const void __user *, umyaddr, int, addrlen)
{
	u8 addr[SOCKADDR_STORAGE_SIZE];
	int err;
	struct file *sock = sock_lookup(fd, &err);

	if (!sock)
		return err;
	err = sockaddr_from_user(addr, umyaddr, addrlen);
	if (!err)
		err = sock_bind(sock, addr, addrlen);
	sock_put(sock);
	return err;
}

SYSCALL_DEFINE3(connect, int, fd, const void __user *, uservaddr, int, addrlen)
{
	u8 addr[SOCKADDR_STORAGE_SIZE];
	int err;
	struct file *sock = sock_lookup(fd, &err);

	/* Linux copies the address in before it asks whether the file is a socket. */
	if (!sock && err == -ENOTSOCK) {
		int aerr = sockaddr_from_user(addr, uservaddr, addrlen);
		return aerr ? aerr : err;
	}
	if (!sock)
		return err;
	err = sockaddr_from_user(addr, uservaddr, addrlen);
	if (!err)
		err = sock_connect(sock, addr, addrlen);
	sock_put(sock);
	return err;
}

SYSCALL_DEFINE6(sendto, int, fd, const void __user *, ubuf, size_t, size, unsigned, flags,
		const void __user *, uaddr, int, addr_len)
{
	size_t len = MIN(size, MAX_RW_COUNT);
	u8 addr[SOCKADDR_STORAGE_SIZE];
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	struct file *sock = sock_lookup(fd, &err);
	if (!sock)
		return err;
	err = uaddr ? sockaddr_from_user(addr, uaddr, addr_len) : 0;
	/*
	 * No datagram here is longer than a packet buffer: a longer one is refused
	 * (-EMSGSIZE) before its bytes are read, so only that much is copied.
	 */
	size_t copy = MIN(len, (size_t)SOCK_DATAGRAM_MAX);
	void *kbuf = err ? NULL : kmalloc(copy ? copy : 1);
	long ret = err ? err : !kbuf ? -ENOMEM : 0;
	if (!ret && copy_from_user(kbuf, ubuf, copy))
		ret = -EFAULT;
	if (!ret)
		ret = sock_sendto(sock, kbuf, len, flags, uaddr ? addr : NULL, addr_len);
	kfree(kbuf);
	sock_put(sock);
	return ret;
}

SYSCALL_DEFINE6(recvfrom, int, fd, void __user *, ubuf, size_t, size, unsigned, flags,
		void __user *, uaddr, int __user *, addr_len)
{
	size_t len = MIN(size, MAX_RW_COUNT);
	struct sockaddr_in from;
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	struct file *sock = sock_lookup(fd, &err);
	if (!sock)
		return err;
	size_t klen = MIN(len, (size_t)SOCK_DATAGRAM_MAX);
	void *kbuf = kmalloc(klen ? klen : 1);
	long n = kbuf ? sock_recvfrom(sock, kbuf, klen, flags, &from) : -ENOMEM;
	/* With MSG_TRUNC, n is the datagram's whole length: only what was asked for goes out. */
	if (n > 0 && copy_to_user(ubuf, kbuf, MIN((size_t)n, klen)))
		n = -EFAULT;
	if (n >= 0 && uaddr) {
		err = sockaddr_to_user(&from, uaddr, addr_len);
		if (err)
			n = err;
	}
	kfree(kbuf);
	sock_put(sock);
	return n;
}

/* getsockname and getpeername. */
static long user_getname(int fd, void __user *uaddr, int __user *ulen, bool peer)
{
	struct sockaddr_in sin;
	int err;
	struct file *sock = sock_lookup(fd, &err);

	if (!sock)
		return err;
	err = sock_getname(sock, &sin, peer);
	if (!err)
		err = sockaddr_to_user(&sin, uaddr, ulen);
	sock_put(sock);
	return err;
}

SYSCALL_DEFINE3(getsockname, int, fd, void __user *, usockaddr, int __user *, usockaddr_len)
{
	return user_getname(fd, usockaddr, usockaddr_len, false);
}

SYSCALL_DEFINE3(getpeername, int, fd, void __user *, usockaddr, int __user *, usockaddr_len)
{
	return user_getname(fd, usockaddr, usockaddr_len, true);
}

/* A datagram socket neither listens nor accepts: Linux's sock_no_listen() and sock_no_accept(). */
static long user_no_connections(int fd)
{
	int err;
	struct file *sock = sock_lookup(fd, &err);

	if (!sock)
		return err;
	sock_put(sock);
	return -EOPNOTSUPP;
}

SYSCALL_DEFINE2(listen, int, fd, int, backlog)
{
	return user_no_connections(fd);
}

SYSCALL_DEFINE3(accept, int, fd, void __user *, upeer_sockaddr, int __user *, upeer_addrlen)
{
	return user_no_connections(fd);
}

SYSCALL_DEFINE4(accept4, int, fd, void __user *, upeer_sockaddr, int __user *, upeer_addrlen, int,
		flags)
{
	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	return user_no_connections(fd);
}

/*
 * The socket calls of the user ABI over the socket layer (grace/socket.h):
 * addresses and data are copied across here, in the order Linux's
 * net/socket.c copies them, so a call given a bad pointer and something else
 * wrong fails with the error Linux would give first. An address comes in as
 * move_addr_to_kernel() takes it (a length in [0, 128], then the bytes) and
 * goes out as move_addr_to_user() gives it (the caller's length read first,
 * the address cut to it, the full length written back).
 *
 * A datagram's data goes through a copy cursor over the user's buffer
 * (grace/uio.h), straight between it and the packet buffer: recvfrom takes the
 * datagram off the queue before copying it out, so a copy that faults loses
 * it, as on Linux.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/socket.h>
#include <grace/uaccess.h>
#include <grace/uio.h>
#include "syscall_internal.h"

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
	struct iov_iter from;
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	iov_iter_ubuf(&from, (void __user *)ubuf, len);
	struct file *sock = sock_lookup(fd, &err);
	if (!sock)
		return err;
	err = uaddr ? sockaddr_from_user(addr, uaddr, addr_len) : 0;
	long ret = err ? err : sock_sendto(sock, &from, flags, uaddr ? addr : NULL, addr_len);
	sock_put(sock);
	return ret;
}

SYSCALL_DEFINE6(recvfrom, int, fd, void __user *, ubuf, size_t, size, unsigned, flags,
		void __user *, uaddr, int __user *, addr_len)
{
	size_t len = MIN(size, MAX_RW_COUNT);
	struct sockaddr_in from;
	struct iov_iter to;
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	iov_iter_ubuf(&to, ubuf, len);
	struct file *sock = sock_lookup(fd, &err);
	if (!sock)
		return err;
	long n = sock_recvfrom(sock, &to, flags, &from);
	if (n >= 0 && uaddr) {
		err = sockaddr_to_user(&from, uaddr, addr_len);
		if (err)
			n = err;
	}
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

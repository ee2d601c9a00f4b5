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

USER_CALL(socket)
{
	return sock_create((int)a0, (int)a1, (int)a2);
}

USER_CALL(bind)
{
	u8 addr[SOCKADDR_STORAGE_SIZE];
	int err;
	struct file *sock = sock_lookup((int)a0, &err);

	if (!sock)
		return err;
	err = sockaddr_from_user(addr, (const void __user *)a1, (int)a2);
	if (!err)
		err = sock_bind(sock, addr, (int)a2);
	sock_put(sock);
	return err;
}

USER_CALL(connect)
{
	u8 addr[SOCKADDR_STORAGE_SIZE];
	int err;
	struct file *sock = sock_lookup((int)a0, &err);

	/* Linux copies the address in before it asks whether the file is a socket. */
	if (!sock && err == -ENOTSOCK) {
		int aerr = sockaddr_from_user(addr, (const void __user *)a1, (int)a2);
		return aerr ? aerr : err;
	}
	if (!sock)
		return err;
	err = sockaddr_from_user(addr, (const void __user *)a1, (int)a2);
	if (!err)
		err = sock_connect(sock, addr, (int)a2);
	sock_put(sock);
	return err;
}

USER_CALL(sendto)
{
	void __user *ubuf = (void __user *)a1;
	size_t len = MIN(a2, MAX_RW_COUNT);
	unsigned flags = (unsigned)a3;
	u8 addr[SOCKADDR_STORAGE_SIZE];
	struct iov_iter from;
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	iov_iter_ubuf(&from, ubuf, len);
	struct file *sock = sock_lookup((int)a0, &err);
	if (!sock)
		return err;
	err = a4 ? sockaddr_from_user(addr, (const void __user *)a4, (int)a5) : 0;
	long ret = err ? err : sock_sendto(sock, &from, flags, a4 ? addr : NULL, (int)a5);
	sock_put(sock);
	return ret;
}

USER_CALL(recvfrom)
{
	void __user *ubuf = (void __user *)a1;
	size_t len = MIN(a2, MAX_RW_COUNT);
	unsigned flags = (unsigned)a3;
	struct sockaddr_in from;
	struct iov_iter to;
	int err;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	iov_iter_ubuf(&to, ubuf, len);
	struct file *sock = sock_lookup((int)a0, &err);
	if (!sock)
		return err;
	long n = sock_recvfrom(sock, &to, flags, &from);
	if (n >= 0 && a4) {
		err = sockaddr_to_user(&from, (void __user *)a4, (int __user *)a5);
		if (err)
			n = err;
	}
	sock_put(sock);
	return n;
}

/* getsockname and getpeername. */
static long user_getname(unsigned long fd, unsigned long uaddr, unsigned long ulen, bool peer)
{
	struct sockaddr_in sin;
	int err;
	struct file *sock = sock_lookup((int)fd, &err);

	if (!sock)
		return err;
	err = sock_getname(sock, &sin, peer);
	if (!err)
		err = sockaddr_to_user(&sin, (void __user *)uaddr, (int __user *)ulen);
	sock_put(sock);
	return err;
}

USER_CALL(getsockname)
{
	return user_getname(a0, a1, a2, false);
}

USER_CALL(getpeername)
{
	return user_getname(a0, a1, a2, true);
}

/* A datagram socket neither listens nor accepts: Linux's sock_no_listen() and sock_no_accept(). */
static long user_no_connections(unsigned long fd)
{
	int err;
	struct file *sock = sock_lookup((int)fd, &err);

	if (!sock)
		return err;
	sock_put(sock);
	return -EOPNOTSUPP;
}

USER_CALL(listen)
{
	return user_no_connections(a0);
}

USER_CALL(accept)
{
	return user_no_connections(a0);
}

USER_CALL(accept4)
{
	if ((int)a3 & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	return user_no_connections(a0);
}

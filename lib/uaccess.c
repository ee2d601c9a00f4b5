/*
 * User-memory copies (grace/uaccess.h): the checks and the return values Linux
 * gives, around the arch's routines that do the copying under the exception
 * table. No state, no lock.
 */
#include <grace/errno.h>
#include <grace/string.h>
#include <grace/uaccess.h>

size_t copy_from_user_partial(void *to, const void __user *from, size_t n)
{
	if (unlikely(!access_ok(from, n)))
		return n;
	return arch_copy_user(to, (const void *)from, n);
}

size_t copy_from_user(void *to, const void __user *from, size_t n)
{
	size_t left = copy_from_user_partial(to, from, n);
	if (unlikely(left))
		memset((char *)to + (n - left), 0, left);
	return left;
}

size_t copy_to_user(void __user *to, const void *from, size_t n)
{
	if (unlikely(!access_ok(to, n)))
		return n;
	return arch_copy_user((void *)to, from, n);
}

size_t clear_user(void __user *to, size_t n)
{
	if (unlikely(!access_ok(to, n)))
		return n;
	return arch_clear_user((void *)to, n);
}

long strncpy_from_user(char *dst, const char __user *src, long count)
{
	uintptr_t a = (uintptr_t)src;

	if (count <= 0)
		return 0;
	if (unlikely(a >= USER_VA_END))
		return -EFAULT;
	/* Never read past the user half, however large count is. */
	size_t max = MIN((size_t)count, USER_VA_END - a);
	long len = arch_strncpy_user(dst, (const char *)src, max);
	if (len < 0)
		return -EFAULT;
	/* Stopped at the end of the user half, short of count and of a NUL: Linux says -EFAULT. */
	if ((size_t)len == max && max < (size_t)count)
		return -EFAULT;
	return len;
}

/*
 * The kernel's access to user memory, with Linux's calls and return values.
 *
 * A user pointer is checked by access_ok() (the range lies below USER_VA_END and
 * does not wrap) and then touched only by the arch's copy routines, which open
 * the user-access window (riscv64: sstatus.SUM; x86_64: EFLAGS.AC under SMAP)
 * around the copy alone and list every user access in the exception table. A
 * fault inside a copy goes the normal way first: an address inside a VMA of the
 * current mm (current_mm()) is demand-faulted and the copy goes on; any other
 * fault lands on the routine's fixup, which closes the window and reports how
 * far the copy got, to the exact byte.
 *
 * The calls may sleep (a fault allocates memory and takes locks): never with a
 * spinlock held or interrupts off.
 */
#ifndef GRACE_UACCESS_H
#define GRACE_UACCESS_H

#include <grace/compiler.h>
#include <grace/pgtable.h>
#include <grace/types.h>

/* Is [addr, addr + size) inside the user half? No wrap; size 0 needs addr <= USER_VA_END. */
static inline bool access_ok(const void __user *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	return size <= USER_VA_END && a <= USER_VA_END - size;
}

/*
 * Copy n bytes from user space; the bytes not copied (0: all). The uncopied
 * tail of to is zeroed, as Linux does, so no stale kernel bytes survive a
 * short copy.
 */
size_t copy_from_user(void *to, const void __user *from, size_t n);

/*
 * The same without zeroing: the uncopied tail of to keeps its bytes. For a
 * destination that is not a fresh buffer (a file's page, which a write that
 * faults part way must leave as it was past what it wrote).
 */
size_t copy_from_user_partial(void *to, const void __user *from, size_t n);

/* Copy n bytes to user space; the bytes not copied (0: all). */
size_t copy_to_user(void __user *to, const void *from, size_t n);

/* Zero n bytes of user space; the bytes not zeroed (0: all). */
size_t clear_user(void __user *to, size_t n);

/*
 * Copy a NUL-terminated string of at most count bytes from user space into dst,
 * NUL included when it is within count. The string's length (without the NUL);
 * count if there is no NUL within count (dst is then not terminated); -EFAULT
 * if a byte before either could not be read (some of dst may be written). A
 * count <= 0 gives 0.
 */
long strncpy_from_user(char *dst, const char __user *src, long count);

/*
 * The arch's routines (arch/<arch>/uaccess.S), without access_ok(). Each opens
 * the user-access window, closes it on every way out, and stops at the first
 * byte that faults without a resolution.
 *
 * arch_copy_user: the bytes not copied. arch_clear_user: the bytes not zeroed.
 * arch_strncpy_user: the length if a NUL is within n bytes (copied too), n if
 * not, -EFAULT on a fault.
 */
size_t arch_copy_user(void *to, const void *from, size_t n);
size_t arch_clear_user(void *to, size_t n);
long arch_strncpy_user(char *dst, const char *src, size_t n);

#endif

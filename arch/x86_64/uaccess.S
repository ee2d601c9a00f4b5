/*
 * The user-copy routines (grace/uaccess.h). Under SMAP each opens the window
 * (STAC) for the copy alone and closes it (CLAC) on every way out, the fixups
 * included; a trap inside the window runs its handler with AC clear (entry.S)
 * and iretq brings the window back with the saved RFLAGS.
 *
 * The copies are rep movs/stos, which stop at the faulting element with rcx
 * counting what is left. A quadword that faults has moved nothing, so its fixup
 * finishes the copy a byte at a time from the same place; a byte that faults
 * ends the copy, and what is left is exact.
 */
#include <grace/extable.h>
#include "smap.inc"

	.section .text.uaccess, "ax"

/* size_t arch_copy_user(void *to = rdi, const void *from = rsi, size_t n = rdx): bytes not copied */
	.globl arch_copy_user
arch_copy_user:
	SMAP_STAC
	movq	%rdx, %rcx
	shrq	$3, %rcx
	andl	$7, %edx
1:	rep movsq
	movl	%edx, %ecx
2:	rep movsb
3:	SMAP_CLAC
	movq	%rcx, %rax
	ret
4:	leaq	(%rdx,%rcx,8), %rcx
	jmp	2b
	EXTABLE_ENTRY_ASM(1b, 4b, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(2b, 3b, EX_TYPE_INSN)

/* size_t arch_clear_user(void *to = rdi, size_t n = rsi): bytes not zeroed */
	.globl arch_clear_user
arch_clear_user:
	SMAP_STAC
	xorl	%eax, %eax
	movq	%rsi, %rcx
	shrq	$3, %rcx
	andl	$7, %esi
1:	rep stosq
	movl	%esi, %ecx
2:	rep stosb
3:	SMAP_CLAC
	movq	%rcx, %rax
	ret
4:	leaq	(%rsi,%rcx,8), %rcx
	jmp	2b
	EXTABLE_ENTRY_ASM(1b, 4b, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(2b, 3b, EX_TYPE_INSN)

/*
 * long arch_strncpy_user(char *dst = rdi, const char *src = rsi, size_t n = rdx):
 * the length, n without a NUL, -EFAULT. A byte at a time: strings are short,
 * and a read must never run past the NUL into a page that faults.
 */
	.globl arch_strncpy_user
arch_strncpy_user:
	SMAP_STAC
	xorl	%eax, %eax
1:	cmpq	%rdx, %rax
	je	3f
2:	movzbl	(%rsi,%rax), %ecx
	movb	%cl, (%rdi,%rax)
	testb	%cl, %cl
	jz	3f
	incq	%rax
	jmp	1b
3:	SMAP_CLAC
	ret
4:	SMAP_CLAC
	movq	$-EXTABLE_EFAULT, %rax
	ret
	EXTABLE_ENTRY_ASM(2b, 4b, EX_TYPE_INSN)

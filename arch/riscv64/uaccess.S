/*
 * The user-copy routines (grace/uaccess.h). Each sets sstatus.SUM, the one
 * window in which S-mode may touch U pages, for the copy alone and clears it on
 * every way out, the fixups included. A trap inside the window runs its handler
 * with SUM clear and sret brings the window back (trap_entry.S); a thread that
 * blocks in such a fault keeps its window across the switch (switch.S).
 *
 * Every user load and store has an exception-table entry. A doubleword that
 * faults has moved nothing, so its fixup finishes the copy a byte at a time from
 * the same place; a byte that faults ends the copy, and what is left is exact.
 */
#include <grace/extable.h>
#include <asm/csr.h>

	.section .text.uaccess, "ax"

/* size_t arch_copy_user(void *to = a0, const void *from = a1, size_t n = a2): bytes not copied */
	.globl arch_copy_user
arch_copy_user:
	li	t6, SSTATUS_SUM
	csrs	sstatus, t6
	/* Doublewords only when both pointers can be aligned together. */
	xor	t0, a0, a1
	andi	t0, t0, 7
	bnez	t0, .Lcopy_bytes
.Lcopy_head:
	andi	t0, a0, 7
	beqz	t0, .Lcopy_words
	beqz	a2, .Lcopy_done
1:	lbu	t1, 0(a1)
2:	sb	t1, 0(a0)
	addi	a0, a0, 1
	addi	a1, a1, 1
	addi	a2, a2, -1
	j	.Lcopy_head
.Lcopy_words:
	li	t2, 8
.Lcopy_word:
	bltu	a2, t2, .Lcopy_bytes
3:	ld	t1, 0(a1)
4:	sd	t1, 0(a0)
	addi	a0, a0, 8
	addi	a1, a1, 8
	addi	a2, a2, -8
	j	.Lcopy_word
.Lcopy_bytes:
	beqz	a2, .Lcopy_done
5:	lbu	t1, 0(a1)
6:	sb	t1, 0(a0)
	addi	a0, a0, 1
	addi	a1, a1, 1
	addi	a2, a2, -1
	j	.Lcopy_bytes
.Lcopy_done:
	csrc	sstatus, t6
	mv	a0, a2
	ret
	EXTABLE_ENTRY_ASM(1b, .Lcopy_done, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(2b, .Lcopy_done, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(3b, .Lcopy_bytes, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(4b, .Lcopy_bytes, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(5b, .Lcopy_done, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(6b, .Lcopy_done, EX_TYPE_INSN)

/* size_t arch_clear_user(void *to = a0, size_t n = a1): bytes not zeroed */
	.globl arch_clear_user
arch_clear_user:
	li	t6, SSTATUS_SUM
	csrs	sstatus, t6
.Lclear_head:
	andi	t0, a0, 7
	beqz	t0, .Lclear_words
	beqz	a1, .Lclear_done
1:	sb	zero, 0(a0)
	addi	a0, a0, 1
	addi	a1, a1, -1
	j	.Lclear_head
.Lclear_words:
	li	t2, 8
.Lclear_word:
	bltu	a1, t2, .Lclear_bytes
2:	sd	zero, 0(a0)
	addi	a0, a0, 8
	addi	a1, a1, -8
	j	.Lclear_word
.Lclear_bytes:
	beqz	a1, .Lclear_done
3:	sb	zero, 0(a0)
	addi	a0, a0, 1
	addi	a1, a1, -1
	j	.Lclear_bytes
.Lclear_done:
	csrc	sstatus, t6
	mv	a0, a1
	ret
	EXTABLE_ENTRY_ASM(1b, .Lclear_done, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(2b, .Lclear_done, EX_TYPE_INSN)
	EXTABLE_ENTRY_ASM(3b, .Lclear_done, EX_TYPE_INSN)

/*
 * long arch_strncpy_user(char *dst = a0, const char *src = a1, size_t n = a2):
 * the length, n without a NUL, -EFAULT. A byte at a time: strings are short,
 * and a read must never run past the NUL into a page that faults.
 */
	.globl arch_strncpy_user
arch_strncpy_user:
	li	t6, SSTATUS_SUM
	csrs	sstatus, t6
	li	t0, 0
.Lstr_next:
	beq	t0, a2, .Lstr_done
	add	t2, a1, t0
1:	lbu	t1, 0(t2)
	add	t2, a0, t0
	sb	t1, 0(t2)
	beqz	t1, .Lstr_done
	addi	t0, t0, 1
	j	.Lstr_next
.Lstr_done:
	csrc	sstatus, t6
	mv	a0, t0
	ret
.Lstr_fault:
	csrc	sstatus, t6
	li	a0, -EXTABLE_EFAULT
	ret
	EXTABLE_ENTRY_ASM(1b, .Lstr_fault, EX_TYPE_INSN)

/*
 * Probes that may fault (grace/extable.h): each access has an exception-table
 * entry whose fixup returns -EFAULT, so a fault on a bad address comes back as
 * an error instead of killing the kernel. For tests of the kernel's own page
 * protections and for diagnostics.
 */
#include <grace/extable.h>

	.section .text.probe, "ax"

/* int probe_read_u64(const void *addr, u64 *val) */
	.globl probe_read_u64
probe_read_u64:
1:	movq	(%rdi), %rax
	movq	%rax, (%rsi)
	xorl	%eax, %eax
	ret
2:	movl	$-EXTABLE_EFAULT, %eax
	ret
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_INSN)

/* int probe_write_u64(void *addr, u64 val) */
	.globl probe_write_u64
probe_write_u64:
1:	movq	%rsi, (%rdi)
	xorl	%eax, %eax
	ret
2:	movl	$-EXTABLE_EFAULT, %eax
	ret
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_INSN)

/*
 * int probe_exec(const void *addr): call addr, which must hold a return
 * instruction. If fetching it faults, the fault's RIP is addr itself and the
 * return address is on top of the stack, so the entry is keyed by that return
 * address (EX_TYPE_CALL; the fixup pops it).
 */
	.globl probe_exec
probe_exec:
	pushq	%rbp
	movq	%rsp, %rbp
	call	*%rdi
1:	xorl	%eax, %eax
	popq	%rbp
	ret
2:	movl	$-EXTABLE_EFAULT, %eax
	popq	%rbp
	ret
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_CALL)

/* A return instruction for probe_exec() to call through other mappings. */
	.balign 16
	.globl probe_ret_insn
probe_ret_insn:
	ret

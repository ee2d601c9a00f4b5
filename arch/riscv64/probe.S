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
1:	ld	t0, 0(a0)
	sd	t0, 0(a1)
	li	a0, 0
	ret
2:	li	a0, -EXTABLE_EFAULT
	ret
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_INSN)

/* int probe_write_u64(void *addr, u64 val) */
	.globl probe_write_u64
probe_write_u64:
1:	sd	a1, 0(a0)
	li	a0, 0
	ret
2:	li	a0, -EXTABLE_EFAULT
	ret
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_INSN)

/*
 * int probe_exec(const void *addr): call addr, which must hold a return
 * instruction. If fetching it faults, the fault's pc is addr itself, so the
 * entry is keyed by the call's return address (ra at the fault, EX_TYPE_CALL).
 * A frame record (ra at fp - 8, the caller's fp at fp - 16) keeps backtraces
 * through here working.
 */
	.globl probe_exec
probe_exec:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	sd	s0, 0(sp)
	addi	s0, sp, 16
	jalr	a0
1:	li	a0, 0
3:	ld	ra, 8(sp)
	ld	s0, 0(sp)
	addi	sp, sp, 16
	ret
2:	li	a0, -EXTABLE_EFAULT
	j	3b
	EXTABLE_ENTRY_ASM(1b, 2b, EX_TYPE_CALL)

/* A return instruction for probe_exec() to call through other mappings. */
	.balign 4
	.globl probe_ret_insn
probe_ret_insn:
	ret

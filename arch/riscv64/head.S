/*
 * The riscv64 entry: the Linux image header, the boot hart's path from OpenSBI to
 * C with the MMU on, and the secondary harts' path from SBI HSM hart_start.
 *
 * OpenSBI (or U-Boot's booti) enters at the image's first byte in S-mode, MMU off,
 * with a0 = hart id and a1 = physical address of the DTB, wherever the image was
 * put in RAM (2 MiB aligned). The code up to the satp write is position
 * independent (lla is auipc-based): it finds the load address, builds boot_pgd
 * mapping the image's link address (KERNEL_VIRT_BASE) to it with 2 MiB pages,
 * plus an early direct map of the GiBs holding the image and the DTB, and jumps
 * to the virtual address. mmu.c later builds the exact direct map of RAM.
 */
#include <asm/csr.h>
#include <asm/memory.h>
#include "hart.h"
#include "kernel_pgtable.h"

#define SBI_LEGACY_PUTCHAR 1
#define KERNEL_PGD_INDEX ((KERNEL_VIRT_BASE >> PGD_SHIFT) & (PTES_PER_TABLE - 1))
#define KERNEL_PMD_INDEX ((KERNEL_VIRT_BASE >> PMD_SHIFT) & (PTES_PER_TABLE - 1))
#define DIRECT_MAP_PGD_INDEX ((PAGE_OFFSET >> PGD_SHIFT) & (PTES_PER_TABLE - 1))
#define BOOT_STACK_SIZE (16 * 1024)
#define EMERGENCY_STACK_SIZE 4096

	.section .head.text, "ax"
	.option push
	.option norvc			/* the header's fields sit at fixed offsets after code0 */
	.globl _start
_start:
	j	boot_entry		/* code0: one 4-byte jump */
	.word	0			/* code1 */
	.dword	0x200000		/* text_offset: 2 MiB into RAM, a megapage boundary, as Linux */
	.dword	__image_size		/* image_size: bss included (linker/riscv64.ld) */
	.dword	0			/* flags: little endian */
	.word	0x2			/* version 0.2 */
	.word	0			/* res1 */
	.dword	0			/* res2 */
	.ascii	"RISCV\0\0\0"		/* magic: deprecated, but U-Boot still checks it */
	.ascii	"RSC\x05"		/* magic2 */
	.word	0			/* res3: no PE/COFF header */
	.option pop

boot_entry:
	csrw	sie, zero
	li	t0, SSTATUS_FS | SSTATUS_SIE
	csrc	sstatus, t0		/* interrupts off, FPU off: the kernel uses no FP */

	/* One hart runs boot; the others are late (lottery_lost). */
	lla	t0, boot_lottery
	li	t1, 1
	amoswap.w t1, t1, (t0)
	bnez	t1, lottery_lost

	mv	s1, a0			/* hart id */
	mv	s2, a1			/* DTB physical address */
	lla	s3, _start		/* where we were loaded (physical) */
	ld	t0, .Lstart_va		/* where we were linked (virtual) */
	sub	s4, t0, s3		/* s4 = kernel_va_pa_offset */

	/* Megapage leaves need a 2 MiB-aligned load address. */
	li	t0, PMD_SIZE - 1
	and	t0, s3, t0
	lla	a0, .Lmsg_misaligned
	bnez	t0, boot_fail

	/* Clear bss: page tables and stacks start zeroed. */
	lla	t0, __bss_start
	lla	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:
	fence	w, w			/* bss clear before lottery_lost sees the offset */
	lla	t0, kernel_va_pa_offset
	sd	s4, 0(t0)

	/* boot_pgd[KERNEL_PGD_INDEX] -> boot_kernel_pmd -> the image, 2 MiB at a time. */
	lla	s5, boot_pgd
	lla	t0, boot_kernel_pmd
	srli	t1, t0, 12
	slli	t1, t1, PTE_PPN_SHIFT
	ori	t1, t1, PTE_TABLE
	li	t2, KERNEL_PGD_INDEX * 8
	add	t2, s5, t2
	sd	t1, 0(t2)

	ld	t1, .Limage_size
	li	t2, PMD_SIZE - 1
	add	t1, t1, t2
	srli	t1, t1, PMD_SHIFT	/* megapages the image needs */
	li	t2, PTES_PER_TABLE - KERNEL_PMD_INDEX
	lla	a0, .Lmsg_too_big
	bgtu	t1, t2, boot_fail
	addi	t0, t0, KERNEL_PMD_INDEX * 8
	mv	t2, s3
3:	srli	t3, t2, 12
	slli	t3, t3, PTE_PPN_SHIFT
	ori	t3, t3, PTE_BOOT
	sd	t3, 0(t0)
	addi	t0, t0, 8
	li	t4, PMD_SIZE
	add	t2, t2, t4
	addi	t1, t1, -1
	bnez	t1, 3b

	/* Early direct map, so C can read the DTB before it knows where RAM is. */
	mv	a0, s3
	call	map_early_gigapage
	mv	a0, s2
	call	map_early_gigapage
	li	t0, PGD_SIZE		/* the next GiB too, for a DTB that straddles one */
	add	a0, s2, t0
	call	map_early_gigapage

	/*
	 * MMU on. The fetch after the satp write uses the new tables, where this
	 * physical PC is not mapped: it faults to stvec, the same code's virtual address.
	 */
	lla	t0, 4f
	add	t0, t0, s4
	csrw	stvec, t0
	srli	t1, s5, 12
	li	t2, SATP_MODE_SV39
	or	t1, t1, t2
	sfence.vma
	csrw	satp, t1
	.balign 4
4:
	/* Virtual from here: lla now yields link addresses. */
	lla	t0, riscv_early_hart
	csrw	sscratch, t0
	lla	tp, __percpu_start
	sd	tp, HART_PERCPU(t0)
	lla	t1, boot_emergency_stack + EMERGENCY_STACK_SIZE
	sd	t1, HART_EMERGENCY_SP(t0)
	lla	t0, trap_entry
	csrw	stvec, t0
	lla	sp, boot_stack + BOOT_STACK_SIZE
	li	s0, 0			/* end of the frame-pointer chain */
	li	ra, 0
	mv	a0, s1
	mv	a1, s2
	call	riscv_boot_main
	j	park

/* a0 = physical address: map its GiB 1:1 into the direct map, if inside it. Uses t0-t2. */
map_early_gigapage:
	srli	t0, a0, PGD_SHIFT
	li	t1, DIRECT_MAP_SIZE >> PGD_SHIFT
	bgeu	t0, t1, 1f
	slli	t1, t0, PGD_SHIFT - 12 + PTE_PPN_SHIFT
	ori	t1, t1, PTE_BOOT
	addi	t0, t0, DIRECT_MAP_PGD_INDEX
	slli	t0, t0, 3
	add	t0, s5, t0
	sd	t1, 0(t0)
1:	ret

/* Print the string at a0 through the SBI legacy console (MMU off, no C yet) and park. */
boot_fail:
	mv	s6, a0
1:	lbu	a0, 0(s6)
	beqz	a0, park
	li	a7, SBI_LEGACY_PUTCHAR
	ecall
	addi	s6, s6, 1
	j	1b

/*
 * A hart that entered here after another won the lottery (a0 = hart id). Loaders
 * without HSM release every hart here at boot: those park. But OpenSBI 1.1's
 * hart_start marks a hart START_PENDING before it stores the start address and
 * argument, so a waiting hart that sees the state in between leaves with those of
 * its cold boot: this entry and the DTB (under U-Boot, U-Boot's entry, where booti
 * moved the kernel: RAM + 2 MiB, this entry again). If arch_cpu_start() published
 * a struct riscv_hart for this hart id, the kernel is starting it: go on as asked.
 */
lottery_lost:
	lla	t0, kernel_va_pa_offset
	ld	t0, 0(t0)
	beqz	t0, park		/* bss not cleared yet: nothing is being started */
	fence	r, r			/* pairs with fence w,w above and arch_cpu_start's smp_mb */
	lla	t0, riscv_harts
	lla	t1, riscv_hart_slots
	lwu	t1, 0(t1)
1:	ld	t2, HART_SATP(t0)	/* zero until arch_cpu_start() fills the slot */
	beqz	t2, 2f
	lwu	t2, HART_HARTID(t0)
	bne	t2, a0, 2f
	mv	a1, t0
	j	secondary_entry
2:	addi	t0, t0, HART_SIZE
	addi	t1, t1, -1
	bnez	t1, 1b
park:
	wfi
	j	park

/*
 * A secondary hart, started by sbi_hart_start(hartid, secondary_entry, hart):
 * MMU off, a0 = hart id, a1 = physical address of its struct riscv_hart, which
 * arch_cpu_start() filled with satp, stack and per-CPU base.
 */
	.globl secondary_entry
secondary_entry:
	csrw	sie, zero
	li	t0, SSTATUS_FS | SSTATUS_SIE
	csrc	sstatus, t0
	lla	t0, kernel_va_pa_offset
	ld	s4, 0(t0)
	ld	t1, HART_SATP(a1)
	lla	t0, 1f
	add	t0, t0, s4
	csrw	stvec, t0
	sfence.vma
	csrw	satp, t1
	.balign 4
1:
	add	a1, a1, s4		/* the struct is in the image: its virtual address */
	csrw	sscratch, a1
	ld	tp, HART_PERCPU(a1)
	ld	sp, HART_BOOT_SP(a1)
	lla	t0, trap_entry
	csrw	stvec, t0
	li	s0, 0
	li	ra, 0
	mv	a0, a1
	call	riscv_secondary_main
	j	park

	.balign 8
.Lstart_va:
	.dword	_start
.Limage_size:
	.dword	__image_size
.Lmsg_misaligned:
	.asciz	"grace: image not loaded at a 2 MiB-aligned address; cannot map it\r\n"
.Lmsg_too_big:
	.asciz	"grace: image larger than 1 GiB\r\n"

	.data
	.balign 8
	.globl kernel_va_pa_offset
kernel_va_pa_offset:
	.dword	0
boot_lottery:				/* in .data, not .bss: the winner clears bss */
	.word	0

	/*
	 * The boot hart's stack, above a guard page that mmu.c leaves unmapped: an
	 * overflow faults instead of silently overwriting the rest of bss.
	 */
	.bss
	.balign 4096
	.globl boot_stack_guard
boot_stack_guard:
	.space	4096
boot_stack:
	.space	BOOT_STACK_SIZE
boot_emergency_stack:
	.space	EMERGENCY_STACK_SIZE

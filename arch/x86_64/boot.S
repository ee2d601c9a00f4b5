/*
 * x86_64 boot: the multiboot2 header, the 32-bit entry GRUB jumps to, and the
 * switch to 64-bit long mode in the higher half.
 *
 * GRUB enters _start32 in 32-bit protected mode, paging off, interrupts off, with
 * EAX = the multiboot2 magic and EBX = the physical address of the boot
 * information. So it does when UEFI started it: the header asks for no EFI entry
 * point and no boot services, so GRUB calls ExitBootServices(), leaves long mode
 * and enters here the same way (the EFI memory map is in the boot information).
 * We load boot page tables that map the first 4 GiB three times
 * (identity, for the instructions that turn paging on; at PAGE_OFFSET, the direct
 * map; at KERNEL_VMA, the kernel image), enable long mode, and jump to
 * start64 in the higher half, which sets up the stack and the per-CPU base
 * and calls x86_boot_main(magic, info). arch/x86_64/mmu.c later builds the final
 * tables (all RAM, no identity map). The boot tables are static data: 2 MiB
 * pages (qemu64 has no 1 GiB pages), so four page directories cover 4 GiB.
 */
#include <asm/memory.h>
#include <asm/percpu.h>
#include "processor.h"

#define MB2_HEADER_MAGIC 0xe85250d6
#define MB2_ARCH_I386 0			/* "32-bit protected mode of i386" */
#define MB2_HEADER_LEN (mb2_header_end - mb2_header)

#define PTE_PRESENT 0x1
#define PTE_WRITE 0x2
#define PTE_LARGE 0x80			/* a 2 MiB leaf in a page directory */

#define BOOT_STACK_SIZE 16384

/* ---- multiboot2 header: magic, arch, length, checksum, then tags, 8-aligned ---- */
	.section .multiboot2, "a"
	.balign 8
mb2_header:
	.long MB2_HEADER_MAGIC
	.long MB2_ARCH_I386
	.long MB2_HEADER_LEN
	.long -(MB2_HEADER_MAGIC + MB2_ARCH_I386 + MB2_HEADER_LEN)
	/* end tag: type 0, flags 0, size 8 */
	.short 0
	.short 0
	.long 8
mb2_header_end:

/* ---- 32-bit entry, identity mapped ---- */
	.section .boot.text, "ax"
	.code32
	.globl _start32
_start32:
	cli
	cld
	mov $boot32_stack_top, %esp
	mov %eax, boot_mb2_magic
	mov %ebx, boot_mb2_info

	/* Long mode? CPUID 0x80000001 EDX bit 29. Without it we cannot run at all. */
	mov $0x80000000, %eax
	cpuid
	cmp $0x80000001, %eax
	jb no_long_mode
	mov $0x80000001, %eax
	cpuid
	bt $29, %edx
	jnc no_long_mode

	/* PAE paging with the boot tables. */
	mov %cr4, %eax
	or $CR4_PAE, %eax
	mov %eax, %cr4
	mov $boot_pml4, %eax
	mov %eax, %cr3

	/* Long mode and no-execute support. */
	mov $MSR_EFER, %ecx
	rdmsr
	or $(EFER_LME | EFER_NXE), %eax
	wrmsr

	/* Paging on: we are now in 32-bit compatibility mode of long mode. */
	mov %cr0, %eax
	or $(CR0_PG | CR0_WP), %eax
	mov %eax, %cr0

	lgdt boot_gdt_desc
	ljmp $KERNEL_CS, $start64_low

/* No long mode: say so on COM1 (the PC's first serial port, port 0x3f8) and stop. */
no_long_mode:
	mov $no_long_mode_msg, %esi
1:	lodsb
	test %al, %al
	jz 3f
	mov %al, %bl
	mov $0x3fd, %dx			/* line status register */
2:	in %dx, %al
	test $0x20, %al			/* transmit holding register empty */
	jz 2b
	mov $0x3f8, %dx
	mov %bl, %al
	out %al, %dx
	jmp 1b
3:	cli
	hlt
	jmp 3b

	.code64
start64_low:
	/* Still at the identity address; continue at the kernel's link address. */
	mov $KERNEL_DS, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	movabs $start64, %rax
	jmp *%rax

/* ---- 64-bit, higher half ---- */
	.section .text.entry, "ax"
	.globl start64
start64:
	/* GRUB zeroes .bss; do it again for loaders that do not. Nothing lives there yet. */
	movabs $__bss_start, %rdi
	movabs $__bss_end, %rcx
	sub %rdi, %rcx
	shr $3, %rcx
	xor %eax, %eax
	rep stosq

	movabs $boot_stack_top, %rsp
	xor %ebp, %ebp			/* ends the frame-pointer chain */

	/* Per-CPU base = the .percpu template, with its self pointer (see asm/percpu.h). */
	movabs $__percpu_start, %rax
	mov %rax, (%rax)
	mov %rax, %rdx
	shr $32, %rdx
	mov $MSR_GS_BASE, %ecx
	wrmsr

	mov boot_mb2_magic, %edi
	mov boot_mb2_info, %esi
	call x86_boot_main
1:	cli
	hlt
	jmp 1b

/* ---- boot data, identity mapped ---- */
	.section .boot.data, "aw"
	.balign 4096
	/* PML4: [0] identity, [273] PAGE_OFFSET, [511] KERNEL_VMA. */
	.globl boot_pml4
boot_pml4:
	.quad boot_pdpt_low + (PTE_PRESENT | PTE_WRITE)
	.fill ((PAGE_OFFSET >> 39) & 511) - 1, 8, 0
	.quad boot_pdpt_low + (PTE_PRESENT | PTE_WRITE)
	.fill 511 - ((PAGE_OFFSET >> 39) & 511) - 1, 8, 0
	.quad boot_pdpt_high + (PTE_PRESENT | PTE_WRITE)

	/* 0..4 GiB: four page directories. */
	.globl boot_pdpt_low
boot_pdpt_low:
	.quad boot_pd + 0x0000 + (PTE_PRESENT | PTE_WRITE)
	.quad boot_pd + 0x1000 + (PTE_PRESENT | PTE_WRITE)
	.quad boot_pd + 0x2000 + (PTE_PRESENT | PTE_WRITE)
	.quad boot_pd + 0x3000 + (PTE_PRESENT | PTE_WRITE)
	.fill 508, 8, 0

	/* KERNEL_VMA is entry 510 of the last PDPT: map physical 0..2 GiB there. */
boot_pdpt_high:
	.fill 510, 8, 0
	.quad boot_pd + 0x0000 + (PTE_PRESENT | PTE_WRITE)
	.quad boot_pd + 0x1000 + (PTE_PRESENT | PTE_WRITE)

boot_pd:
	.set addr, 0
	.rept 2048
	.quad addr + (PTE_PRESENT | PTE_WRITE | PTE_LARGE)
	.set addr, addr + 0x200000
	.endr

	/* Flat 64-bit code and data segments, only until desc.c loads the real GDT. */
	.balign 8
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff	/* KERNEL_CS: 64-bit code, present, ring 0 */
	.quad 0x00cf92000000ffff	/* KERNEL_DS: data, present, writable */
boot_gdt_end:
boot_gdt_desc:
	.short boot_gdt_end - boot_gdt - 1
	.long boot_gdt

	.balign 4
	.globl boot_mb2_magic, boot_mb2_info
boot_mb2_magic:	.long 0
boot_mb2_info:	.long 0

no_long_mode_msg:
	.asciz "Grace: this CPU has no 64-bit long mode; stopping.\r\n"

	/* A small stack for the 32-bit code (nothing calls deep there). */
	.balign 16
	.fill 256, 1, 0
boot32_stack_top:

	/*
	 * The boot CPU's stack, above a guard page that mmu.c leaves unmapped in the
	 * image mapping: an overflow faults (and becomes a double fault on the IST
	 * stack) instead of silently overwriting .bss.
	 */
	.section .bss
	.balign 4096
	.globl boot_stack_guard
boot_stack_guard:
	.skip 4096
boot_stack:
	.skip BOOT_STACK_SIZE
	.globl boot_stack_top
boot_stack_top:

/*
 * The AP trampoline. A Startup IPI starts an AP in 16-bit real mode at CS:IP =
 * (vector << 8):0, so smpboot.c copies this code to a free page below 1 MiB and
 * fills in the data at its end: linear addresses of the GDT and of the 32- and
 * 64-bit continuations (the page's address is only known at boot), CR3 (the boot
 * page tables, which identity-map this page) and the higher-half entry.
 * Real mode -> 32-bit protected mode -> long mode -> x86_ap_entry64.
 * The code only reads the page, so any number of APs may run it at once.
 */
#include "processor.h"

#define TRAMP_CS32 0x08
#define TRAMP_DS32 0x10
#define TRAMP_CS64 0x18
#define OFF(sym) ((sym) - x86_trampoline_start)

	.section .trampoline, "a"
	.code16
	.globl x86_trampoline_start
x86_trampoline_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	movzwl %ax, %ebx
	shll $4, %ebx			/* ebx = this page's linear address */
	lgdtl OFF(tramp_gdt_desc)
	movl %cr0, %eax
	orl $CR0_PE, %eax
	movl %eax, %cr0
	ljmpl *OFF(tramp_far32)

	.code32
tramp32:
	movw $TRAMP_DS32, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl OFF(tramp_cr3)(%ebx), %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $(EFER_LME | EFER_NXE), %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_WP), %eax
	movl %eax, %cr0
	ljmpl *OFF(tramp_far64)(%ebx)

	.code64
tramp64:
	movq tramp_entry(%rip), %rax
	jmp *%rax

	.balign 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x08: 32-bit code, flat */
	.quad 0x00cf92000000ffff	/* 0x10: data, flat */
	.quad 0x00af9a000000ffff	/* 0x18: 64-bit code */
tramp_gdt_end:

/* Filled in by smpboot.c; x86_tramp_* are their offsets in the page. */
	.balign 8
	.globl x86_tramp_gdt_desc, x86_tramp_far32, x86_tramp_far64, x86_tramp_cr3, x86_tramp_entry
	.globl x86_tramp_gdt, x86_tramp_32, x86_tramp_64
tramp_gdt_desc:
	.short tramp_gdt_end - tramp_gdt - 1
	.long 0				/* linear address of tramp_gdt */
	.balign 8
tramp_far32:
	.long 0				/* linear address of tramp32 */
	.short TRAMP_CS32
	.balign 8
tramp_far64:
	.long 0				/* linear address of tramp64 */
	.short TRAMP_CS64
	.balign 8
tramp_cr3:
	.long 0
	.balign 8
tramp_entry:
	.quad 0
	.globl x86_trampoline_end
x86_trampoline_end:

	.set x86_tramp_gdt_desc, OFF(tramp_gdt_desc)
	.set x86_tramp_far32, OFF(tramp_far32)
	.set x86_tramp_far64, OFF(tramp_far64)
	.set x86_tramp_cr3, OFF(tramp_cr3)
	.set x86_tramp_entry, OFF(tramp_entry)
	.set x86_tramp_gdt, OFF(tramp_gdt)
	.set x86_tramp_32, OFF(tramp32)
	.set x86_tramp_64, OFF(tramp64)

/*
 * x86_spin_halt(const u8 *kicked): hlt, with interrupts off, unless *kicked is set.
 * The kick is an NMI whose handler (x86_spin_nmi() in spin_halt.c) sets *kicked.
 * An NMI that lands after the test but before hlt would leave hlt waiting for a
 * kick that has already come, so the handler moves an interrupted RIP inside
 * [x86_spin_halt_window, x86_spin_halt_resume) to x86_spin_halt_resume: the test and
 * the hlt are one restartable step. An NMI during hlt returns to x86_spin_halt_resume
 * by itself.
 */
	.section .text
	.globl x86_spin_halt, x86_spin_halt_window, x86_spin_halt_resume
	.balign 16
x86_spin_halt:
x86_spin_halt_window:
	cmpb $0, (%rdi)
	jne x86_spin_halt_resume
	hlt
x86_spin_halt_resume:
	ret

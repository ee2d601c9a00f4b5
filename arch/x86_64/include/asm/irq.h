/* Interrupt enable/disable on x86_64: the IF flag in RFLAGS. */
#ifndef ASM_IRQ_H
#define ASM_IRQ_H

#include <grace/types.h>

#define X86_RFLAGS_IF (1UL << 9)

static inline unsigned long arch_irq_save(void)
{
	unsigned long flags;
	__asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void arch_irq_restore(unsigned long flags)
{
	if (flags & X86_RFLAGS_IF)
		__asm__ volatile("sti" ::: "memory");
}

static inline void arch_irq_enable(void)
{
	__asm__ volatile("sti" ::: "memory");
}

static inline void arch_irq_disable(void)
{
	__asm__ volatile("cli" ::: "memory");
}

static inline bool arch_irqs_disabled(void)
{
	unsigned long flags;
	__asm__ volatile("pushfq; popq %0" : "=r"(flags) : : "memory");
	return !(flags & X86_RFLAGS_IF);
}

/*
 * Message-signalled interrupts (arch/x86_64/msi.c), for PCI's MSI-X: a new vector on
 * the boot CPU, *line to irq_register() (masked until then), and the message a
 * device writes to raise it. 0, or -ENOSPC when every message vector is taken.
 */
#define ARCH_HAS_MSI 1
int arch_msi_alloc(unsigned *line, u64 *addr, u32 *data);

#endif

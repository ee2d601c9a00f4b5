/* Interrupt enable for this hart: sstatus.SIE. The sie CSR's per-source bits stay set. */
#ifndef ASM_IRQ_H
#define ASM_IRQ_H

#include <asm/csr.h>

static inline unsigned long arch_irq_save(void)
{
	unsigned long flags;
	__asm__ __volatile__("csrrci %0, sstatus, %1" : "=r"(flags) : "i"(SSTATUS_SIE) : "memory");
	return flags & SSTATUS_SIE;
}

static inline void arch_irq_restore(unsigned long flags)
{
	__asm__ __volatile__("csrs sstatus, %0" : : "r"(flags & SSTATUS_SIE) : "memory");
}

static inline void arch_irq_enable(void)
{
	__asm__ __volatile__("csrsi sstatus, %0" : : "i"(SSTATUS_SIE) : "memory");
}

static inline void arch_irq_disable(void)
{
	__asm__ __volatile__("csrci sstatus, %0" : : "i"(SSTATUS_SIE) : "memory");
}

static inline bool arch_irqs_disabled(void)
{
	return !(csr_read(sstatus) & SSTATUS_SIE);
}

#endif

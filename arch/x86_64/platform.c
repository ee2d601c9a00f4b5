/*
 * x86_64 platform bring-up after memory and per-CPU areas exist (the 8259s, the
 * boot CPU's LAPIC and timer, the I/O APICs, the AP trampoline), device lines
 * routed to the boot CPU, and the CPU's idle and power-off primitives. Power-off
 * goes through QEMU's isa-debug-exit device (drivers/power/isa_debug_exit.c);
 * without it (real hardware) the CPU halts with interrupts off.
 */
#include <grace/arch.h>
#include <grace/poweroff.h>
#include <grace/printk.h>
#include <asm/irq.h>
#include "processor.h"
#include "x86_64.h"

const char arch_name[] = "x86_64";
const char arch_hwid_name[] = "apic";

void arch_platform_init(void)
{
	i8259_disable(PIC_VECTOR_BASE);
	lapic_init_bsp();
	ioapic_init(&x86_platform.ioapic);
	smpboot_prepare();
}

int arch_irq_unmask(unsigned irq)
{
	if (msi_line(irq))
		return msi_unmask(irq);
	return ioapic_unmask(irq, boot_info.cpus[boot_info.boot_cpu].hwid);
}

void arch_idle(void)
{
	/* sti's one-instruction shadow: no interrupt is taken between sti and hlt. */
	__asm__ volatile("sti; hlt; cli" ::: "memory");
}

void arch_shutdown(int status)
{
	arch_irq_disable();
	isa_debug_exit(status);
	printk("shutdown: no isa-debug-exit device; halting (status %d)\n", status);
	halt_forever();
	__builtin_unreachable();
}

/*
 * The platform as a whole: interrupt bring-up on the boot hart, per-hart
 * interrupt enables, idling, and power-off.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/plic.h>
#include <grace/poweroff.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <asm/csr.h>
#include <asm/irq.h>
#include "riscv.h"
#include "sbi.h"

const char arch_name[] = "riscv64";
const char arch_hwid_name[] = "hart";

static bool have_sifive_test;

void riscv_poweroff_init(void)
{
	have_sifive_test = sifive_test_init(&riscv_machine.test_dev);
}

void riscv_hart_irqs_init(void)
{
	riscv_timer_disarm();
	csr_clear(sip, SIP_SSIP);
	csr_set(sie, SIE_SSIE | SIE_STIE | SIE_SEIE);
}

void arch_platform_init(void)
{
	plic_init(&riscv_machine);
	ipi_init();
	riscv_hart_irqs_init();
	printk("riscv: timer via %s at %llu Hz, IPIs via %s, %u PLIC%s, power-off via %s\n",
	       riscv_timer_kind(), (unsigned long long)boot_info.timer_hz, ipi_kind(),
	       riscv_machine.nr_plics, riscv_machine.nr_plics == 1 ? "" : "s",
	       have_sifive_test ? "sifive,test" : "SBI SRST");
}

int arch_irq_unmask(unsigned irq)
{
	return plic_unmask(irq);
}

void arch_idle(void)
{
	/*
	 * wfi wakes for any interrupt enabled in sie even with sstatus.SIE clear, so an
	 * interrupt that arrived after the caller's check ends it at once. Then open
	 * SIE for an instant: the pending interrupt is taken right there.
	 */
	__asm__ __volatile__("wfi" : : : "memory");
	arch_irq_enable();
	arch_irq_disable();
}

void arch_shutdown(int status)
{
	arch_irq_disable();
	sifive_test_poweroff(status);
	sbi_shutdown(status != 0);
	/*
	 * A machine with only a reset line (sifive_u's GPIO restart) cannot power off.
	 * Under QEMU, -no-reboot makes a reset an exit, and poweroff=reset asks for
	 * one; on a board a reset would boot Grace again, so it halts.
	 */
	const char *how = cmdline_get("poweroff");
	if (how && !strcmp(how, "reset")) {
		printk("riscv: the firmware cannot power off; resetting (poweroff=reset)\n");
		sbi_reset(status != 0);
	}
	printk("riscv: the firmware cannot power off; halted\n");
	for (;;)
		__asm__ __volatile__("wfi");
}

/*
 * The platform as a whole: interrupt bring-up on the boot hart, per-hart
 * interrupt enables, idling, and power-off.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/printk.h>
#include <asm/csr.h>
#include <asm/io.h>
#include <asm/irq.h>
#include "riscv.h"
#include "sbi.h"

/* sifive,test: QEMU exits with status code for (code << 16) | FAIL, 0 for PASS. */
#define SIFIVE_TEST_FAIL 0x3333
#define SIFIVE_TEST_PASS 0x5555
#define SIFIVE_TEST_REG_SIZE 4

const char arch_name[] = "riscv64";
const char arch_hwid_name[] = "hart";

static uintptr_t poweroff_reg;

void riscv_poweroff_init(void)
{
	const struct fdt_mmio *t = &riscv_machine.test_dev;
	if (t->size >= SIFIVE_TEST_REG_SIZE)
		poweroff_reg = (uintptr_t)ioremap(t->base, SIFIVE_TEST_REG_SIZE);
}

void riscv_hart_irqs_init(void)
{
	riscv_timer_disarm();
	csr_clear(sip, SIP_SSIP);
	csr_set(sie, SIE_SSIE | SIE_STIE | SIE_SEIE);
}

void arch_platform_init(void)
{
	plic_init();
	ipi_init();
	riscv_hart_irqs_init();
	printk("riscv: timer via %s at %llu Hz, IPIs via %s, %u PLIC%s, power-off via %s\n",
	       riscv_timer_kind(), (unsigned long long)boot_info.timer_hz, ipi_kind(),
	       riscv_machine.nr_plics, riscv_machine.nr_plics == 1 ? "" : "s",
	       poweroff_reg ? "sifive,test" : "SBI SRST");
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
	if (poweroff_reg) {
		/* QEMU's exit status is the code: keep it in 1..255 for a failure. */
		u32 code = status > 0 && status < 256 ? (u32)status : 1;
		mmio_write32(poweroff_reg,
			     status ? code << 16 | SIFIVE_TEST_FAIL : SIFIVE_TEST_PASS);
	}
	sbi_shutdown(status != 0);
	for (;;)
		__asm__ __volatile__("wfi");
}

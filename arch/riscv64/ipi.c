/*
 * Inter-processor interrupts: each raises the target's supervisor software
 * interrupt (sip.SSIP), which trap.c clears and hands to ipi_interrupt().
 *
 * With an ACLINT SSWI device in the DT (QEMU -machine virt,aclint=on) the kernel
 * sets SSIP itself with one register write per target. Otherwise the SBI IPI
 * extension does it: one ecall per group of harts whose ids fit in one 64-bit
 * mask above a base (hart ids may be sparse or large).
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/printk.h>
#include <asm/io.h>
#include "riscv.h"
#include "sbi.h"

#define SSWI_SETSSIP_STRIDE 4 /* one 32-bit SETSSIP register per hart */

static bool use_sswi;
static uintptr_t sswi_regs[FDT_MAX_SSWIS];

static bool sswi_setup(void)
{
	const struct fdt_machine *m = &riscv_machine;
	if (!m->nr_sswis)
		return false;
	for (unsigned cpu = 0; cpu < m->nr_harts; cpu++) {
		const struct fdt_hart *h = &m->harts[cpu];
		if (h->sswi < 0 ||
		    (u64)(h->sswi_index + 1) * SSWI_SETSSIP_STRIDE > m->sswis[h->sswi].size) {
			pr_warn("riscv: hart %u has no ACLINT SSWI slot; IPIs through SBI\n",
				h->hartid);
			return false;
		}
	}
	for (unsigned i = 0; i < m->nr_sswis; i++) {
		sswi_regs[i] = (uintptr_t)ioremap(m->sswis[i].base, m->sswis[i].size);
		if (!sswi_regs[i])
			return false;
	}
	return true;
}

void ipi_init(void)
{
	use_sswi = sswi_setup();
	if (!use_sswi && !sbi_has(SBI_EXT_IPI))
		panic("riscv: no way to send IPIs: no ACLINT SSWI and no SBI IPI extension");
}

const char *ipi_kind(void)
{
	return use_sswi ? "ACLINT SSWI" : "SBI IPI";
}

static u32 cpu_hartid(unsigned cpu)
{
	return riscv_machine.harts[cpu].hartid;
}

void arch_send_ipi(const struct cpumask *mask)
{
	unsigned cpu;

	if (use_sswi) {
		/* mmio_write32's fence w,o makes the caller's earlier stores visible first. */
		for_each_cpu(cpu, mask) {
			const struct fdt_hart *h = &riscv_machine.harts[cpu];
			mmio_write32(
			    sswi_regs[h->sswi] + (uintptr_t)h->sswi_index * SSWI_SETSSIP_STRIDE, 1);
		}
		return;
	}
	/* The firmware writes the target's MSIP: our stores must be visible before that. */
	__asm__ __volatile__("fence rw, rw" : : : "memory");
	struct cpumask left = *mask;
	while (cpumask_next(&left, 0) < MAX_CPUS) {
		unsigned long base = ~0UL, bits = 0;
		for_each_cpu(cpu, &left)
			base = MIN(base, (unsigned long)cpu_hartid(cpu));
		for_each_cpu(cpu, &left) {
			unsigned long off = cpu_hartid(cpu) - base;
			if (off < BITS_PER_LONG) {
				bits |= 1UL << off;
				cpumask_clear_cpu(&left, cpu);
			}
		}
		int err = sbi_send_ipi(bits, base);
		if (err)
			pr_err("riscv: SBI IPI to harts %lx<<%lu failed: %s\n", bits, base,
			       errno_name(err));
	}
}

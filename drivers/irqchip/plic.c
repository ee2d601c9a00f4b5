/*
 * The platform-level interrupt controller (riscv,plic0 / sifive,plic-1.0.0).
 *
 * A PLIC has sources 1..ndev, each with a priority (0 = never delivered), and
 * contexts (a hart's M-mode or S-mode external interrupt input), each with an
 * enable bit per source, a priority threshold, and a claim/complete register.
 * The device tree's interrupts-extended says which context is which hart's
 * S-mode input; fdt_scan_machine() turned that into (PLIC, context) per hart,
 * and plic_init() keeps that description (logical CPU n is harts[n]).
 *
 * Lines are numbered on the PLIC the console's interrupt is wired to (the
 * "primary" one; QEMU has one PLIC per NUMA socket). plic_unmask() routes a
 * line to the boot hart's S-mode context, or to the first hart with a context
 * on that PLIC if the boot hart has none there.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/plic.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/io.h>

/* Register layout, from the RISC-V PLIC specification. */
#define PLIC_PRIORITY(src) (4 * (uintptr_t)(src))
#define PLIC_ENABLE(ctx) (0x2000 + 0x80 * (uintptr_t)(ctx))
#define PLIC_THRESHOLD(ctx) (0x200000 + 0x1000 * (uintptr_t)(ctx))
#define PLIC_CLAIM(ctx) (PLIC_THRESHOLD(ctx) + 4)
#define PLIC_MAX_SOURCES 1023
#define PLIC_MAX_CONTEXTS 15872
#define PLIC_LINE_PRIORITY 1 /* lowest deliverable priority; all our lines are equal */

static const struct fdt_machine *machine;
static uintptr_t plic_regs[FDT_MAX_PLICS]; /* 0 for a PLIC we could not map */
static int primary = -1;		   /* PLIC whose lines irq numbers name */
static DEFINE_SPINLOCK(plic_lock);	   /* enable-word read-modify-writes */

static bool plic_ctx_ok(const struct fdt_plic *p, int ctx)
{
	return ctx >= 0 && ctx < PLIC_MAX_CONTEXTS && PLIC_CLAIM(ctx) + 4 <= p->size;
}

void plic_init(const struct fdt_machine *m)
{
	machine = m;

	for (unsigned i = 0; i < m->nr_plics; i++) {
		const struct fdt_plic *p = &m->plics[i];
		if (p->ndev > PLIC_MAX_SOURCES || PLIC_PRIORITY(p->ndev) + 4 > p->size) {
			pr_warn(
			    "plic: PLIC at %llx: %u sources do not fit its %llx bytes, not used\n",
			    (unsigned long long)p->base, p->ndev, (unsigned long long)p->size);
			continue;
		}
		plic_regs[i] = (uintptr_t)ioremap(p->base, p->size);
		if (!plic_regs[i])
			continue;
		/* Every source masked by priority 0 until a driver asks for it. */
		for (u32 src = 1; src <= p->ndev; src++)
			mmio_write32(plic_regs[i] + PLIC_PRIORITY(src), 0);
	}
	/* Our harts' S-mode contexts: nothing enabled, threshold 0 (any priority > 0 passes). */
	for (unsigned cpu = 0; cpu < m->nr_harts; cpu++) {
		const struct fdt_hart *h = &m->harts[cpu];
		if (h->plic < 0 || !plic_regs[h->plic])
			continue;
		const struct fdt_plic *p = &m->plics[h->plic];
		if (!plic_ctx_ok(p, h->plic_ctx)) {
			pr_warn("plic: hart %u's PLIC context %d is outside the PLIC\n", h->hartid,
				h->plic_ctx);
			continue;
		}
		for (u32 word = 0; word <= p->ndev / 32; word++)
			mmio_write32(plic_regs[h->plic] + PLIC_ENABLE(h->plic_ctx) + 4 * word, 0);
		mmio_write32(plic_regs[h->plic] + PLIC_THRESHOLD(h->plic_ctx), 0);
	}
	primary = m->console_plic >= 0 ? m->console_plic : (m->nr_plics ? 0 : -1);
	if (primary >= 0 && !plic_regs[primary])
		primary = -1;
	if (primary < 0)
		pr_warn("plic: no usable PLIC; external interrupts are off\n");
}

/* The hart that takes the primary PLIC's lines: the boot hart when it can. */
static int plic_target_cpu(void)
{
	const struct fdt_machine *m = machine;
	unsigned boot = boot_info.boot_cpu;
	if (m->harts[boot].plic == primary &&
	    plic_ctx_ok(&m->plics[primary], m->harts[boot].plic_ctx))
		return (int)boot;
	for (unsigned cpu = 0; cpu < m->nr_harts; cpu++)
		if (m->harts[cpu].plic == primary &&
		    plic_ctx_ok(&m->plics[primary], m->harts[cpu].plic_ctx))
			return (int)cpu;
	return -1;
}

int plic_unmask(unsigned irq)
{
	if (primary < 0)
		return -ENODEV;
	const struct fdt_plic *p = &machine->plics[primary];
	if (irq == 0 || irq > p->ndev)
		return -EINVAL;
	int cpu = plic_target_cpu();
	if (cpu < 0)
		return -ENODEV;
	int ctx = machine->harts[cpu].plic_ctx;
	uintptr_t base = plic_regs[primary];

	unsigned long flags = spin_lock_irqsave(&plic_lock);
	uintptr_t en = base + PLIC_ENABLE(ctx) + 4 * (irq / 32);
	mmio_write32(en, mmio_read32(en) | 1u << (irq % 32));
	mmio_write32(base + PLIC_PRIORITY(irq), PLIC_LINE_PRIORITY);
	spin_unlock_irqrestore(&plic_lock, flags);
	return 0;
}

/* Supervisor external interrupt: claim each pending line of this hart's context, dispatch,
 * complete. */
void plic_handle_irq(unsigned cpu)
{
	const struct fdt_hart *h = &machine->harts[cpu];
	if (h->plic < 0 || !plic_regs[h->plic] ||
	    !plic_ctx_ok(&machine->plics[h->plic], h->plic_ctx))
		return;
	uintptr_t claim = plic_regs[h->plic] + PLIC_CLAIM(h->plic_ctx);
	u32 irq;
	while ((irq = mmio_read32(claim)) != 0) {
		if (h->plic == primary)
			irq_dispatch(irq);
		else
			pr_warn("plic: interrupt %u from a secondary PLIC, ignored\n", irq);
		mmio_write32(claim, irq);
	}
}

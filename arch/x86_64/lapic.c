/*
 * The local APIC (xAPIC, memory-mapped; QEMU's TCG has no x2APIC): per-CPU enable,
 * end-of-interrupt, IPIs and NMIs (the spinlock kick, spin_halt.c) through the
 * interrupt command register, and the per-CPU one-shot timer behind arch_timer_arm().
 *
 * Timer: TSC-deadline mode when CPUID says the CPU has it (the deadline is an
 * absolute TSC value: exact, and no rate to calibrate); otherwise the LAPIC's
 * one-shot count-down, whose rate lapic_init_bsp() measures against the TSC (itself
 * calibrated against the PIT). A deadline beyond the counter's range fires early;
 * the generic timer code re-arms for the rest.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/io.h>
#include <asm/memory.h>
#include <asm/irq.h>
#include "processor.h"
#include "x86_64.h"

/* Register offsets. */
#define LAPIC_ID 0x020
#define LAPIC_TPR 0x080
#define LAPIC_EOI 0x0b0
#define LAPIC_SVR 0x0f0
#define LAPIC_ESR 0x280
#define LAPIC_ICR_LOW 0x300
#define LAPIC_ICR_HIGH 0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0

#define SVR_ENABLE 0x100
#define LVT_MASKED (1u << 16)
#define LVT_DELIVERY_NMI 0x400
#define LVT_TIMER_TSC_DEADLINE (2u << 17)
#define TIMER_DIV_16 0x3	    /* divide configuration encoding for /16 */
#define ICR_BUSY (1u << 12)	    /* delivery status: send pending */
#define ICR_DEST_SHIFT 24	    /* in ICR_HIGH */
#define ICR_ALL_BUT_SELF (3u << 18) /* destination shorthand */
#define ICR_FIXED 0x000
#define ICR_NMI 0x400		    /* delivery mode NMI: the vector field is ignored */
#define ICR_LEVEL_ASSERT (1u << 14) /* required set for every delivery mode but INIT de-assert */

#define APIC_BASE_ENABLE (1ULL << 11) /* MSR_APIC_BASE global enable */
#define APIC_BASE_ADDR_MASK 0xffffffffff000ULL

/*
 * Bound on waiting for the ICR to go idle. Delivery normally takes well under a
 * microsecond; a stuck bit means a broken APIC, and an IPI sender must not hang.
 */
#define ICR_SPIN_LIMIT 1000000
#define CALIBRATE_NS (10 * NSEC_PER_MSEC)
#define TIMER_MAX_DELTA_NS (1ULL << 40) /* about 18 minutes: keeps the tick product in range */

static uintptr_t lapic; /* virtual base, set once by the boot CPU */
static bool tsc_deadline;
static u64 lapic_ticks_mult; /* timer ticks per ns, << 32 */
static u64 lapic_hz;

static u32 lapic_read(u32 reg)
{
	return mmio_read32(lapic + reg);
}

static void lapic_write(u32 reg, u32 v)
{
	mmio_write32(lapic + reg, v);
}

u32 lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

static bool lapic_wait_idle(void)
{
	for (long i = 0; i < ICR_SPIN_LIMIT; i++) {
		if (!(lapic_read(LAPIC_ICR_LOW) & ICR_BUSY))
			return true;
		cpu_relax();
	}
	return false;
}

int lapic_send_icr(u32 dest, u32 low)
{
	/* ICR high then low must not be split by an interrupt that sends its own IPI. */
	unsigned long flags = arch_irq_save();
	int err = 0;
	if (!lapic_wait_idle()) {
		err = -ETIMEDOUT;
	} else {
		lapic_write(LAPIC_ICR_HIGH, dest << ICR_DEST_SHIFT);
		lapic_write(LAPIC_ICR_LOW, low);
		if (!lapic_wait_idle())
			err = -ETIMEDOUT;
	}
	arch_irq_restore(flags);
	if (err)
		pr_err("lapic: IPI %x to APIC %u still pending after %d polls\n", low, dest,
		       ICR_SPIN_LIMIT);
	return err;
}

void arch_send_ipi(const struct cpumask *mask)
{
	struct cpumask others = cpu_online_mask;
	unsigned self = smp_processor_id(), cpu;

	/*
	 * One shorthand IPI when the mask is every other CPU and every CPU the firmware
	 * has is online (the shorthand reaches all of them, not only those in the mask).
	 */
	cpumask_clear_cpu(&others, self);
	bool all_others = !cpumask_test_cpu(mask, self) &&
			  boot_info.nr_cpus_found == boot_info.nr_cpus &&
			  num_online_cpus() == boot_info.nr_cpus;
	for (unsigned i = 0; all_others && i < CPUMASK_WORDS; i++)
		all_others = mask->bits[i] == others.bits[i];
	if (all_others && boot_info.nr_cpus > 1) {
		lapic_send_icr(0, ICR_ALL_BUT_SELF | ICR_FIXED | IPI_VECTOR);
		return;
	}
	for_each_cpu(cpu, mask)
		lapic_send_icr(boot_info.cpus[cpu].hwid, ICR_FIXED | IPI_VECTOR);
}

int lapic_send_nmi(u32 dest)
{
	return lapic_send_icr(dest, ICR_NMI | ICR_LEVEL_ASSERT);
}

static void lapic_timer_setup(void)
{
	if (tsc_deadline) {
		lapic_write(LAPIC_LVT_TIMER, LVT_TIMER_TSC_DEADLINE | TIMER_VECTOR);
	} else {
		lapic_write(LAPIC_TIMER_DIV, TIMER_DIV_16);
		lapic_write(LAPIC_LVT_TIMER, TIMER_VECTOR); /* one-shot */
		lapic_write(LAPIC_TIMER_INIT, 0);	    /* stopped */
	}
}

/* Per-CPU: enable the LAPIC, mask the legacy LINT0, keep LINT1 as NMI, set up the timer. */
void lapic_init_cpu(void)
{
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE);
	lapic_write(LAPIC_SVR, SVR_ENABLE | SPURIOUS_VECTOR);
	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LVT_DELIVERY_NMI);
	lapic_write(LAPIC_LVT_ERROR, LAPIC_ERROR_VECTOR);
	/* The ESR latches on a write; two writes clear anything left by the firmware. */
	lapic_write(LAPIC_ESR, 0);
	lapic_write(LAPIC_ESR, 0);
	lapic_timer_setup();
	lapic_eoi(); /* in case the firmware left one in service */
}

/* Count LAPIC timer ticks (divide by 16) over CALIBRATE_NS of the TSC clock. */
static void lapic_timer_calibrate(void)
{
	lapic_write(LAPIC_TIMER_DIV, TIMER_DIV_16);
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED | TIMER_VECTOR);
	u64 start = arch_clock_ns();
	lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
	while (arch_clock_ns() - start < CALIBRATE_NS)
		cpu_relax();
	u32 left = lapic_read(LAPIC_TIMER_CUR);
	u64 elapsed = arch_clock_ns() - start;
	lapic_write(LAPIC_TIMER_INIT, 0);

	u64 ticks = 0xffffffffu - left;
	lapic_hz = ticks * NSEC_PER_SEC / elapsed;
	if (lapic_hz == 0 || lapic_hz >= (1ULL << 32)) {
		pr_err("lapic: timer rate %llu Hz is implausible; assuming 62.5 MHz\n",
		       (unsigned long long)lapic_hz);
		lapic_hz = 62500000; /* QEMU's 1 GHz APIC clock divided by 16 */
	}
	lapic_ticks_mult = (lapic_hz << 32) / NSEC_PER_SEC;
}

void lapic_init_bsp(void)
{
	u64 base = x86_platform.lapic_phys;
	if (!base)
		base = rdmsr(MSR_APIC_BASE) & APIC_BASE_ADDR_MASK;
	lapic = (uintptr_t)ioremap(base, PAGE_SIZE);
	if (!lapic)
		x86_fatal("lapic: cannot map the local APIC");

	tsc_deadline = cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE;
	if (!tsc_deadline)
		lapic_timer_calibrate();
	lapic_init_cpu();
	if (tsc_deadline)
		printk("lapic: APIC id %u, timer in TSC-deadline mode\n", lapic_id());
	else
		printk(
		    "lapic: APIC id %u, one-shot timer at %llu kHz (calibrated against the TSC)\n",
		    lapic_id(), (unsigned long long)(lapic_hz / 1000));
}

void arch_timer_arm(u64 deadline_ns)
{
	if (tsc_deadline) {
		/* Writing 0 disarms; a deadline already past fires at once. */
		wrmsr(MSR_TSC_DEADLINE, deadline_ns == UINT64_MAX ? 0 : tsc_from_ns(deadline_ns));
		return;
	}
	if (deadline_ns == UINT64_MAX) {
		lapic_write(LAPIC_TIMER_INIT, 0);
		return;
	}
	u64 now = arch_clock_ns();
	u64 delta = deadline_ns > now ? deadline_ns - now : 0;
	if (delta > TIMER_MAX_DELTA_NS)
		delta = TIMER_MAX_DELTA_NS;
	u64 ticks = (u64)(((unsigned __int128)delta * lapic_ticks_mult) >> 32);
	if (ticks == 0)
		ticks = 1; /* 0 would stop the timer instead of firing it */
	if (ticks > 0xffffffffu)
		ticks = 0xffffffffu;
	lapic_write(LAPIC_TIMER_INIT, (u32)ticks);
}

void lapic_timer_interrupt(struct regs *regs)
{
	timer_interrupt(regs);
}

/*
 * Starting the application processors (APs) with INIT-SIPI-SIPI.
 *
 * The sequence from the Intel SDM (vol. 3, "MP initialization"): an INIT IPI puts
 * the AP into wait-for-SIPI; after 10 ms a Startup IPI starts it in real mode at
 * the trampoline page (vector = page number, so the page must lie below 1 MiB);
 * a second SIPI 200 us later covers a first one that was lost. To keep a 64-CPU
 * boot short, smpboot_prepare() sends the INITs to every AP at once and
 * arch_cpu_start() only makes sure 10 ms have passed before its SIPIs.
 *
 * Hand-off: arch_cpu_start() publishes the AP's stack in x86_ap_stack[cpu]; the
 * AP finds its logical id through x86_apic_to_cpu[] (entry.S). Whether a late AP
 * may still join is decided by generic code (secondary_main's BOOTING -> ONLINE
 * handshake); before that an AP only touches its own GDT, TSS, stacks and LAPIC.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/percpu.h>
#include "processor.h"
#include "x86_64.h"

#define INIT_DELAY_NS (10 * NSEC_PER_MSEC)  /* SDM: INIT, then 10 ms */
#define SIPI_DELAY_NS (200 * NSEC_PER_USEC) /* SDM: 200 us after each SIPI */
#define XAPIC_MAX_ID 0xff		    /* the ICR's destination field is 8 bits */
#define NO_CPU 0xffff
#define IST_ORDER 3 /* 32 KiB: three 8 KiB IST stacks, rounded up */

/* ICR low word: delivery mode, level, trigger. */
#define ICR_INIT 0x00000500
#define ICR_STARTUP 0x00000600
#define ICR_LEVEL_ASSERT 0x00004000
#define ICR_TRIGGER_LEVEL 0x00008000

u16 x86_apic_to_cpu[XAPIC_MAX_ID + 1]; /* read by entry.S */
uintptr_t x86_ap_stack[MAX_CPUS];      /* read by entry.S */
static uintptr_t ap_ist[MAX_CPUS][IST_STACKS];
static bool ap_arrived[MAX_CPUS]; /* set by the AP as soon as it runs C code */
static u64 init_sent_ns;
static bool trampoline_ready;

extern char x86_trampoline_start[], x86_trampoline_end[];
extern char x86_tramp_gdt_desc[], x86_tramp_far32[], x86_tramp_far64[], x86_tramp_cr3[],
    x86_tramp_entry[], x86_tramp_gdt[], x86_tramp_32[], x86_tramp_64[];
extern char x86_ap_entry64[];

static void tramp_put32(u8 *page, const char *field, u32 v)
{
	memcpy(page + (uintptr_t)field, &v, sizeof(v));
}

static void trampoline_install(phys_addr_t pa)
{
	u8 *page = phys_to_virt(pa);
	size_t size = (size_t)(x86_trampoline_end - x86_trampoline_start);
	u64 entry = (uintptr_t)x86_ap_entry64;

	BUG_ON(size > PAGE_SIZE);
	memcpy(page, x86_trampoline_start, size);
	/* The GDT descriptor's base is 2 bytes in, after the limit. */
	tramp_put32(page, x86_tramp_gdt_desc + 2, (u32)pa + (u32)(uintptr_t)x86_tramp_gdt);
	tramp_put32(page, x86_tramp_far32, (u32)pa + (u32)(uintptr_t)x86_tramp_32);
	tramp_put32(page, x86_tramp_far64, (u32)pa + (u32)(uintptr_t)x86_tramp_64);
	tramp_put32(page, x86_tramp_cr3, (u32)x86_trampoline_cr3);
	memcpy(page + (uintptr_t)x86_tramp_entry, &entry, sizeof(entry));
}

void smpboot_prepare(void)
{
	for (unsigned i = 0; i <= XAPIC_MAX_ID; i++)
		x86_apic_to_cpu[i] = NO_CPU;
	if (boot_info.nr_cpus < 2)
		return;
	if (!x86_platform.trampoline_phys) {
		pr_err("smp: no free page below 1 MiB for the AP trampoline; running on one CPU\n");
		return;
	}
	if (x86_trampoline_cr3 >> 32) {
		pr_err("smp: boot page tables above 4 GiB; the trampoline cannot load them\n");
		return;
	}
	trampoline_install(x86_platform.trampoline_phys);

	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		u32 apic = boot_info.cpus[cpu].hwid;
		if (cpu != boot_info.boot_cpu && apic <= XAPIC_MAX_ID)
			x86_apic_to_cpu[apic] = cpu;
	}
	/* Pairs with the AP reading the table: it only runs after the IPIs below. */
	smp_wmb();

	/* INIT every AP now; arch_cpu_start() waits out the rest of the 10 ms. */
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		u32 apic = boot_info.cpus[cpu].hwid;
		if (cpu == boot_info.boot_cpu || apic > XAPIC_MAX_ID)
			continue;
		lapic_send_icr(apic, ICR_INIT | ICR_LEVEL_ASSERT | ICR_TRIGGER_LEVEL);
		/* De-assert: needed by old discrete APICs, ignored by integrated ones. */
		lapic_send_icr(apic, ICR_INIT | ICR_TRIGGER_LEVEL);
	}
	init_sent_ns = arch_clock_ns();
	trampoline_ready = true;
}

int arch_cpu_start(unsigned cpu, uintptr_t stack_top)
{
	if (cpu >= boot_info.nr_cpus || cpu == boot_info.boot_cpu)
		return -EINVAL;
	u32 apic = boot_info.cpus[cpu].hwid;
	if (apic > XAPIC_MAX_ID)
		return -ERANGE; /* would need x2APIC */
	if (!trampoline_ready)
		return -ENODEV;

	char *ist = alloc_pages(IST_ORDER);
	if (!ist)
		return -ENOMEM;
	for (unsigned i = 0; i < IST_STACKS; i++)
		ap_ist[cpu][i] = (uintptr_t)ist + (i + 1) * IST_STACK_SIZE;
	/* Release: the AP reads its stack, then everything it needs from here. */
	smp_store_release(&x86_ap_stack[cpu], stack_top);

	while (arch_clock_ns() - init_sent_ns < INIT_DELAY_NS)
		cpu_relax();

	u32 vector = (u32)(x86_platform.trampoline_phys >> PAGE_SHIFT);
	int err = lapic_send_icr(apic, ICR_STARTUP | vector);
	delay_ns(SIPI_DELAY_NS);
	if (!err && !smp_load_acquire(&ap_arrived[cpu])) {
		err = lapic_send_icr(apic, ICR_STARTUP | vector);
		delay_ns(SIPI_DELAY_NS);
	}
	return err;
}

/* Called by entry.S on the AP's own stack, interrupts off. */
void __noreturn x86_ap_main(unsigned cpu)
{
	smp_store_release(&ap_arrived[cpu], true);
	arch_set_percpu_base(percpu_base(cpu));
	desc_init_cpu(cpu, ap_ist[cpu]);
	x86_user_protect_init_cpu(false);
	x86_user_init_cpu();
	lapic_init_cpu();
	secondary_main();
}

/*
 * x86_64 discovery: turn the multiboot2 information (memory map, command line,
 * modules, ACPI RSDP) and the ACPI tables (CPUs, I/O APICs, interrupt overrides,
 * NUMA affinity) into boot_info, then enter the generic kernel.
 *
 * x86_boot_main() runs on the boot CPU straight from boot.S, on the boot page
 * tables (first 4 GiB mapped), interrupts off, with the per-CPU base at the
 * .percpu template.
 */
#include <grace/acpi.h>
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/multiboot2.h>
#include <grace/pci.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <asm/memory.h>
#include "processor.h"
#include "x86_64.h"

/*
 * The console is the PC's first serial port, COM1: I/O port 0x3f8, ISA IRQ 4. These
 * are the PC architecture's conventional assignments (every PC BIOS and QEMU's
 * `pc` machine use them), not QEMU-specific addresses.
 */
#define COM1_PORT 0x3f8
#define COM1_IRQ 4

#define LOW_MEMORY_END 0x100000 /* real-mode addressable memory: BIOS data, EBDA, ROMs */
#define TRAMPOLINE_MIN 0x1000	/* keep the real-mode IVT page out of the running */
#define FOUR_GIB 0x100000000ULL
#define XAPIC_BROADCAST_ID 0xff /* xAPIC ids are 8 bits and 0xff means "all" */

#define CPUID_HYPERVISOR_LEAF 0x40000000
#define CPUID1_ECX_HYPERVISOR (1u << 31)

struct x86_platform x86_platform;
bool x86_relax_with_pause; /* see asm/cpu.h */
static struct mb2_info mb2;
static struct acpi_info acpi;
static u32 node_domain[MAX_NODES]; /* dense node id -> SRAT proximity domain */

static u8 bsp_ist_stacks[IST_STACKS][IST_STACK_SIZE] __aligned(16);

extern char _kernel_phys_start[], _end[];

void x86_fatal(const char *msg)
{
	/* boot_info.console is set first thing, so the message and the log reach COM1. */
	console_init();
	panic("%s", msg);
}

static void boot_add_ram(phys_addr_t base, u64 size, int node)
{
	if (boot_info.nr_mem == MAX_MEM_RANGES) {
		pr_warn("boot: more than %u RAM ranges; ignoring %llx+%llx\n", MAX_MEM_RANGES,
			(unsigned long long)base, (unsigned long long)size);
		return;
	}
	boot_info.mem[boot_info.nr_mem++] = (struct mem_range){base, size, node};
}

static void boot_reserve_or_warn(phys_addr_t base, u64 size, const char *what)
{
	if (boot_reserve(base, size))
		pr_err("boot: reserved-range table full; %s at %llx is not protected\n", what,
		       (unsigned long long)base);
}

static bool overlaps(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* A free RAM page below 1 MiB for the AP trampoline: not the info block, not a module. */
static phys_addr_t pick_trampoline_page(phys_addr_t info_pa, u32 info_size)
{
	phys_addr_t best = 0;
	for (unsigned i = 0; i < mb2.nr_mmap; i++) {
		const struct mb2_mmap_entry *e = &mb2.mmap[i];
		if (e->type != MB2_MEM_AVAILABLE || e->base >= LOW_MEMORY_END)
			continue;
		phys_addr_t lo = MAX(ALIGN_UP(e->base, PAGE_SIZE), (phys_addr_t)TRAMPOLINE_MIN);
		phys_addr_t hi =
		    ALIGN_DOWN(MIN(e->base + e->length, (u64)LOW_MEMORY_END), PAGE_SIZE);
		for (phys_addr_t p = hi; p >= lo + PAGE_SIZE; p -= PAGE_SIZE) {
			phys_addr_t page = p - PAGE_SIZE;
			bool busy = overlaps(page, PAGE_SIZE, info_pa, info_size);
			for (unsigned m = 0; m < mb2.nr_modules; m++)
				busy |= overlaps(page, PAGE_SIZE, mb2.modules[m].start,
						 mb2.modules[m].end - mb2.modules[m].start);
			if (!busy) {
				best = MAX(best, page);
				break;
			}
		}
	}
	return best;
}

static void boot_parse_multiboot2(u32 magic, u32 info_pa)
{
	if (magic != MB2_BOOTLOADER_MAGIC)
		x86_fatal("boot: not started by a multiboot2 boot loader (bad magic in EAX)");
	const u32 *hdr = phys_to_virt(info_pa);
	u32 size = *hdr;
	if (size > MB2_INFO_MAX_SIZE || (u64)info_pa + size > FOUR_GIB)
		x86_fatal("boot: multiboot2 information block has an impossible size");
	if (mb2_parse(hdr, size, &mb2))
		x86_fatal("boot: cannot parse the multiboot2 information");

	boot_info.fw_blob = hdr;
	boot_info.fw_blob_size = size;
	strlcpy(boot_info.cmdline, mb2.cmdline, sizeof(boot_info.cmdline));
	if (strlen(mb2.cmdline) >= sizeof(boot_info.cmdline))
		pr_warn("boot: command line longer than %u bytes, truncated\n", CMDLINE_MAX - 1);

	if (mb2.mmap_from_efi)
		printk("multiboot2: no BIOS memory map; RAM from the EFI memory map (%u ranges)\n",
		       mb2.nr_mmap);
	for (unsigned i = 0; i < mb2.nr_mmap; i++)
		if (mb2.mmap[i].type == MB2_MEM_AVAILABLE)
			boot_add_ram(mb2.mmap[i].base, mb2.mmap[i].length, 0);
	/* Firmware tables (types 2-4) are not RAM we may use: they are simply not in mem[]. */

	boot_reserve_or_warn(info_pa, size, "the multiboot2 information");
	for (unsigned i = 0; i < mb2.nr_modules; i++)
		boot_reserve_or_warn(mb2.modules[i].start,
				     mb2.modules[i].end - mb2.modules[i].start, "a boot module");
	/* The first module is the initramfs, as GRUB's module2 line gives it (reserved above). */
	if (mb2.nr_modules && mb2.modules[0].end > mb2.modules[0].start) {
		boot_info.initrd_start = mb2.modules[0].start;
		boot_info.initrd_end = mb2.modules[0].end;
	}
	x86_platform.trampoline_phys = pick_trampoline_page(info_pa, size);
	/* The first MiB: real-mode IVT, BIOS data, EBDA, and the trampoline page. */
	boot_reserve_or_warn(0, LOW_MEMORY_END, "low memory");

	boot_info.kernel_start = (phys_addr_t)(uintptr_t)_kernel_phys_start;
	boot_info.kernel_end = virt_to_phys(_end);
}

/* The ACPI parser's view of physical memory: firmware-described areas only. */
static const void *acpi_map_boot(void *ctx, u64 pa, u64 len)
{
	if (!mb2_range_in_mmap(ctx, pa, len, MB2_TYPES_FIRMWARE))
		return NULL;
	return mmu_map_phys(pa, len, false);
}

static int node_of_domain(u32 domain)
{
	if (domain == ACPI_NO_DOMAIN)
		return 0;
	for (unsigned n = 0; n < boot_info.nr_nodes; n++)
		if (node_domain[n] == domain)
			return (int)n;
	if (boot_info.nr_nodes == MAX_NODES) {
		pr_warn("acpi: more than %u NUMA domains; domain %u folded into node 0\n",
			MAX_NODES, domain);
		return 0;
	}
	node_domain[boot_info.nr_nodes] = domain;
	return (int)boot_info.nr_nodes++;
}

/* Split the RAM ranges at the SRAT's memory affinity boundaries and label them. */
static void boot_split_ram_by_node(void)
{
	struct mem_range old[MAX_MEM_RANGES];
	unsigned nr_old = boot_info.nr_mem;

	memcpy(old, boot_info.mem, sizeof(old));
	boot_info.nr_mem = 0;
	for (unsigned i = 0; i < nr_old; i++) {
		u64 cur = old[i].base, end = old[i].base + old[i].size;
		while (cur < end) {
			u64 piece_end = end;
			int node = 0;
			for (unsigned a = 0; a < acpi.nr_mem_affinity; a++) {
				const struct acpi_mem_affinity *m = &acpi.mem_affinity[a];
				if (m->base <= cur && cur - m->base < m->length) {
					piece_end = MIN(end, m->base + m->length);
					node = node_of_domain(m->domain);
					break;
				}
				if (m->base > cur)
					piece_end = MIN(piece_end, m->base);
			}
			boot_add_ram(cur, piece_end - cur, node);
			cur = piece_end;
		}
	}
}

/* The SLIT is by proximity domain; boot_info's table is by node. numa_init() checks it. */
static void boot_node_distances(void)
{
	for (unsigned a = 0; a < boot_info.nr_nodes; a++) {
		u32 da = node_domain[a];
		for (unsigned b = 0; b < boot_info.nr_nodes; b++) {
			u32 db = node_domain[b];
			if (da < acpi.slit_localities && db < acpi.slit_localities)
				boot_info.node_distance[a][b] = acpi.slit[da][db];
		}
	}
}

static void boot_print_nodes(void)
{
	for (unsigned n = 0; n < boot_info.nr_nodes; n++) {
		unsigned cpus = 0;
		u64 ram = 0;
		for (unsigned i = 0; i < boot_info.nr_cpus; i++)
			cpus += boot_info.cpus[i].node == (int)n;
		for (unsigned i = 0; i < boot_info.nr_mem; i++)
			if (boot_info.mem[i].node == (int)n)
				ram += boot_info.mem[i].size;
		printk("numa: node %u (SRAT domain %u): %u CPUs, %llu MiB\n", n, node_domain[n],
		       cpus, (unsigned long long)(ram >> 20));
	}
}

/* What the MCFG and HPET tables say, handed to the PCI code and the TSC calibration. */
static void boot_acpi_devices(void)
{
	for (unsigned i = 0; i < acpi.nr_mcfg; i++) {
		const struct acpi_mcfg *m = &acpi.mcfg[i];
		/* Grace's PCI code knows one segment: 0, the one every PC has. */
		if (m->segment != 0 || pci_set_ecam(m->base, m->start_bus, m->end_bus))
			printk("acpi: ECAM for segment %u, buses %u-%u, not used\n", m->segment,
			       m->start_bus, m->end_bus);
	}
	x86_platform.hpet_phys = acpi.hpet_addr;
}

static void boot_single_cpu(u32 apic_id)
{
	boot_info.cpus[0] = (struct cpu_desc){apic_id, 0};
	boot_info.nr_cpus = boot_info.nr_cpus_found = 1;
	boot_info.boot_cpu = 0;
}

static void boot_parse_acpi(void)
{
	u32 boot_apic = cpuid(1, 0).ebx >> 24; /* initial APIC id of this CPU */
	const void *rsdp = mb2.rsdp_v2 ? mb2.rsdp_v2 : mb2.rsdp_v1;
	size_t rsdp_len = mb2.rsdp_v2 ? mb2.rsdp_v2_len : mb2.rsdp_v1_len;

	boot_info.nr_nodes = 1;
	if (!rsdp) {
		pr_err(
		    "acpi: the boot loader passed no RSDP; running on one CPU without I/O APIC\n");
		boot_single_cpu(boot_apic);
		return;
	}
	if (acpi_parse(rsdp, rsdp_len, acpi_map_boot, &mb2, &acpi)) {
		pr_err("acpi: unusable tables; running on one CPU without I/O APIC\n");
		boot_single_cpu(boot_apic);
		return;
	}
	printk("acpi: RSDP rev %u (%s) via %s: %u CPUs enabled, %u I/O APICs, %u overrides%s%s%s\n",
	       acpi.rsdp_revision, acpi.oem_id, acpi.xsdt ? "XSDT" : "RSDT",
	       acpi_enabled_cpus(&acpi), acpi.nr_ioapics, acpi.nr_overrides,
	       acpi.has_srat ? ", SRAT" : "", acpi.nr_mcfg ? ", MCFG" : "",
	       acpi.hpet_addr ? ", HPET" : "");
	boot_acpi_devices();

	x86_platform.lapic_phys = acpi.lapic_addr;
	struct ioapic_config *io = &x86_platform.ioapic;
	memcpy(io->ioapics, acpi.ioapics, sizeof(acpi.ioapics));
	io->nr_ioapics = acpi.nr_ioapics;
	memcpy(io->overrides, acpi.overrides, sizeof(acpi.overrides));
	io->nr_overrides = acpi.nr_overrides;
	io->vector_base = IRQ_VECTOR_BASE;

	/* Logical ids in MADT order; the boot CPU always gets a slot, even past MAX_CPUS. */
	bool boot_seen = false;
	unsigned online_capable = 0;
	boot_info.nr_cpus = boot_info.nr_cpus_found = 0;
	if (acpi.has_srat)
		boot_info.nr_nodes = 0;
	for (unsigned i = 0; i < acpi.nr_cpus; i++) {
		const struct acpi_cpu *c = &acpi.cpus[i];
		if (!c->enabled) {
			online_capable++;
			continue;
		}
		if (c->apic_id >= XAPIC_BROADCAST_ID) {
			pr_warn("acpi: CPU with APIC id %u needs x2APIC, which Grace does not use; "
				"skipped\n",
				c->apic_id);
			continue;
		}
		boot_info.nr_cpus_found++;
		bool is_boot = c->apic_id == boot_apic;
		unsigned room = MAX_CPUS - (boot_seen ? 0 : 1); /* keep one slot for the boot CPU */
		if (!is_boot && boot_info.nr_cpus >= room)
			continue;
		if (is_boot) {
			boot_seen = true;
			boot_info.boot_cpu = boot_info.nr_cpus;
		}
		boot_info.cpus[boot_info.nr_cpus++] =
		    (struct cpu_desc){c->apic_id, acpi.has_srat ? node_of_domain(c->domain) : 0};
	}
	if (!boot_seen) {
		pr_err(
		    "acpi: the MADT does not list the boot CPU (APIC id %u); running on it alone\n",
		    boot_apic);
		boot_single_cpu(boot_apic);
	}
	if (online_capable)
		printk("acpi: %u more CPUs are online-capable (hot-pluggable); not started\n",
		       online_capable);
	if (acpi.has_srat) {
		boot_split_ram_by_node();
		if (boot_info.nr_nodes == 0)
			boot_info.nr_nodes = 1;
		boot_node_distances();
		boot_print_nodes();
	}
}

/*
 * What the hypervisor CPUID leaf says. CPUID.1:ECX bit 31 is set by every hypervisor
 * and emulator and clear on real hardware (Intel SDM and AMD APM reserve it for
 * that); leaf 0x40000000 then names the hypervisor in EBX, ECX, EDX:
 * "TCGTCGTCGTCG" (QEMU's TCG), "KVMKVMKVM" (KVM), "Microsoft Hv", "VMwareVMware",
 * "XenVMMXenVMM". Read once at boot; arch_is_virtual() and cpu_relax() use it.
 */
static bool hypervisor_present;
static char hypervisor_sig[13];
static char virtual_why[64];

static void hypervisor_detect(void)
{
	hypervisor_present = cpuid(1, 0).ecx & CPUID1_ECX_HYPERVISOR;
	if (hypervisor_present) {
		struct cpuid_regs r = cpuid(CPUID_HYPERVISOR_LEAF, 0);
		memcpy(hypervisor_sig, &r.ebx, 4);
		memcpy(hypervisor_sig + 4, &r.ecx, 4);
		memcpy(hypervisor_sig + 8, &r.edx, 4);
		hypervisor_sig[12] = '\0';
		/* Printable for the boot log: a signature may pad with NULs (KVM) or hold anything.
		 */
		for (unsigned i = 0; i < 12 && hypervisor_sig[i]; i++)
			if (hypervisor_sig[i] < ' ' || hypervisor_sig[i] > '~')
				hypervisor_sig[i] = '?';
		snprintf(virtual_why, sizeof(virtual_why), "CPUID hypervisor leaf: '%s'",
			 hypervisor_sig);
	} else {
		snprintf(virtual_why, sizeof(virtual_why), "no CPUID hypervisor bit");
	}
}

/* True under QEMU's TCG, which names itself in the hypervisor CPUID leaf. */
static bool running_on_tcg(void)
{
	return hypervisor_present && !strcmp(hypervisor_sig, "TCGTCGTCGTCG");
}

bool arch_is_virtual(const char **why)
{
	if (why)
		*why = virtual_why;
	return hypervisor_present;
}

void __noreturn x86_boot_main(u32 magic, u32 info_pa)
{
	uintptr_t ist_top[IST_STACKS];

	boot_info.console = (struct console_desc){
	    .kind = CONSOLE_NS16550_PIO,
	    .base = COM1_PORT,
	    .reg_shift = 0,
	    .reg_io_width = 1,
	    .irq = COM1_IRQ,
	};
	for (unsigned i = 0; i < IST_STACKS; i++)
		ist_top[i] = (uintptr_t)bsp_ist_stacks[i] + IST_STACK_SIZE;
	desc_init_cpu(MAX_CPUS, ist_top); /* exceptions now reach die() */
	hypervisor_detect();
	x86_user_protect_init_cpu(true);
	x86_user_init_cpu();
	x86_relax_with_pause = !running_on_tcg();

	boot_parse_multiboot2(magic, info_pa);
	mmu_init();
	boot_parse_acpi();
	tsc_calibrate();
	boot_info.timer_hz = tsc_hz;
	kernel_main();
}

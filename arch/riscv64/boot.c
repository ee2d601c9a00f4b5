/*
 * riscv_boot_main(): the boot hart's C entry, from head.S with the MMU on (image
 * mapped high, early direct map), on the boot stack, tp = __percpu_start. It reads
 * the device tree into boot_info, builds the final page tables, and calls
 * kernel_main(). Until then there is no console: a fatal problem is printed
 * through the SBI legacy console, with whatever printk logged before it.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <asm/memory.h>
#include "hart.h"
#include "kernel_pgtable.h"
#include "riscv.h"
#include "sbi.h"

struct fdt_machine riscv_machine;
bool riscv_early_boot = true;

extern char _start_image[], _end[];

static void sbi_console_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			sbi_console_putchar('\r');
		sbi_console_putchar(s[i]);
	}
}

/* The firmware's console: for fatal boot errors, and for machines whose DT has no 16550. */
static const struct console sbi_console = {"sbi", sbi_console_write};

static void __noreturn __printf(1, 2) early_fatal(const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s\n", msg);
	/* Replays everything logged so far, the parser's complaints included. */
	console_register(&sbi_console);
	pr_err("riscv: cannot boot; powering off\n");
	arch_shutdown(1);
}

void riscv_early_trap(const char *what, struct regs *regs)
{
	pr_err("riscv: %s during early boot\n", what);
	arch_dump_regs(regs);
	backtrace_print(regs_pc(regs), regs_fp(regs));
	early_fatal("riscv: trap before kernel_main");
}

/*
 * arch_is_virtual(), decided from what the firmware says, in this order:
 *  - the SBI implementation is a hypervisor's (Xvisor, KVM, Xen: sbi.h): virtual;
 *  - the device tree's root names a virtual machine: compatible "riscv-virtio"
 *    (QEMU's virt) or "linux,dummy-virt" (kvmtool and other monitors), or a model
 *    ending in ",qemu" (QEMU's virt and spike: "riscv-virtio,qemu",
 *    "ucbbar,spike-bare,qemu"): virtual;
 *  - anything else is taken for hardware, OpenSBI (implementation id 1) included,
 *    since boards run it too. QEMU's sifive_u describes itself exactly as the real
 *    board does and counts as hardware; spinlock_pv=on overrides.
 */
static bool virtual_machine;
static char virtual_why[96];

static bool compatible_has(const struct fdt_machine *m, const char *name)
{
	for (u32 at = 0; at < m->compatible_len; at += (u32)strlen(m->compatible + at) + 1)
		if (!strcmp(m->compatible + at, name))
			return true;
	return false;
}

static void virtual_detect(const struct fdt_machine *m)
{
	static const char *const virtual_compatibles[] = {"riscv-virtio", "linux,dummy-virt"};
	static const char qemu_suffix[] = ",qemu";
	long impl = sbi_impl_id();
	size_t model_len = strlen(m->model), suffix_len = sizeof(qemu_suffix) - 1;

	virtual_machine = true;
	if (impl == SBI_IMPL_XVISOR || impl == SBI_IMPL_KVM || impl == SBI_IMPL_XEN) {
		snprintf(virtual_why, sizeof(virtual_why), "SBI implementation %ld is a hypervisor",
			 impl);
		return;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(virtual_compatibles); i++)
		if (compatible_has(m, virtual_compatibles[i])) {
			snprintf(virtual_why, sizeof(virtual_why), "device tree compatible '%s'",
				 virtual_compatibles[i]);
			return;
		}
	if (model_len >= suffix_len && !strcmp(m->model + model_len - suffix_len, qemu_suffix)) {
		snprintf(virtual_why, sizeof(virtual_why), "device tree model '%s'", m->model);
		return;
	}
	virtual_machine = false;
	snprintf(virtual_why, sizeof(virtual_why), "SBI implementation %ld, device tree model '%s'",
		 impl, m->model);
}

bool arch_is_virtual(const char **why)
{
	if (why)
		*why = virtual_why;
	return virtual_machine;
}

/*
 * Keep the harts the firmware can start (and the one running this), in order: a
 * logical CPU is its index in m->harts everywhere in the arch.
 */
static void harts_keep_startable(struct fdt_machine *m)
{
	unsigned n = 0, first_left = 0;
	for (unsigned i = 0; i < m->nr_harts; i++) {
		if (i != m->boot_index && !sbi_hart_startable(m->harts[i].hartid)) {
			if (n == i)
				first_left = m->harts[i].hartid;
			continue;
		}
		if (i == m->boot_index)
			m->boot_index = n;
		m->harts[n++] = m->harts[i];
	}
	if (n == m->nr_harts)
		return;
	pr_warn("riscv: the firmware can start %u of the %u harts the device tree describes; "
		"hart %u and %u others stay in the firmware\n",
		n, m->nr_harts, first_left, m->nr_harts - n - 1);
	m->nr_harts_found -= m->nr_harts - n;
	m->nr_harts = n;
}

/* boot_info from what the device tree said. */
static void boot_info_fill(const struct fdt_machine *m, phys_addr_t dtb_pa, u32 dtb_size)
{
	memcpy(boot_info.mem, m->mem, sizeof(m->mem));
	boot_info.nr_mem = m->nr_mem;
	/* The firmware's reservations first (the FDT selftest compares them), then the DTB. */
	memcpy(boot_info.reserved, m->reserved, sizeof(m->reserved));
	boot_info.nr_reserved = m->nr_reserved;
	if (boot_reserve(dtb_pa, dtb_size))
		early_fatal("riscv: no room to reserve the DTB (%u reserved ranges)", MAX_RESERVED);
	if (m->initrd_end) {
		if (boot_reserve(m->initrd_start, m->initrd_end - m->initrd_start))
			early_fatal("riscv: no room to reserve the initramfs (%u reserved ranges)",
				    MAX_RESERVED);
		boot_info.initrd_start = m->initrd_start;
		boot_info.initrd_end = m->initrd_end;
	}

	for (unsigned i = 0; i < m->nr_harts; i++)
		boot_info.cpus[i] = (struct cpu_desc){m->harts[i].hartid, m->harts[i].node};
	boot_info.nr_cpus = m->nr_harts;
	boot_info.nr_cpus_found = m->nr_harts_found;
	boot_info.boot_cpu = m->boot_index;
	boot_info.nr_nodes = m->nr_nodes;
	memcpy(boot_info.node_distance, m->distance, sizeof(m->distance));

	strlcpy(boot_info.cmdline, m->bootargs, CMDLINE_MAX);
	boot_info.console = m->console;
	boot_info.timer_hz = m->timebase_hz;
	memcpy(boot_info.virtio_mmio, m->virtio_mmio, sizeof(m->virtio_mmio));
	boot_info.nr_virtio_mmio = m->nr_virtio_mmio;
	boot_info.kernel_start = virt_to_phys(_start_image);
	boot_info.kernel_end = virt_to_phys(_end);
	boot_info.fw_blob = phys_to_virt(dtb_pa);
	boot_info.fw_blob_size = dtb_size;

	for (unsigned i = 0; i < boot_info.nr_reserved; i++)
		printk(
		    "riscv: reserved [%llx, %llx)%s\n",
		    (unsigned long long)boot_info.reserved[i].base,
		    (unsigned long long)(boot_info.reserved[i].base + boot_info.reserved[i].size),
		    boot_info.reserved[i].base == dtb_pa ? " (device tree)"
		    : boot_info.reserved[i].base == m->initrd_start && m->initrd_end
			? " (initramfs)"
			: "");
}

void __noreturn riscv_boot_main(unsigned long hartid, phys_addr_t dtb_pa)
{
	struct fdt fdt;
	int err;

	sbi_init();
	/* head.S mapped the DTB's GiB and the next one: enough for any blob fdt_open() accepts. */
	if (!dtb_pa || dtb_pa % 8 || dtb_pa >= DIRECT_MAP_SIZE)
		early_fatal("riscv: no usable device tree address from the firmware (a1 = %llx)",
			    (unsigned long long)dtb_pa);
	const void *blob = phys_to_virt(dtb_pa);
	u32 dtb_size = fdt_header_size(blob);
	if (fdt_open(&fdt, blob, dtb_size))
		early_fatal("fdt: the device tree at %llx is invalid: %s",
			    (unsigned long long)dtb_pa, fdt.error);
	if (hartid > 0xffffffffUL)
		early_fatal("riscv: boot hart id %lx does not fit 32 bits", hartid);
	err = fdt_scan_machine(&fdt, (u32)hartid, &riscv_machine);
	if (err)
		early_fatal("fdt: cannot boot from this device tree: %s", errno_name(err));
	harts_keep_startable(&riscv_machine);
	/* The clock conversion keeps hz << 32 in 64 bits; real timebases are tens of MHz. */
	if (riscv_machine.timebase_hz > 0xffffffffULL)
		early_fatal("riscv: timebase-frequency %llu Hz too high",
			    (unsigned long long)riscv_machine.timebase_hz);

	boot_info_fill(&riscv_machine, dtb_pa, dtb_size);
	virtual_detect(&riscv_machine);
	err = mmu_init(dtb_pa, dtb_size);
	if (err)
		early_fatal("riscv: cannot map the device tree: %s", errno_name(err));
	/* From here a fatal error can make QEMU exit with a failure status. */
	riscv_poweroff_init();
	riscv_timer_init(riscv_machine.timebase_hz, riscv_machine.sstc);

	/* The boot hart moves from the early struct to its logical CPU's. */
	struct riscv_hart *h = &riscv_harts[boot_info.boot_cpu];
	*h = riscv_early_hart;
	h->hartid = (u32)hartid;
	csr_write(sscratch, h);

	if (boot_info.console.kind == CONSOLE_NONE) {
		pr_warn("riscv: no UART we drive in the device tree; console through SBI\n");
		console_register(&sbi_console);
	}
	riscv_early_boot = false;
	kernel_main();
}

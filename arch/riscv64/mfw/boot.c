/*
 * The boot hart's work before any hart leaves M-mode: read QEMU's device tree for what
 * the SBI calls drive (each hart's MSWI doorbell and mtimecmp from the CLINT or the
 * ACLINT devices, the sifive,test power-off device, the console UART), give every
 * described hart a stack and the HSM state STOPPED, and mark the firmware's memory
 * reserved in the tree (fdt_reserve.c). Runs on the boot hart alone, the others asleep
 * in entry.S until mfw_ready; the console writes are the only other code here.
 */
#include <grace/atomic.h>
#include <grace/fdt.h>
#include <grace/string.h>
#include "mfw.h"

/* Hart-local interrupt numbers in interrupts-extended (mcause codes). */
#define INTC_M_SOFT 3
#define INTC_M_TIMER 7
/* CLINT layout (SiFive's, which QEMU's virt follows): MSIPs at 0, mtimecmps from 0x4000. */
#define CLINT_MTIMECMP 0x4000
#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

struct mfw_hart mfw_harts[MFW_MAX_HARTS];
volatile u32 *mfw_test_dev;
uintptr_t mfw_uart;
unsigned mfw_uart_shift;

static u8 mfw_stacks[MFW_MAX_HARTS][MFW_STACK_SIZE] __attribute__((aligned(16)));
/* phandle of each hart's riscv,cpu-intc, to read interrupts-extended by */
static u32 intc_phandle[MFW_MAX_HARTS];

int mfw_fdt_reserve(void *blob, uintptr_t room_end, u64 base, u64 size);
extern char _start[], _end[];

void mfw_putc(char c)
{
	if (!mfw_uart)
		return;
	volatile u8 *lsr = (volatile u8 *)(mfw_uart + (UART_LSR << mfw_uart_shift));
	while (!(*lsr & UART_LSR_THRE))
		;
	*(volatile u8 *)(mfw_uart + (UART_THR << mfw_uart_shift)) = (u8)c;
}

void mfw_puts(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			mfw_putc('\r');
		mfw_putc(*s);
	}
}

void mfw_put_hex(unsigned long v)
{
	char buf[19] = "0x";
	int n = 2;
	for (int shift = 60; shift >= 0; shift -= 4)
		if ((v >> shift) || shift == 0 || n > 2)
			buf[n++] = "0123456789abcdef"[(v >> shift) & 15];
	buf[n] = '\0';
	mfw_puts(buf);
}

static void put_dec(unsigned long v)
{
	char buf[21];
	int n = sizeof(buf) - 1;
	buf[n] = '\0';
	do
		buf[--n] = (char)('0' + v % 10);
	while (v /= 10);
	mfw_puts(buf + n);
}

void __attribute__((noreturn)) mfw_halt(const char *why)
{
	mfw_puts("grace-fw: ");
	mfw_puts(why);
	mfw_puts("; halted\n");
	if (mfw_test_dev)
		*mfw_test_dev = (1 << 16) | 0x3333; /* QEMU exits with status 1 */
	for (;;)
		__asm__ __volatile__("wfi");
}

static u64 reg_entry(const struct fdt *fdt, int node, unsigned i, u64 *size)
{
	u32 len;
	/* QEMU's /soc has two address and two size cells and an empty ranges (1:1). */
	const u8 *reg = fdt_prop(fdt, node, "reg", &len);
	if (!reg || len < (i + 1) * 16) {
		*size = 0;
		return 0;
	}
	*size = fdt_cells(reg + i * 16 + 8, 2);
	return fdt_cells(reg + i * 16, 2);
}

static int hart_by_intc(u32 phandle)
{
	for (unsigned id = 0; id < MFW_MAX_HARTS; id++)
		if (intc_phandle[id] && intc_phandle[id] == phandle)
			return (int)id;
	return -1;
}

/*
 * A CLINT or an ACLINT MSWI/MTIMER: the n-th entry of interrupts-extended that raises
 * want (the M software or the M timer interrupt) names the hart whose register is
 * number n. A CLINT lists two entries per hart, an ACLINT device one.
 */
static void scan_slots(const struct fdt *fdt, int node, u32 want, uintptr_t base, u32 stride)
{
	u32 len, i = 0;
	const u8 *p = fdt_prop(fdt, node, "interrupts-extended", &len);
	for (u32 off = 0; p && off + 8 <= len; off += 8) {
		if (fdt_cells(p + off + 4, 1) != want)
			continue;
		int id = hart_by_intc((u32)fdt_cells(p + off, 1));
		if (id < 0) {
			i++;
			continue;
		}
		if (want == INTC_M_SOFT)
			mfw_harts[id].msip = (volatile u32 *)(base + i * stride);
		else
			mfw_harts[id].mtimecmp = (volatile u64 *)(base + i * stride);
		i++;
	}
}

static void scan_harts(const struct fdt *fdt)
{
	int cpus = fdt_path(fdt, "/cpus", strlen("/cpus"));
	for (int c = cpus >= 0 ? fdt_first_child(fdt, cpus) : -1; c >= 0;
	     c = fdt_next_sibling(fdt, c)) {
		const char *type = fdt_prop_string(fdt, c, "device_type");
		const char *status = fdt_prop_string(fdt, c, "status");
		u32 id;
		if (!type || strcmp(type, "cpu") || fdt_prop_u32(fdt, c, "reg", &id) ||
		    id >= MFW_MAX_HARTS ||
		    (status && strcmp(status, "okay") && strcmp(status, "ok")))
			continue;
		for (int i = fdt_first_child(fdt, c); i >= 0; i = fdt_next_sibling(fdt, i))
			if (fdt_prop_has_string(fdt, i, "compatible", "riscv,cpu-intc"))
				fdt_prop_u32(fdt, i, "phandle", &intc_phandle[id]);
	}
}

static void scan_devices(const struct fdt *fdt)
{
	int depth = 0;
	u64 size;
	for (int n = fdt_root(fdt); (n = fdt_next_node(fdt, n, &depth)) >= 0;) {
		if (fdt_prop_has_string(fdt, n, "compatible", "riscv,clint0") ||
		    fdt_prop_has_string(fdt, n, "compatible", "sifive,clint0")) {
			uintptr_t base = reg_entry(fdt, n, 0, &size);
			scan_slots(fdt, n, INTC_M_SOFT, base, 4);
			scan_slots(fdt, n, INTC_M_TIMER, base + CLINT_MTIMECMP, 8);
		} else if (fdt_prop_has_string(fdt, n, "compatible", "riscv,aclint-mswi")) {
			scan_slots(fdt, n, INTC_M_SOFT, reg_entry(fdt, n, 0, &size), 4);
		} else if (fdt_prop_has_string(fdt, n, "compatible", "riscv,aclint-mtimer")) {
			/* QEMU gives mtime first, then the mtimecmps; alone, the mtimecmps. */
			uintptr_t cmp = reg_entry(fdt, n, 1, &size);
			scan_slots(fdt, n, INTC_M_TIMER, size ? cmp : reg_entry(fdt, n, 0, &size),
				   8);
		} else if (fdt_prop_has_string(fdt, n, "compatible", "sifive,test0")) {
			mfw_test_dev = (volatile u32 *)reg_entry(fdt, n, 0, &size);
		}
	}
}

/* The UART /chosen stdout-path names (QEMU's: "/soc/serial@10000000"), a 16550. */
static void scan_console(const struct fdt *fdt)
{
	int chosen = fdt_path(fdt, "/chosen", strlen("/chosen"));
	const char *path = chosen >= 0 ? fdt_prop_string(fdt, chosen, "stdout-path") : NULL;
	if (!path)
		return;
	size_t len = 0;
	while (path[len] && path[len] != ':')
		len++;
	int uart = fdt_path(fdt, path, len);
	u64 size;
	u32 shift = 0;
	if (uart < 0 || !fdt_prop_has_string(fdt, uart, "compatible", "ns16550a"))
		return;
	fdt_prop_u32(fdt, uart, "reg-shift", &shift);
	mfw_uart_shift = shift;
	mfw_uart = reg_entry(fdt, uart, 0, &size);
}

/* The end of the RAM range holding addr: how far the tree may grow. */
static uintptr_t ram_end_of(const struct fdt *fdt, uintptr_t addr)
{
	int depth = 0;
	for (int n = fdt_root(fdt); (n = fdt_next_node(fdt, n, &depth)) >= 0;) {
		const char *type = fdt_prop_string(fdt, n, "device_type");
		u64 size, base = reg_entry(fdt, n, 0, &size);
		if (depth == 1 && type && !strcmp(type, "memory") && addr >= base &&
		    addr - base < size)
			return base + size;
	}
	return 0;
}

void mfw_boot_main(unsigned long hartid, void *dtb)
{
	struct fdt fdt;
	u32 size = dtb ? fdt_header_size(dtb) : 0;
	if (!size || fdt_open(&fdt, dtb, size))
		mfw_halt("no valid device tree in a1");
	scan_console(&fdt);
	scan_harts(&fdt);
	scan_devices(&fdt);

	unsigned n = 0;
	for (unsigned id = 0; id < MFW_MAX_HARTS; id++) {
		struct mfw_hart *h = &mfw_harts[id];
		/* A hart without a doorbell or a timer cannot be run: it stays parked. */
		if (!intc_phandle[id] || !h->msip || !h->mtimecmp)
			continue;
		h->present = true;
		/*
		 * No deadline until S-mode asks for one, as OpenSBI does. QEMU resets mtime
		 * and every mtimecmp to 0, so MTIP is pending from the start: masked in
		 * mie, but to QEMU an interrupt pending all the same.
		 */
		*h->mtimecmp = ~0ULL;
		h->stack_top = (uintptr_t)mfw_stacks[id + 1];
		h->hsm_state = HSM_STOPPED;
		n++;
	}
	if (!mfw_harts[hartid].present)
		mfw_halt("the boot hart has no MSWI or mtimecmp in the device tree");
	uintptr_t fw_base = (uintptr_t)_start;
	if ((uintptr_t)_end > fw_base + MFW_REGION_SIZE)
		mfw_halt("the firmware outgrew its region");
	if (mfw_fdt_reserve(dtb, ram_end_of(&fdt, (uintptr_t)dtb), fw_base, MFW_REGION_SIZE))
		mfw_halt("cannot add the firmware's /reserved-memory node to the device tree");

	mfw_puts("grace-fw: M-mode firmware, ");
	put_dec(n);
	mfw_puts(" harts, boot hart ");
	put_dec(hartid);
	mfw_puts(", reserved ");
	mfw_put_hex(fw_base);
	mfw_puts("-");
	mfw_put_hex(fw_base + MFW_REGION_SIZE);
	mfw_puts(" (no-map)\n");
}

/* The secondaries sleep in entry.S until their doorbell rings; mfw_ready is set by now. */
void mfw_release_secondaries(void)
{
	for (unsigned id = 0; id < MFW_MAX_HARTS; id++)
		if (mfw_harts[id].present)
			*mfw_harts[id].msip = 1;
}

void mfw_boot_hart_started(unsigned long hartid)
{
	struct mfw_hart *h = &mfw_harts[hartid];
	/* Its own doorbell rang with the others': nothing is asked of it yet. */
	*h->msip = 0;
	WRITE_ONCE(h->hsm_state, HSM_STARTED);
	__asm__ __volatile__("csrw mie, %0" : : "r"(MIP_MSIP));
}

void __attribute__((noreturn)) mfw_secondary_main(unsigned long hartid)
{
	struct mfw_hart *h = &mfw_harts[hartid];
	mfw_stopped_wait(h, hartid);
	__builtin_unreachable();
}

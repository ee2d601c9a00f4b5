/*
 * What the firmware told us about the machine, in one arch-neutral structure.
 * The arch fills it from the device tree (riscv64) or multiboot2 + ACPI (x86_64)
 * before anything else runs; nothing after boot reads the DT or ACPI again.
 * All addresses are physical.
 */
#ifndef GRACE_BOOT_INFO_H
#define GRACE_BOOT_INFO_H

#include <grace/types.h>

#define MAX_CPUS 512
#define MAX_MEM_RANGES 32
#define MAX_RESERVED 32
#define MAX_NODES 8
#define CMDLINE_MAX 256
#define MAX_VIRTIO_MMIO 16 /* QEMU's virt machine has 8 virtio-mmio slots */

struct mem_range {
	phys_addr_t base;
	u64 size;
	int node; /* NUMA node, 0 when the firmware gives none */
};

struct cpu_desc {
	u32 hwid; /* hart id (riscv64) or local APIC id (x86_64) */
	int node;
};

enum console_kind { CONSOLE_NONE, CONSOLE_NS16550_MMIO, CONSOLE_NS16550_PIO, CONSOLE_SIFIVE_UART };

struct console_desc {
	enum console_kind kind;
	phys_addr_t base; /* MMIO address or I/O port */
	u32 reg_shift;	  /* register i is at base + (i << reg_shift) */
	u32 reg_io_width; /* 1 or 4 bytes per access */
	u32 irq;	  /* interrupt line at the interrupt controller, 0 if none */
	u32 clock_hz;	  /* the UART's input clock, 0 if not described */
	u32 baud;	  /* with clock_hz: the rate to program; 0: leave the firmware's */
};

/* A memory-mapped device and its interrupt line (0: none usable). */
struct mmio_device_desc {
	phys_addr_t base;
	u64 size;
	u32 irq; /* on the primary interrupt controller (the PLIC irq numbers name) */
};

struct boot_info {
	struct mem_range mem[MAX_MEM_RANGES]; /* usable RAM as the firmware describes it */
	unsigned nr_mem;
	struct mem_range
	    reserved[MAX_RESERVED]; /* inside RAM but not ours: firmware, DTB, modules */
	unsigned nr_reserved;

	struct cpu_desc cpus[MAX_CPUS]; /* logical CPU i, dense 0..nr_cpus-1 */
	unsigned nr_cpus;
	unsigned boot_cpu;	/* logical id of the CPU that booted */
	unsigned nr_cpus_found; /* usable CPUs described, before the MAX_CPUS cut */

	unsigned nr_nodes;			/* 1 when the firmware describes no NUMA */
	u8 node_distance[MAX_NODES][MAX_NODES]; /* DT distance-map or ACPI SLIT; 0: none */

	char cmdline[CMDLINE_MAX];
	struct console_desc console;
	u64 timer_hz; /* riscv64 timebase; x86_64: calibrated TSC rate */

	/* "virtio,mmio" nodes of the DT, empty slots included (the driver reads the ids). */
	struct mmio_device_desc virtio_mmio[MAX_VIRTIO_MMIO];
	unsigned nr_virtio_mmio;

	phys_addr_t kernel_start, kernel_end; /* the loaded image, physical */
	/* The initramfs the boot loader loaded, [start, end) physical, reserved; end 0: none. */
	phys_addr_t initrd_start, initrd_end;

	/* The raw firmware blob we booted with, kept only for the parser selftests. */
	const void *fw_blob; /* FDT (riscv64) or multiboot2 info (x86_64), virtual */
	u32 fw_blob_size;
};

extern struct boot_info boot_info;

/* Add a reserved physical range; returns -ENOSPC when the table is full. */
int boot_reserve(phys_addr_t base, u64 size);

#endif

/*
 * Flattened device tree (DTB) reading, in two layers.
 *
 * fdt_open() checks a blob completely before anything else looks at it: the header
 * against the buffer's size, the memory reservation block, and one walk over the
 * whole structure block (every token, name, property length and string offset).
 * The accessors below still bound every read by the blob's size, so a blob that
 * fdt_open() rejected, or a bug here, gives an error and never a stray read.
 *
 * fdt_scan_machine() reads what Grace needs from a RISC-V style tree (memory,
 * reserved memory, harts, console UART, PLICs, ACLINT SSWI, the test/power-off
 * device, virtio-mmio slots, timebase, bootargs, the root's model and compatible) into one struct
 * fdt_machine. The code is generic C that works on any buffer, so the selftests run it on both
 * arches.
 */
#ifndef GRACE_FDT_H
#define GRACE_FDT_H

#include <grace/boot_info.h>
#include <grace/types.h>

#define FDT_MAGIC 0xd00dfeedu
#define FDT_MAX_DEPTH 16 /* real trees nest 4-6 deep; deeper means corruption */

struct fdt {
	const u8 *blob;
	u32 size;		       /* header totalsize, checked against the buffer */
	u32 struct_off, struct_size;   /* structure block: nodes and properties */
	u32 strings_off, strings_size; /* property names */
	u32 rsvmap_off;		       /* memory reservation block */
	const char *error;	       /* why fdt_open() refused the blob, for the message */
};

/* Validate blob[0, bufsize) and prepare fdt. 0, or -EINVAL with fdt->error set. */
int fdt_open(struct fdt *fdt, const void *blob, size_t bufsize);
/* totalsize from a header whose magic is right, else 0; to know how much to map first. */
u32 fdt_header_size(const void *header);

/*
 * Nodes are named by the offset of their FDT_BEGIN_NODE token in the structure
 * block; functions returning a node give -ENOENT when there is none.
 */
int fdt_root(const struct fdt *fdt);
int fdt_first_child(const struct fdt *fdt, int node);
int fdt_next_sibling(const struct fdt *fdt, int node);
/* Document order; *depth is adjusted by how far the walk went down (+1) or up. */
int fdt_next_node(const struct fdt *fdt, int node, int *depth);
const char *fdt_node_name(const struct fdt *fdt, int node);
/* Child of parent named name: exactly, or up to its '@' when name has no unit address. */
int fdt_subnode(const struct fdt *fdt, int parent, const char *name, size_t len);
/* Node from an absolute path ("/soc/uart@10000000"); len bytes of path are used. */
int fdt_path(const struct fdt *fdt, const char *path, size_t len);
int fdt_node_by_phandle(const struct fdt *fdt, u32 phandle);

/* Property value and its length, or NULL when absent. */
const void *fdt_prop(const struct fdt *fdt, int node, const char *name, u32 *len);
/* A property holding one NUL-terminated string, or NULL. */
const char *fdt_prop_string(const struct fdt *fdt, int node, const char *name);
/* One or two cells read as a number: 0, -ENOENT, or -EINVAL for another length. */
int fdt_prop_u32(const struct fdt *fdt, int node, const char *name, u32 *out);
int fdt_prop_u64(const struct fdt *fdt, int node, const char *name, u64 *out);
/* Does the string-list property name (e.g. "compatible") contain str? */
bool fdt_prop_has_string(const struct fdt *fdt, int node, const char *name, const char *str);
/* Big-endian cells at p as one number (ncells 1 or 2). */
u64 fdt_cells(const void *p, unsigned ncells);

/* Entry i of the memory reservation block: 0, or -ENOENT past the last one. */
int fdt_rsvmap_entry(const struct fdt *fdt, unsigned i, u64 *base, u64 *size);

/* ---- What Grace takes from a RISC-V device tree ---- */

#define FDT_MAX_PLICS MAX_NODES /* QEMU gives one PLIC per NUMA socket */
#define FDT_MAX_SSWIS MAX_NODES /* and one ACLINT SSWI per socket */
#define FDT_ROOT_NAME_MAX 64 /* room for the root's model and compatible: real ones are shorter */

struct fdt_hart {
	u32 hartid;
	int node;	      /* numa-node-id, 0 when absent */
	u32 intc_phandle;     /* its riscv,cpu-intc, which PLIC contexts name */
	bool sstc;	      /* riscv,isa lists Sstc (the stimecmp CSR) */
	int plic, plic_ctx;   /* PLIC index and the hart's S-mode context; -1 if none */
	int sswi, sswi_index; /* ACLINT SSWI index and the hart's slot there; -1 if none */
};

struct fdt_plic {
	phys_addr_t base;
	u64 size;
	u32 ndev; /* riscv,ndev: sources are 1..ndev */
	u32 phandle;
};

struct fdt_mmio {
	phys_addr_t base;
	u64 size; /* 0: absent */
};

struct fdt_machine {
	struct mem_range mem[MAX_MEM_RANGES];
	unsigned nr_mem;
	struct mem_range reserved[MAX_RESERVED]; /* memreserve block and /reserved-memory */
	unsigned nr_reserved;
	/* /reserved-memory regions marked no-map: taken out of mem, never mapped. */
	struct mem_range nomap[MAX_RESERVED];
	unsigned nr_nomap;
	u64 nomap_ram; /* the bytes of RAM they took out */

	struct fdt_hart harts[MAX_CPUS]; /* usable harts in tree order (boot hart kept) */
	unsigned nr_harts;
	unsigned nr_harts_found; /* usable harts described, before the MAX_CPUS cut */
	unsigned boot_index;	 /* harts[boot_index].hartid == the boot hart */
	unsigned nr_nodes;
	u8 distance[MAX_NODES][MAX_NODES]; /* /distance-map; 0 where it says nothing */
	bool sstc;			   /* every usable hart has Sstc */
	u64 timebase_hz;

	struct console_desc console; /* kind CONSOLE_NONE when no UART we drive was found */
	int console_plic;	     /* PLIC that console.irq belongs to, or -1 */

	struct fdt_plic plics[FDT_MAX_PLICS];
	unsigned nr_plics;
	struct fdt_mmio sswis[FDT_MAX_SSWIS];
	unsigned nr_sswis;
	struct fdt_mmio test_dev; /* sifive,test: power-off with an exit status */
	/* virtio,mmio nodes; irq 0 where the line is not on the primary PLIC (plic.c). */
	struct mmio_device_desc virtio_mmio[MAX_VIRTIO_MMIO];
	unsigned nr_virtio_mmio;

	char bootargs[CMDLINE_MAX];
	/* /chosen linux,initrd-start and linux,initrd-end (1 or 2 cells each); end 0: none. */
	u64 initrd_start, initrd_end;
	/* The root's model and compatible list (NUL-separated strings, compatible_len bytes). */
	char model[FDT_ROOT_NAME_MAX];
	char compatible[FDT_ROOT_NAME_MAX];
	u32 compatible_len;
};

/*
 * Fill m from fdt (already opened). boot_hartid is the hart that booted: it is
 * always kept, even past MAX_CPUS. 0 or a negative errno for a tree Grace cannot
 * boot from (no memory, boot hart missing, no timebase); each problem is printed.
 */
int fdt_scan_machine(const struct fdt *fdt, u32 boot_hartid, struct fdt_machine *m);

#endif

/*
 * fdt_scan_machine(): what Grace needs from a RISC-V device tree, in one walk.
 *
 * /chosen is read first (bootargs, and the node stdout-path names, through
 * /aliases when it is an alias), and the root's model and compatible, which name
 * the machine (the arch tells a virtual one by them). Then one walk over every node, keeping the
 * path of ancestors so that a device's reg can be translated through each bus's `ranges` to a CPU
 * physical address. Interrupt wiring (PLIC and SSWI contexts to harts) is resolved after the walk,
 * when every hart's interrupt controller phandle is known. Problems in the tree are printed and the
 * part skipped; only a tree without usable memory, boot hart or timebase is an error.
 */
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/printk.h>
#include <grace/string.h>

/* Cell counts the spec gives a node that does not say. */
#define FDT_DEFAULT_ADDR_CELLS 2
#define FDT_DEFAULT_SIZE_CELLS 1
/* Hart-local interrupt numbers (the riscv,cpu-intc cells): scause codes. */
#define INTC_S_SOFTWARE 1
#define INTC_S_EXTERNAL 9
#define NO_PHANDLE 0

struct scan {
	const struct fdt *fdt;
	struct fdt_machine *m;
	u32 boot_hartid;
	bool boot_seen;
	int stdout_node;	       /* node named by /chosen stdout-path, or -1 */
	u32 stdout_baud;	       /* the rate its options ask for ("115200n8"), or 0 */
	u32 console_irq_parent;	       /* phandle of the console's interrupt controller */
	int path[FDT_MAX_DEPTH + 1];   /* path[d]: the current node's ancestor at depth d */
	int plic_nodes[FDT_MAX_PLICS]; /* PLIC and SSWI nodes, resolved after the walk */
	int sswi_nodes[FDT_MAX_SSWIS];
	u32 virtio_irq_parent[MAX_VIRTIO_MMIO]; /* phandle of each virtio-mmio line's controller */
};

static u32 node_cells(const struct fdt *fdt, int node, const char *name, u32 dflt)
{
	u32 v;
	return fdt_prop_u32(fdt, node, name, &v) == 0 ? v : dflt;
}

/* Cells of a child of bus: only 1 and 2 (and 0 for sizes) are numbers we can hold. */
static int bus_cells(const struct fdt *fdt, int bus, u32 *ac, u32 *sc)
{
	*ac = node_cells(fdt, bus, "#address-cells", FDT_DEFAULT_ADDR_CELLS);
	*sc = node_cells(fdt, bus, "#size-cells", FDT_DEFAULT_SIZE_CELLS);
	return (*ac == 1 || *ac == 2) && *sc <= 2 ? 0 : -EINVAL;
}

static const char *node_name(const struct scan *s, int node)
{
	const char *n = fdt_node_name(s->fdt, node);
	return n ? n : "?";
}

/*
 * Translate a bus address seen by the children of path[level] up to the CPU's
 * address space, through every ancestor's `ranges`. A bus without `ranges`, or
 * with an empty one, maps 1:1 (what every RISC-V board's /soc does).
 */
static int scan_translate(const struct scan *s, int level, u64 *addr)
{
	for (; level >= 1; level--) {
		int bus = s->path[level], up = s->path[level - 1];
		u32 len, ca, cs, pa, ps;
		const u8 *r = fdt_prop(s->fdt, bus, "ranges", &len);
		if (!r || len == 0)
			continue;
		if (bus_cells(s->fdt, bus, &ca, &cs) || bus_cells(s->fdt, up, &pa, &ps))
			return -EINVAL;
		u32 entry = (ca + pa + cs) * 4;
		bool found = false;
		for (u32 off = 0; off + entry <= len && !found; off += entry) {
			u64 child = fdt_cells(r + off, ca),
			    parent = fdt_cells(r + off + ca * 4, pa);
			u64 size = cs ? fdt_cells(r + off + (ca + pa) * 4, cs) : 0;
			if (*addr >= child && *addr - child < size) {
				*addr = *addr - child + parent;
				found = true;
			}
		}
		if (!found)
			return -ENOENT;
	}
	return 0;
}

/* Entry i of the reg of the node at depth (its parent is path[depth - 1]). */
static int scan_reg(const struct scan *s, int depth, int node, unsigned i, u64 *base, u64 *size)
{
	u32 ac, sc, len;
	if (depth < 1 || bus_cells(s->fdt, s->path[depth - 1], &ac, &sc))
		return -EINVAL;
	const u8 *reg = fdt_prop(s->fdt, node, "reg", &len);
	u32 entry = (ac + sc) * 4;
	if (!reg)
		return -ENOENT;
	if ((u64)(i + 1) * entry > len)
		return -ERANGE;
	reg += i * entry;
	*base = fdt_cells(reg, ac);
	*size = sc ? fdt_cells(reg + ac * 4, sc) : 0;
	if (*size && *base + *size < *base)
		return -EOVERFLOW;
	return scan_translate(s, depth - 1, base);
}

static bool node_okay(const struct fdt *fdt, int node)
{
	const char *st = fdt_prop_string(fdt, node, "status");
	return !st || !strcmp(st, "okay") || !strcmp(st, "ok");
}

static int node_numa(const struct scan *s, int node)
{
	u32 id;
	if (fdt_prop_u32(s->fdt, node, "numa-node-id", &id))
		return 0;
	if (id >= MAX_NODES) {
		pr_warn("fdt: %s: numa-node-id %u beyond %u nodes, using node 0\n",
			node_name(s, node), id, MAX_NODES);
		return 0;
	}
	if (id + 1 > s->m->nr_nodes)
		s->m->nr_nodes = id + 1;
	return (int)id;
}

static u32 node_phandle(const struct fdt *fdt, int node)
{
	u32 ph;
	if (fdt_prop_u32(fdt, node, "phandle", &ph) &&
	    fdt_prop_u32(fdt, node, "linux,phandle", &ph))
		return NO_PHANDLE;
	return ph;
}

static void range_add(struct mem_range *table, unsigned *n, unsigned max, u64 base, u64 size,
		      int node, const char *what)
{
	if (size == 0)
		return;
	if (*n == max) {
		pr_warn("fdt: more than %u %s ranges, ignoring [%llx, +%llx)\n", max, what,
			(unsigned long long)base, (unsigned long long)size);
		return;
	}
	table[(*n)++] = (struct mem_range){base, size, node};
}

/*
 * Take [base, base + size) out of the RAM ranges, which stay in tree order: a range
 * it cuts in two becomes two. A cut that would need a range more than the table
 * holds keeps the lower piece only (and says so).
 */
static void mem_carve(struct fdt_machine *m, u64 base, u64 size)
{
	u64 end = base + size;
	unsigned i = 0;
	while (i < m->nr_mem) {
		struct mem_range *r = &m->mem[i];
		u64 r_end = r->base + r->size;
		if (end <= r->base || base >= r_end) {
			i++;
			continue;
		}
		m->nomap_ram += MIN(end, r_end) - MAX(base, r->base);
		struct mem_range above = {end, r_end > end ? r_end - end : 0, r->node};
		r->size = base > r->base ? base - r->base : 0;
		if (above.size && !r->size) {
			*r = above; /* cut from the bottom */
			i++;
		} else if (above.size && m->nr_mem == MAX_MEM_RANGES) {
			pr_warn("fdt: no room for RAM above no-map [%llx, %llx); not using it\n",
				(unsigned long long)base, (unsigned long long)end);
			i++;
		} else if (above.size) { /* cut in two: the upper piece goes after it */
			memmove(&m->mem[i + 2], &m->mem[i + 1],
				(m->nr_mem - i - 1) * sizeof(m->mem[0]));
			m->mem[i + 1] = above;
			m->nr_mem++;
			i += 2;
		} else if (!r->size) { /* all of it: the next range takes its place */
			memmove(r, r + 1, (m->nr_mem - i - 1) * sizeof(m->mem[0]));
			m->nr_mem--;
		} else {
			i++; /* cut from the top */
		}
	}
}

/* Every reg entry of node, added to a range table. */
static void scan_ranges_of(struct scan *s, int depth, int node, struct mem_range *table,
			   unsigned *n, unsigned max, int numa, const char *what)
{
	u64 base, size;
	int err;
	for (unsigned i = 0; (err = scan_reg(s, depth, node, i, &base, &size)) == 0; i++)
		range_add(table, n, max, base, size, numa, what);
	if (err != -ERANGE && err != -ENOENT)
		pr_warn("fdt: %s: bad reg (%s)\n", node_name(s, node), errno_name(err));
}

/* Does the riscv,isa string (rv64imac_zicsr_sstc...) or riscv,isa-extensions list Sstc? */
static bool hart_has_sstc(const struct fdt *fdt, int node)
{
	if (fdt_prop_has_string(fdt, node, "riscv,isa-extensions", "sstc"))
		return true;
	const char *isa = fdt_prop_string(fdt, node, "riscv,isa");
	if (!isa)
		return false;
	/* Multi-letter extensions follow the single letters, each after an underscore. */
	for (const char *p = strchr(isa, '_'); p; p = strchr(p + 1, '_')) {
		const char *e = p + 1;
		size_t n = 0;
		while (e[n] && e[n] != '_')
			n++;
		if (n == 4 && (e[0] | 0x20) == 's' && (e[1] | 0x20) == 's' &&
		    (e[2] | 0x20) == 't' && (e[3] | 0x20) == 'c')
			return true;
	}
	return false;
}

static void scan_hart(struct scan *s, int depth, int node)
{
	struct fdt_machine *m = s->m;
	u32 ac, sc, len;
	const u8 *reg = fdt_prop(s->fdt, node, "reg", &len);

	if (bus_cells(s->fdt, s->path[depth - 1], &ac, &sc) || !reg || len < ac * 4) {
		pr_warn("fdt: %s: no usable hart id (reg), skipped\n", node_name(s, node));
		return;
	}
	u64 id = fdt_cells(reg, ac);
	if (id > 0xffffffffu) {
		pr_warn("fdt: %s: hart id %llx too large, skipped\n", node_name(s, node),
			(unsigned long long)id);
		return;
	}
	bool is_boot = id == s->boot_hartid;
	const char *mmu = fdt_prop_string(s->fdt, node, "mmu-type");
	/* A hart without an MMU (an M-mode-only monitor core) or disabled cannot run us. */
	bool usable = node_okay(s->fdt, node) && mmu && strcmp(mmu, "riscv,none");
	if (!usable && !is_boot)
		return;
	if (!usable)
		pr_warn("fdt: boot hart %u is described as unusable; using it anyway\n", (u32)id);
	for (unsigned i = 0; i < m->nr_harts; i++) {
		if (m->harts[i].hartid == id) {
			pr_warn("fdt: hart id %u described twice, second one skipped\n", (u32)id);
			return;
		}
	}
	m->nr_harts_found++;

	unsigned slot = m->nr_harts;
	if (slot == MAX_CPUS) {
		/* Full: only the boot hart gets in, in place of the last one kept. */
		if (!is_boot)
			return;
		slot = MAX_CPUS - 1;
	} else {
		m->nr_harts++;
	}
	struct fdt_hart *h = &m->harts[slot];
	*h = (struct fdt_hart){
	    .hartid = (u32)id, .plic = -1, .plic_ctx = -1, .sswi = -1, .sswi_index = -1};
	h->node = node_numa(s, node);
	h->sstc = hart_has_sstc(s->fdt, node);
	for (int c = fdt_first_child(s->fdt, node); c >= 0; c = fdt_next_sibling(s->fdt, c))
		if (fdt_prop_has_string(s->fdt, c, "compatible", "riscv,cpu-intc"))
			h->intc_phandle = node_phandle(s->fdt, c);
	if (is_boot) {
		s->boot_seen = true;
		m->boot_index = slot;
	}
	/* Old trees put the timebase in each cpu node instead of /cpus. */
	if (!m->timebase_hz)
		fdt_prop_u64(s->fdt, node, "timebase-frequency", &m->timebase_hz);
}

/* The interrupt parent of the node at depth: its own interrupt-parent or an ancestor's. */
static u32 scan_interrupt_parent(const struct scan *s, int depth)
{
	for (int d = depth; d >= 0; d--) {
		u32 ph;
		if (fdt_prop_u32(s->fdt, s->path[d], "interrupt-parent", &ph) == 0)
			return ph;
	}
	return NO_PHANDLE;
}

/*
 * A UART: the console if stdout-path names it, else the first one in the tree.
 * 16550s come with reg-shift and reg-io-width on boards (StarFive JH7110, SiFive
 * FU740: 2 and 4); SiFive's own UART has 32-bit registers only. The input clock
 * (clock-frequency) and a rate the tree names (stdout-path's options, else
 * current-speed) let the driver program the divisor itself; without a named rate
 * the firmware's stays.
 */
static void scan_uart(struct scan *s, int depth, int node, enum console_kind kind)
{
	struct console_desc *c = &s->m->console;
	if (c->kind != CONSOLE_NONE && node != s->stdout_node)
		return;

	u64 base, size;
	u32 shift = 0, width = kind == CONSOLE_SIFIVE_UART ? 4 : 1, len;
	int err = scan_reg(s, depth, node, 0, &base, &size);
	if (err) {
		pr_warn("fdt: %s: bad reg (%s), UART skipped\n", node_name(s, node),
			errno_name(err));
		return;
	}
	if (kind == CONSOLE_NS16550_MMIO) {
		fdt_prop_u32(s->fdt, node, "reg-shift", &shift);
		fdt_prop_u32(s->fdt, node, "reg-io-width", &width);
	}
	/* Registers are bytes: 8 of them, each (1 << shift) apart, read 1 or 4 bytes wide. */
	if (shift > 4 || (width != 1 && width != 4)) {
		pr_warn("fdt: %s: reg-shift %u / reg-io-width %u unsupported, UART skipped\n",
			node_name(s, node), shift, width);
		return;
	}
	*c = (struct console_desc){
	    .kind = kind, .base = base, .reg_shift = shift, .reg_io_width = width};
	if (fdt_prop_u32(s->fdt, node, "clock-frequency", &c->clock_hz) == 0 && c->clock_hz) {
		if (node == s->stdout_node && s->stdout_baud)
			c->baud = s->stdout_baud;
		else
			fdt_prop_u32(s->fdt, node, "current-speed", &c->baud);
	}
	s->console_irq_parent = NO_PHANDLE;

	const u8 *irq = fdt_prop(s->fdt, node, "interrupts-extended", &len);
	if (irq && len >= 8) {
		s->console_irq_parent = (u32)fdt_cells(irq, 1);
		c->irq = (u32)fdt_cells(irq + 4, 1);
	} else if ((irq = fdt_prop(s->fdt, node, "interrupts", &len)) && len >= 4) {
		s->console_irq_parent = scan_interrupt_parent(s, depth);
		c->irq = (u32)fdt_cells(irq, 1);
	}
}

static void scan_plic(struct scan *s, int depth, int node)
{
	struct fdt_machine *m = s->m;
	struct fdt_plic p = {0};
	int err = scan_reg(s, depth, node, 0, &p.base, &p.size);

	if (err || fdt_prop_u32(s->fdt, node, "riscv,ndev", &p.ndev) || p.ndev == 0) {
		pr_warn("fdt: %s: no usable reg or riscv,ndev, PLIC skipped\n", node_name(s, node));
		return;
	}
	if (m->nr_plics == FDT_MAX_PLICS) {
		pr_warn("fdt: more than %u PLICs, %s skipped\n", FDT_MAX_PLICS, node_name(s, node));
		return;
	}
	p.phandle = node_phandle(s->fdt, node);
	s->plic_nodes[m->nr_plics] = node;
	m->plics[m->nr_plics++] = p;
}

static void scan_sswi(struct scan *s, int depth, int node)
{
	struct fdt_machine *m = s->m;
	struct fdt_mmio w;
	if (scan_reg(s, depth, node, 0, &w.base, &w.size) || m->nr_sswis == FDT_MAX_SSWIS) {
		pr_warn("fdt: %s: no usable reg or too many, SSWI skipped\n", node_name(s, node));
		return;
	}
	s->sswi_nodes[m->nr_sswis] = node;
	m->sswis[m->nr_sswis++] = w;
}

static void scan_test_dev(struct scan *s, int depth, int node)
{
	struct fdt_mmio t;
	if (scan_reg(s, depth, node, 0, &t.base, &t.size) == 0)
		s->m->test_dev = t;
	else
		pr_warn("fdt: %s: no usable reg, power-off device skipped\n", node_name(s, node));
}

/* A virtio-mmio transport (QEMU's virt has 8 slots; an empty one reads device id 0). */
static void scan_virtio_mmio(struct scan *s, int depth, int node)
{
	struct fdt_machine *m = s->m;
	struct mmio_device_desc d = {0};
	u32 len;
	if (scan_reg(s, depth, node, 0, &d.base, &d.size) || d.size == 0) {
		pr_warn("fdt: %s: no usable reg, virtio-mmio skipped\n", node_name(s, node));
		return;
	}
	if (m->nr_virtio_mmio == MAX_VIRTIO_MMIO) {
		pr_warn("fdt: more than %u virtio-mmio nodes, %s skipped\n", MAX_VIRTIO_MMIO,
			node_name(s, node));
		return;
	}
	u32 parent = NO_PHANDLE;
	const u8 *irq = fdt_prop(s->fdt, node, "interrupts-extended", &len);
	if (irq && len >= 8) {
		parent = (u32)fdt_cells(irq, 1);
		d.irq = (u32)fdt_cells(irq + 4, 1);
	} else if ((irq = fdt_prop(s->fdt, node, "interrupts", &len)) && len >= 4) {
		parent = scan_interrupt_parent(s, depth);
		d.irq = (u32)fdt_cells(irq, 1);
	}
	s->virtio_irq_parent[m->nr_virtio_mmio] = parent;
	m->virtio_mmio[m->nr_virtio_mmio++] = d;
}

/*
 * /distance-map (binding numa-distance-map-v1): distance-matrix is (from, to,
 * distance) triplets of cells. A pair given one way only holds both ways. Whether
 * the table is complete and sane is numa_init()'s call, once nr_nodes is known.
 */
static void scan_distance_map(struct scan *s, int node)
{
	u32 len;
	const u8 *p = fdt_prop(s->fdt, node, "distance-matrix", &len);
	if (!p || len % 12) {
		pr_warn("fdt: %s: no usable distance-matrix, default distances\n",
			node_name(s, node));
		return;
	}
	u8(*d)[MAX_NODES] = s->m->distance;
	for (u32 off = 0; off < len; off += 12) {
		u64 from = fdt_cells(p + off, 1), to = fdt_cells(p + off + 4, 1);
		u64 dist = fdt_cells(p + off + 8, 1);
		if (from >= MAX_NODES || to >= MAX_NODES || dist == 0 || dist > 254) {
			pr_warn("fdt: distance-map entry (%llu, %llu, %llu) skipped\n", from, to,
				dist);
			continue;
		}
		d[from][to] = (u8)dist;
		if (!d[to][from])
			d[to][from] = (u8)dist;
	}
}

static void scan_node(struct scan *s, int depth, int node)
{
	const struct fdt *fdt = s->fdt;
	struct fdt_machine *m = s->m;
	const char *name = node_name(s, node);
	const char *parent = depth >= 1 ? node_name(s, s->path[depth - 1]) : "";

	if (depth == 1 && !strcmp(name, "cpus")) {
		fdt_prop_u64(fdt, node, "timebase-frequency", &m->timebase_hz);
		return;
	}
	const char *type = fdt_prop_string(fdt, node, "device_type");
	if (depth == 2 && !strcmp(parent, "cpus")) {
		if (type && !strcmp(type, "cpu"))
			scan_hart(s, depth, node);
		return;
	}
	if (!node_okay(fdt, node))
		return;
	if (depth == 1 && type && !strcmp(type, "memory")) {
		scan_ranges_of(s, depth, node, m->mem, &m->nr_mem, MAX_MEM_RANGES,
			       node_numa(s, node), "memory");
		return;
	}
	if (depth == 1 && fdt_prop_has_string(fdt, node, "compatible", "numa-distance-map-v1")) {
		scan_distance_map(s, node);
		return;
	}
	if (depth == 2 && !strcmp(parent, "reserved-memory")) {
		/* Regions with only a size are for the OS to place; we place nothing there. */
		if (fdt_prop(fdt, node, "no-map", NULL))
			scan_ranges_of(s, depth, node, m->nomap, &m->nr_nomap, MAX_RESERVED, 0,
				       "no-map");
		else
			scan_ranges_of(s, depth, node, m->reserved, &m->nr_reserved, MAX_RESERVED,
				       0, "reserved");
		return;
	}
	/* The DesignWare APB UART (StarFive JH7110 and many boards) is a 16550. */
	if (fdt_prop_has_string(fdt, node, "compatible", "ns16550a") ||
	    fdt_prop_has_string(fdt, node, "compatible", "ns16550") ||
	    fdt_prop_has_string(fdt, node, "compatible", "snps,dw-apb-uart"))
		scan_uart(s, depth, node, CONSOLE_NS16550_MMIO);
	else if (fdt_prop_has_string(fdt, node, "compatible", "sifive,uart0"))
		scan_uart(s, depth, node, CONSOLE_SIFIVE_UART);
	else if (fdt_prop_has_string(fdt, node, "compatible", "riscv,plic0") ||
		 fdt_prop_has_string(fdt, node, "compatible", "sifive,plic-1.0.0"))
		scan_plic(s, depth, node);
	else if (fdt_prop_has_string(fdt, node, "compatible", "riscv,aclint-sswi"))
		scan_sswi(s, depth, node);
	else if (fdt_prop_has_string(fdt, node, "compatible", "sifive,test0") ||
		 fdt_prop_has_string(fdt, node, "compatible", "sifive,test1"))
		scan_test_dev(s, depth, node);
	else if (fdt_prop_has_string(fdt, node, "compatible", "virtio,mmio"))
		scan_virtio_mmio(s, depth, node);
}

static struct fdt_hart *hart_by_intc(struct fdt_machine *m, u32 phandle)
{
	for (unsigned i = 0; i < m->nr_harts; i++)
		if (phandle != NO_PHANDLE && m->harts[i].intc_phandle == phandle)
			return &m->harts[i];
	return NULL;
}

/*
 * Walk interrupts-extended of a PLIC or SSWI: entry i is context/slot i, a
 * (phandle, cells...) tuple naming a hart's interrupt controller and the hart-local
 * interrupt it raises. Set the hart's (device, slot) for the entries that raise want.
 */
static void scan_contexts(struct scan *s, int node, int dev, u32 want, bool plic)
{
	u32 len;
	const u8 *p = fdt_prop(s->fdt, node, "interrupts-extended", &len);
	if (!p) {
		pr_warn("fdt: %s: no interrupts-extended, no hart can use it\n",
			node_name(s, node));
		return;
	}
	for (u32 off = 0, i = 0; off + 4 <= len; i++) {
		u32 ph = (u32)fdt_cells(p + off, 1), cells = 1;
		struct fdt_hart *h = hart_by_intc(s->m, ph);
		if (!h) {
			/* Not a hart we keep: still need its #interrupt-cells to find the next
			 * entry. */
			int target = fdt_node_by_phandle(s->fdt, ph);
			if (target < 0) {
				pr_warn("fdt: %s: interrupts-extended names unknown phandle %u\n",
					node_name(s, node), ph);
				return;
			}
			cells = node_cells(s->fdt, target, "#interrupt-cells", 1);
		}
		if (cells == 0 || cells > 4 || off + 4 + cells * 4 > len)
			return;
		u32 irq = (u32)fdt_cells(p + off + 4, 1);
		if (h && irq == want) {
			if (plic && h->plic < 0) {
				h->plic = dev;
				h->plic_ctx = (int)i;
			} else if (!plic && h->sswi < 0) {
				h->sswi = dev;
				h->sswi_index = (int)i;
			}
		}
		off += 4 + cells * 4;
	}
}

/* /chosen: bootargs, and the node stdout-path names (a path or an alias, maybe ":115200n8"). */
static void scan_chosen(struct scan *s)
{
	const struct fdt *fdt = s->fdt;
	int chosen = fdt_path(fdt, "/chosen", 7);
	if (chosen < 0)
		return;

	const char *args = fdt_prop_string(fdt, chosen, "bootargs");
	if (args && strlcpy(s->m->bootargs, args, CMDLINE_MAX) >= CMDLINE_MAX)
		pr_warn("fdt: bootargs longer than %u bytes, truncated\n", CMDLINE_MAX - 1);

	u64 start, end;
	if (!fdt_prop_u64(fdt, chosen, "linux,initrd-start", &start) &&
	    !fdt_prop_u64(fdt, chosen, "linux,initrd-end", &end)) {
		if (end > start) {
			s->m->initrd_start = start;
			s->m->initrd_end = end;
		} else {
			pr_warn("fdt: /chosen initrd [%llx, %llx) is empty, ignored\n",
				(unsigned long long)start, (unsigned long long)end);
		}
	}

	const char *out = fdt_prop_string(fdt, chosen, "stdout-path");
	if (!out)
		out = fdt_prop_string(fdt, chosen, "linux,stdout-path");
	if (!out)
		return;
	size_t len = 0;
	while (out[len] && out[len] != ':')
		len++;
	/* Options after the colon begin with the baud rate, as the kernel's console= does. */
	for (const char *o = out + len + (out[len] == ':'); *o >= '0' && *o <= '9'; o++)
		if (s->stdout_baud < 100000000) /* nine digits: no rate is longer */
			s->stdout_baud = s->stdout_baud * 10 + (u32)(*o - '0');
	if (out[0] != '/') {
		int aliases = fdt_path(fdt, "/aliases", 8);
		const char *alias = NULL;
		char name[32];
		if (aliases >= 0 && len < sizeof(name)) {
			memcpy(name, out, len);
			name[len] = '\0';
			alias = fdt_prop_string(fdt, aliases, name);
		}
		if (!alias) {
			pr_warn("fdt: stdout-path \"%s\" names no alias, using the first UART\n",
				out);
			return;
		}
		out = alias;
		len = strlen(out);
	}
	s->stdout_node = fdt_path(fdt, out, len);
	if (s->stdout_node < 0)
		pr_warn("fdt: stdout-path \"%s\" names no node, using the first UART\n", out);
}

static void scan_rsvmap(struct scan *s)
{
	u64 base, size;
	for (unsigned i = 0; fdt_rsvmap_entry(s->fdt, i, &base, &size) == 0; i++)
		range_add(s->m->reserved, &s->m->nr_reserved, MAX_RESERVED, base, size, 0,
			  "reserved");
}

/* After the walk: interrupt wiring, and whether the result can boot. */
static int scan_finish(struct scan *s)
{
	struct fdt_machine *m = s->m;

	for (unsigned i = 0; i < m->nr_plics; i++)
		scan_contexts(s, s->plic_nodes[i], (int)i, INTC_S_EXTERNAL, true);
	for (unsigned i = 0; i < m->nr_sswis; i++)
		scan_contexts(s, s->sswi_nodes[i], (int)i, INTC_S_SOFTWARE, false);

	m->sstc = m->nr_harts > 0;
	for (unsigned i = 0; i < m->nr_harts; i++)
		m->sstc &= m->harts[i].sstc;

	if (m->console.kind != CONSOLE_NONE && m->console.irq) {
		for (unsigned i = 0; i < m->nr_plics; i++)
			if (m->plics[i].phandle == s->console_irq_parent)
				m->console_plic = (int)i;
		if (m->console_plic < 0 || m->console.irq > m->plics[m->console_plic].ndev) {
			pr_warn("fdt: console interrupt %u is not on a PLIC we know; no console "
				"input\n",
				m->console.irq);
			m->console.irq = 0;
			m->console_plic = -1;
		}
	}

	/*
	 * Lines are numbered on the primary PLIC (plic.c): the console's, else the first.
	 * QEMU's multi-socket virt wires virtio-mmio to the second socket's PLIC; those
	 * devices get no line, and the virtio core polls them.
	 */
	int primary = m->console_plic >= 0 ? m->console_plic : (m->nr_plics ? 0 : -1);
	unsigned dropped = 0;
	for (unsigned i = 0; i < m->nr_virtio_mmio; i++) {
		struct mmio_device_desc *d = &m->virtio_mmio[i];
		if (d->irq &&
		    (primary < 0 || m->plics[primary].phandle != s->virtio_irq_parent[i] ||
		     d->irq > m->plics[primary].ndev)) {
			d->irq = 0;
			dropped++;
		}
	}
	if (dropped)
		pr_warn("fdt: %u of %u virtio-mmio interrupts are not on the primary PLIC\n",
			dropped, m->nr_virtio_mmio);

	for (unsigned i = 0; i < m->nr_nomap; i++)
		mem_carve(m, m->nomap[i].base, m->nomap[i].size);

	if (m->nr_mem == 0) {
		pr_err("fdt: no memory described (no /memory node with a usable reg)\n");
		return -ENOENT;
	}
	if (!s->boot_seen) {
		pr_err("fdt: the boot hart (%u) is not in /cpus\n", s->boot_hartid);
		return -ENODEV;
	}
	if (m->timebase_hz == 0) {
		pr_err("fdt: no timebase-frequency in /cpus\n");
		return -EINVAL;
	}
	return 0;
}

/* The root's model and compatible list, cut at a whole string if longer than the room. */
static void scan_root(struct scan *s, int root)
{
	struct fdt_machine *m = s->m;
	const char *model = fdt_prop_string(s->fdt, root, "model");
	if (model)
		strlcpy(m->model, model, sizeof(m->model));
	u32 len;
	const char *compat = fdt_prop(s->fdt, root, "compatible", &len);
	if (!compat || len == 0 || compat[len - 1] != '\0')
		return;
	u32 keep = 0;
	for (u32 at = 0; at < len;) {
		u32 one = (u32)strlen(compat + at) + 1;
		if (at + one > sizeof(m->compatible))
			break;
		at += one;
		keep = at;
	}
	memcpy(m->compatible, compat, keep);
	m->compatible_len = keep;
}

int fdt_scan_machine(const struct fdt *fdt, u32 boot_hartid, struct fdt_machine *m)
{
	struct scan s = {.fdt = fdt, .m = m, .boot_hartid = boot_hartid, .stdout_node = -1};

	memset(m, 0, sizeof(*m));
	m->nr_nodes = 1;
	m->console_plic = -1;

	scan_rsvmap(&s);
	scan_chosen(&s);

	int depth = 0, node = fdt_root(fdt);
	if (node < 0)
		return node;
	scan_root(&s, node);
	s.path[0] = node;
	while ((node = fdt_next_node(fdt, node, &depth)) >= 0) {
		/* fdt_open() bounded the nesting; stop rather than index past path[] anyway. */
		if (depth < 1 || depth > FDT_MAX_DEPTH)
			return -EINVAL;
		s.path[depth] = node;
		scan_node(&s, depth, node);
	}
	if (node != -ENOENT)
		return node;
	return scan_finish(&s);
}

/*
 * mfw_fdt_reserve(): tell the kernel, in the device tree it gets, that the firmware's
 * memory is not RAM to use. QEMU's own tree (what -bios none passes) says nothing of
 * a firmware: without this the kernel would hand 0x80000000.. out as free pages, and
 * its first touch would fault on the PMP entry that keeps S-mode out. OpenSBI does the
 * same with a no-map child of /reserved-memory, and so does this: one node added in
 * place, the kernel's reader (drivers/fdt/fdt_machine.c) then takes the range out of
 * RAM and never maps it.
 *
 * The edit grows the blob where it lies. QEMU puts the tree at a 2 MiB boundary below
 * the top of RAM and the room after it is RAM nobody has claimed; the caller passes
 * the end of that room. The structure block gains the node (before the END_NODE of
 * /reserved-memory, or of the root with a new /reserved-memory around it), the
 * strings block, which dtc and QEMU put last, gains the property names.
 */
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/string.h>
#include "mfw.h"

#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9
#define HDR_TOTALSIZE 4
#define HDR_OFF_STRINGS 12
#define HDR_SIZE_STRINGS 32
#define HDR_SIZE_STRUCT 36

/* The property names the node needs, appended to the strings block once. */
static const char new_strings[] = "#address-cells\0#size-cells\0ranges\0reg\0no-map";
#define STR_ADDRESS_CELLS 0
#define STR_SIZE_CELLS 15
#define STR_RANGES 27
#define STR_REG 34
#define STR_NO_MAP 38

static u32 be32_get(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void be32_put(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

/* The struct-block offset of the END_NODE that closes node (a validated tree). */
static int node_end(const struct fdt *fdt, int node)
{
	const u8 *s = fdt->blob + fdt->struct_off;
	u32 off = (u32)node, depth = 0;
	while (off + 4 <= fdt->struct_size) {
		u32 tok = be32_get(s + off);
		off += 4;
		if (tok == FDT_BEGIN_NODE) {
			off += ((u32)strlen((const char *)s + off) + 1 + 3) & ~3u;
			depth++;
		} else if (tok == FDT_PROP) {
			off += 8 + ((be32_get(s + off) + 3) & ~3u);
		} else if (tok == FDT_END_NODE) {
			if (--depth == 0)
				return (int)(off - 4);
		} else if (tok != FDT_NOP) {
			break;
		}
	}
	return -EINVAL;
}

struct emit {
	u8 *p;
	u32 n, strings_base; /* bytes written; where new_strings will sit in the block */
};

static void emit_u32(struct emit *e, u32 v)
{
	be32_put(e->p + e->n, v);
	e->n += 4;
}

static void emit_begin(struct emit *e, const char *name)
{
	u32 len = (u32)strlen(name) + 1;
	emit_u32(e, FDT_BEGIN_NODE);
	memset(e->p + e->n, 0, (len + 3) & ~3u);
	memcpy(e->p + e->n, name, len);
	e->n += (len + 3) & ~3u;
}

static void emit_prop(struct emit *e, u32 name, const u32 *cells, u32 ncells)
{
	emit_u32(e, FDT_PROP);
	emit_u32(e, ncells * 4);
	emit_u32(e, e->strings_base + name);
	for (u32 i = 0; i < ncells; i++)
		emit_u32(e, cells[i]);
}

/* The region's reg in the parent's cells (1 or 2 each). */
static u32 reg_cells(u32 *out, u32 ac, u32 sc, u64 base, u64 size)
{
	u32 n = 0;
	if (ac == 2)
		out[n++] = (u32)(base >> 32);
	out[n++] = (u32)base;
	if (sc == 2)
		out[n++] = (u32)(size >> 32);
	out[n++] = (u32)size;
	return n;
}

int mfw_fdt_reserve(void *blob, uintptr_t room_end, u64 base, u64 size)
{
	struct fdt fdt;
	u8 *b = blob;
	if (fdt_open(&fdt, blob, fdt_header_size(blob)))
		return -EINVAL;
	/* The blocks in dtc's order, strings last: what the edit below assumes. */
	if (fdt.strings_off < fdt.struct_off + fdt.struct_size ||
	    fdt.strings_off + fdt.strings_size != fdt.size)
		return -EINVAL;

	int resv = fdt_path(&fdt, "/reserved-memory", strlen("/reserved-memory"));
	u32 ac = 2, sc = 2;
	if (resv >= 0) {
		fdt_prop_u32(&fdt, resv, "#address-cells", &ac);
		fdt_prop_u32(&fdt, resv, "#size-cells", &sc);
		if (ac < 1 || ac > 2 || sc < 1 || sc > 2)
			return -EINVAL;
	}
	int end = node_end(&fdt, resv >= 0 ? resv : fdt_root(&fdt));
	if (end < 0)
		return end;

	u8 node[160];
	u32 cells[4], two = 2;
	struct emit e = {node, 0, fdt.strings_size};
	if (resv < 0) {
		emit_begin(&e, "reserved-memory");
		emit_prop(&e, STR_ADDRESS_CELLS, &two, 1);
		emit_prop(&e, STR_SIZE_CELLS, &two, 1);
		emit_prop(&e, STR_RANGES, NULL, 0);
	}
	emit_begin(&e, "grace-firmware@80000000");
	emit_prop(&e, STR_REG, cells, reg_cells(cells, ac, sc, base, size));
	emit_prop(&e, STR_NO_MAP, NULL, 0);
	emit_u32(&e, FDT_END_NODE);
	if (resv < 0)
		emit_u32(&e, FDT_END_NODE);

	u32 grow = e.n + (u32)sizeof(new_strings);
	if ((uintptr_t)blob + fdt.size + grow > room_end)
		return -ENOSPC;
	u32 at = fdt.struct_off + (u32)end;
	memmove(b + at + e.n, b + at, fdt.size - at);
	memcpy(b + at, node, e.n);
	memcpy(b + fdt.size + e.n, new_strings, sizeof(new_strings));
	be32_put(b + HDR_SIZE_STRUCT, fdt.struct_size + e.n);
	be32_put(b + HDR_OFF_STRINGS, fdt.strings_off + e.n);
	be32_put(b + HDR_SIZE_STRINGS, fdt.strings_size + (u32)sizeof(new_strings));
	be32_put(b + HDR_TOTALSIZE, fdt.size + grow);
	return 0;
}

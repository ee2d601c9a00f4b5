/*
 * The flattened device tree, read defensively (see include/grace/fdt.h).
 *
 * A DTB is a header, a memory reservation block (pairs of big-endian u64), a
 * structure block (a token stream: BEGIN_NODE name, PROP len nameoff value,
 * END_NODE, NOP, END) and a strings block holding property names. Every value
 * is big-endian and nothing in the blob is trusted: each read goes through
 * fdt_token_next(), which checks the token, its payload and its name against the
 * block sizes that fdt_open() checked against the buffer.
 */
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/string.h>

#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9

#define FDT_HEADER_SIZE 40    /* ten u32 fields in version 17 */
#define FDT_VERSION 17	      /* the version every current tool writes */
#define FDT_RSV_ENTRY_SIZE 16 /* u64 address, u64 size */
/* Larger than any real tree by far, and small enough that offsets fit an int. */
#define FDT_MAX_SIZE (64u << 20)

static u32 be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u64 be64(const u8 *p)
{
	return (u64)be32(p) << 32 | be32(p + 4);
}

u64 fdt_cells(const void *p, unsigned ncells)
{
	const u8 *b = p;
	return ncells == 2 ? be64(b) : be32(b);
}

u32 fdt_header_size(const void *header)
{
	const u8 *h = header;
	return be32(h) == FDT_MAGIC ? be32(h + 4) : 0;
}

static const u8 *fdt_struct(const struct fdt *fdt)
{
	return fdt->blob + fdt->struct_off;
}

/* Is string s (at offset off of a block of size size) NUL-terminated inside the block? */
static bool str_in_block(const u8 *block, u32 size, u32 off)
{
	if (off >= size)
		return false;
	return strnlen((const char *)block + off, size - off) < size - off;
}

/*
 * Read the token at struct-block offset off into *tok and return the offset of the
 * next token, or -EINVAL if the token or its payload does not fit (why says what).
 */
static int fdt_token_next(const struct fdt *fdt, int off, u32 *tok, const char **why)
{
	const u8 *s = fdt_struct(fdt);
	u32 size = fdt->struct_size;
	const char *dummy;

	if (!why)
		why = &dummy;
	if (off < 0 || (u32)off % 4 || (u32)off + 4 > size) {
		*why = "structure block ends without FDT_END";
		return -EINVAL;
	}
	*tok = be32(s + off);
	switch (*tok) {
	case FDT_BEGIN_NODE: {
		u32 name = (u32)off + 4;
		if (!str_in_block(s, size, name)) {
			*why = "node name runs past the structure block";
			return -EINVAL;
		}
		return (int)ALIGN_UP(name + strlen((const char *)s + name) + 1, 4u);
	}
	case FDT_PROP: {
		if ((u32)off + 12 > size) {
			*why = "property header runs past the structure block";
			return -EINVAL;
		}
		u32 len = be32(s + off + 4), nameoff = be32(s + off + 8);
		if (len > size - (u32)off - 12) {
			*why = "property value runs past the structure block";
			return -EINVAL;
		}
		if (!str_in_block(fdt->blob + fdt->strings_off, fdt->strings_size, nameoff)) {
			*why = "property name outside the strings block or unterminated";
			return -EINVAL;
		}
		return (int)ALIGN_UP((u32)off + 12 + len, 4u);
	}
	case FDT_END_NODE:
	case FDT_NOP:
	case FDT_END:
		return off + 4;
	default:
		*why = "unknown token in the structure block";
		return -EINVAL;
	}
}

/* One pass over the whole structure: tokens valid, nodes balanced, one root, bounded depth. */
static int fdt_check_struct(struct fdt *fdt)
{
	int off = 0, depth = 0;
	bool root_seen = false;

	for (;;) {
		u32 tok;
		int next = fdt_token_next(fdt, off, &tok, &fdt->error);
		if (next < 0)
			return next;
		switch (tok) {
		case FDT_BEGIN_NODE:
			if (depth == 0 && root_seen) {
				fdt->error = "more than one root node";
				return -EINVAL;
			}
			root_seen = true;
			if (++depth > FDT_MAX_DEPTH) {
				fdt->error = "nodes nested too deep";
				return -EINVAL;
			}
			break;
		case FDT_END_NODE:
			if (depth == 0) {
				fdt->error = "FDT_END_NODE without a node";
				return -EINVAL;
			}
			depth--;
			break;
		case FDT_PROP:
			if (depth == 0) {
				fdt->error = "property outside any node";
				return -EINVAL;
			}
			break;
		case FDT_END:
			if (depth != 0 || !root_seen) {
				fdt->error = "FDT_END inside a node or before the root";
				return -EINVAL;
			}
			return 0;
		}
		off = next;
	}
}

/* [off, off + size) inside [FDT_HEADER_SIZE, total)? */
static bool block_ok(u32 off, u32 size, u32 total)
{
	return off >= FDT_HEADER_SIZE && off <= total && size <= total - off;
}

static int fdt_fail(struct fdt *fdt, const char *why)
{
	fdt->error = why;
	return -EINVAL;
}

int fdt_open(struct fdt *fdt, const void *blob, size_t bufsize)
{
	const u8 *h = blob;

	memset(fdt, 0, sizeof(*fdt));
	fdt->blob = blob;
	if (!blob || bufsize < FDT_HEADER_SIZE)
		return fdt_fail(fdt, "smaller than the FDT header");
	if (be32(h) != FDT_MAGIC)
		return fdt_fail(fdt, "bad magic");

	u32 total = be32(h + 4);
	if (total < FDT_HEADER_SIZE || total > bufsize || total > FDT_MAX_SIZE)
		return fdt_fail(fdt, "totalsize larger than the blob or smaller than the header");
	if (be32(h + 20) < FDT_VERSION || be32(h + 24) > FDT_VERSION)
		return fdt_fail(fdt, "unsupported FDT version (need one compatible with 17)");

	fdt->size = total;
	fdt->struct_off = be32(h + 8);
	fdt->strings_off = be32(h + 12);
	fdt->rsvmap_off = be32(h + 16);
	fdt->strings_size = be32(h + 32);
	fdt->struct_size = be32(h + 36);

	if (!block_ok(fdt->struct_off, fdt->struct_size, total) || fdt->struct_off % 4)
		return fdt_fail(fdt, "structure block outside the blob or misaligned");
	if (!block_ok(fdt->strings_off, fdt->strings_size, total))
		return fdt_fail(fdt, "strings block outside the blob");
	if (!block_ok(fdt->rsvmap_off, 0, total) || fdt->rsvmap_off % 8)
		return fdt_fail(fdt, "memory reservation block outside the blob or misaligned");

	/* The reservation block ends with an all-zero entry, which must be inside the blob. */
	for (u32 off = fdt->rsvmap_off;; off += FDT_RSV_ENTRY_SIZE) {
		if (total - off < FDT_RSV_ENTRY_SIZE)
			return fdt_fail(fdt, "memory reservation block has no terminating entry");
		if (be64(h + off) == 0 && be64(h + off + 8) == 0)
			break;
	}
	return fdt_check_struct(fdt);
}

int fdt_rsvmap_entry(const struct fdt *fdt, unsigned i, u64 *base, u64 *size)
{
	u64 off = fdt->rsvmap_off + (u64)i * FDT_RSV_ENTRY_SIZE;
	if (off + FDT_RSV_ENTRY_SIZE > fdt->size)
		return -ENOENT;
	*base = be64(fdt->blob + off);
	*size = be64(fdt->blob + off + 8);
	return (*base || *size) ? 0 : -ENOENT;
}

/* Skip NOPs from off; return the offset of the next other token (and the token). */
static int fdt_skip_nops(const struct fdt *fdt, int off, u32 *tok)
{
	for (;;) {
		int next = fdt_token_next(fdt, off, tok, NULL);
		if (next < 0)
			return next;
		if (*tok != FDT_NOP)
			return off;
		off = next;
	}
}

/* Offset just past node's BEGIN_NODE token, or an error if node is not one. */
static int fdt_node_body(const struct fdt *fdt, int node)
{
	u32 tok;
	int next = fdt_token_next(fdt, node, &tok, NULL);
	if (next < 0)
		return next;
	return tok == FDT_BEGIN_NODE ? next : -EINVAL;
}

int fdt_root(const struct fdt *fdt)
{
	u32 tok;
	int off = fdt_skip_nops(fdt, 0, &tok);
	if (off < 0)
		return off;
	return tok == FDT_BEGIN_NODE ? off : -ENOENT;
}

const char *fdt_node_name(const struct fdt *fdt, int node)
{
	if (fdt_node_body(fdt, node) < 0)
		return NULL;
	return (const char *)fdt_struct(fdt) + node + 4;
}

int fdt_next_node(const struct fdt *fdt, int node, int *depth)
{
	int off = fdt_node_body(fdt, node);
	while (off >= 0) {
		u32 tok;
		int next = fdt_token_next(fdt, off, &tok, NULL);
		if (next < 0)
			return next;
		switch (tok) {
		case FDT_BEGIN_NODE:
			(*depth)++;
			return off;
		case FDT_END_NODE:
			(*depth)--;
			break;
		case FDT_END:
			return -ENOENT;
		}
		off = next;
	}
	return off;
}

int fdt_first_child(const struct fdt *fdt, int node)
{
	int off = fdt_node_body(fdt, node);
	while (off >= 0) {
		u32 tok;
		int next = fdt_token_next(fdt, off, &tok, NULL);
		if (next < 0)
			return next;
		if (tok == FDT_BEGIN_NODE)
			return off;
		if (tok != FDT_PROP && tok != FDT_NOP)
			return -ENOENT;
		off = next;
	}
	return off;
}

int fdt_next_sibling(const struct fdt *fdt, int node)
{
	int depth = 0, off = node;
	u32 tok;

	/* Past node's own END_NODE: count nesting until it closes. */
	do {
		int next = fdt_token_next(fdt, off, &tok, NULL);
		if (next < 0)
			return next;
		if (tok == FDT_BEGIN_NODE)
			depth++;
		else if (tok == FDT_END_NODE)
			depth--;
		else if (tok == FDT_END)
			return -ENOENT;
		off = next;
	} while (depth > 0);

	off = fdt_skip_nops(fdt, off, &tok);
	if (off < 0)
		return off;
	return tok == FDT_BEGIN_NODE ? off : -ENOENT;
}

int fdt_subnode(const struct fdt *fdt, int parent, const char *name, size_t len)
{
	bool has_unit = false;
	for (size_t i = 0; i < len; i++)
		has_unit |= name[i] == '@';
	for (int c = fdt_first_child(fdt, parent); c >= 0; c = fdt_next_sibling(fdt, c)) {
		const char *cname = fdt_node_name(fdt, c);
		if (!cname || strlen(cname) < len || memcmp(cname, name, len))
			continue;
		if (cname[len] == '\0' || (!has_unit && cname[len] == '@'))
			return c;
	}
	return -ENOENT;
}

int fdt_path(const struct fdt *fdt, const char *path, size_t len)
{
	if (len == 0 || path[0] != '/')
		return -EINVAL;
	int node = fdt_root(fdt);
	size_t i = 1;
	while (node >= 0 && i < len) {
		size_t start = i;
		while (i < len && path[i] != '/')
			i++;
		if (i > start)
			node = fdt_subnode(fdt, node, path + start, i - start);
		i++;
	}
	return node;
}

const void *fdt_prop(const struct fdt *fdt, int node, const char *name, u32 *len)
{
	const u8 *s = fdt_struct(fdt);
	const char *strings = (const char *)fdt->blob + fdt->strings_off;
	int off = fdt_node_body(fdt, node);

	while (off >= 0) {
		u32 tok;
		int next = fdt_token_next(fdt, off, &tok, NULL);
		if (next < 0 || (tok != FDT_PROP && tok != FDT_NOP))
			return NULL;
		/* fdt_token_next() checked that the name is a terminated string in the block. */
		if (tok == FDT_PROP && !strcmp(strings + be32(s + off + 8), name)) {
			if (len)
				*len = be32(s + off + 4);
			return s + off + 12;
		}
		off = next;
	}
	return NULL;
}

const char *fdt_prop_string(const struct fdt *fdt, int node, const char *name)
{
	u32 len;
	const char *p = fdt_prop(fdt, node, name, &len);
	if (!p || len == 0 || p[len - 1] != '\0')
		return NULL;
	return p;
}

int fdt_prop_u32(const struct fdt *fdt, int node, const char *name, u32 *out)
{
	u32 len;
	const void *p = fdt_prop(fdt, node, name, &len);
	if (!p)
		return -ENOENT;
	if (len != 4)
		return -EINVAL;
	*out = (u32)fdt_cells(p, 1);
	return 0;
}

int fdt_prop_u64(const struct fdt *fdt, int node, const char *name, u64 *out)
{
	u32 len;
	const void *p = fdt_prop(fdt, node, name, &len);
	if (!p)
		return -ENOENT;
	if (len != 4 && len != 8)
		return -EINVAL;
	*out = fdt_cells(p, len / 4);
	return 0;
}

bool fdt_prop_has_string(const struct fdt *fdt, int node, const char *name, const char *str)
{
	u32 len;
	const char *p = fdt_prop(fdt, node, name, &len);
	if (!p)
		return false;
	for (u32 i = 0; i < len;) {
		size_t n = strnlen(p + i, len - i);
		if (n == len - i)
			return false; /* last string unterminated */
		if (!strcmp(p + i, str))
			return true;
		i += n + 1;
	}
	return false;
}

int fdt_node_by_phandle(const struct fdt *fdt, u32 phandle)
{
	/* 0 and ~0 are never valid phandles (the spec reserves them). */
	if (phandle == 0 || phandle == 0xffffffffu)
		return -ENOENT;
	int depth = 0;
	for (int node = fdt_root(fdt); node >= 0; node = fdt_next_node(fdt, node, &depth)) {
		u32 ph;
		if ((fdt_prop_u32(fdt, node, "phandle", &ph) == 0 ||
		     fdt_prop_u32(fdt, node, "linux,phandle", &ph) == 0) &&
		    ph == phandle)
			return node;
	}
	return -ENOENT;
}

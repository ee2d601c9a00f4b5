/*
 * ELF loader selftests (suite elf): real static programs (tests/user/elf_min.c,
 * built at build time as ET_EXEC and static-pie ET_DYN) loaded into a fresh mm,
 * checked against what readelf says of the same files (elf_expect.h, generated
 * by scripts/gen-elf-expect): VMAs, protections of the VMAs and of the leaves,
 * every byte of every segment's pages against the file, and the auxv values.
 * Then malformed images, one field broken at a time and by random byte flips:
 * each is refused with Linux's errno and leaves no VMA behind.
 */
#include <grace/elf.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

#include "as_test.h"

struct elf_expect_load {
	u64 offset, vaddr, filesz, memsz;
	unsigned flags; /* PF_R | PF_W | PF_X */
};
#include "elf_expect.h"

extern const u8 elf_min_exec_start[], elf_min_exec_end[];
extern const u8 elf_min_pie_start[], elf_min_pie_end[];

/* Linux's PIE address without randomization (gdb's familiar one on x86_64). */
#if defined(__x86_64__)
#define LINUX_PIE_BIAS 0x555555554000UL
#else
#define LINUX_PIE_BIAS 0x2aaaaaa000UL
#endif

struct elf_expect {
	const u8 *image;
	size_t len;
	bool is_dyn;
	u64 entry, phoff, phent, phnum, phdr_vaddr;
	bool has_phdr;
	const struct elf_expect_load *loads;
	unsigned nr_loads;
};

static const struct elf_expect expect_exec = {elf_min_exec_start,    0,
					      ELF_MIN_EXEC_IS_DYN,   ELF_MIN_EXEC_ENTRY,
					      ELF_MIN_EXEC_PHOFF,    ELF_MIN_EXEC_PHENT,
					      ELF_MIN_EXEC_PHNUM,    ELF_MIN_EXEC_PHDR_VADDR,
					      ELF_MIN_EXEC_HAS_PHDR, elf_min_exec_loads,
					      ELF_MIN_EXEC_NR_LOADS};
static const struct elf_expect expect_pie = {elf_min_pie_start,	   0,
					     ELF_MIN_PIE_IS_DYN,   ELF_MIN_PIE_ENTRY,
					     ELF_MIN_PIE_PHOFF,	   ELF_MIN_PIE_PHENT,
					     ELF_MIN_PIE_PHNUM,	   ELF_MIN_PIE_PHDR_VADDR,
					     ELF_MIN_PIE_HAS_PHDR, elf_min_pie_loads,
					     ELF_MIN_PIE_NR_LOADS};

static unsigned flags_prot(unsigned flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

/* What the byte at va of segment l must be: the file's (whole file pages, as mmap maps them), or 0.
 */
static u8 expected_byte(const u8 *image, const struct elf_expect_load *l, uintptr_t bias,
			uintptr_t va)
{
	uintptr_t vaddr = l->vaddr + bias;
	if (va >= vaddr + l->filesz)
		return 0;
	return image[l->offset - (vaddr - va)];
}

/* Every word of segment l's pages, read through the mm as user memory, equals the file's. */
static void expect_segment_bytes(const u8 *image, const struct elf_expect_load *l, uintptr_t bias)
{
	uintptr_t start = ALIGN_DOWN(l->vaddr + bias, PAGE_SIZE);
	uintptr_t end = ALIGN_UP(l->vaddr + bias + l->memsz, PAGE_SIZE);
	unsigned bad = 0;
	for (uintptr_t va = start; va < end; va += 8) {
		u64 got = 0, want = 0;
		if (user_read_u64(va, &got)) {
			test_fail(__FILE__, __LINE__, "read of %lx faulted", va);
			return;
		}
		for (unsigned b = 0; b < 8; b++)
			want |= (u64)expected_byte(image, l, bias, va + b) << (8 * b);
		if (got != want && bad++ < 4)
			test_fail(__FILE__, __LINE__, "at %lx: %lx, the file says %lx (%s)", va,
				  (unsigned long)got, (unsigned long)want,
				  va >= l->vaddr + bias + l->filesz ? "bss" : "file bytes");
	}
}

static void expect_loaded(const struct elf_expect *e, size_t len)
{
	struct mm *mm = mm_create();
	struct elf_info info;
	ASSERT_TRUE(mm);
	ASSERT_EQ(elf_check(e->image, len), 0);
	ASSERT_EQ(elf_load(mm, e->image, len, &info), 0);

	uintptr_t bias = e->is_dyn ? LINUX_PIE_BIAS : 0;
	EXPECT_EQ(info.load_bias, bias);
	EXPECT_EQ(info.entry, e->entry + bias);
	EXPECT_EQ(info.phent, e->phent);
	EXPECT_EQ(info.phnum, e->phnum);
	/* The first PT_LOAD of both programs starts at offset 0 and holds the table. */
	ASSERT_EQ(e->loads[0].offset, 0);
	EXPECT_EQ(info.phdr, e->loads[0].vaddr + e->phoff + bias);
	if (e->has_phdr)
		EXPECT_EQ(info.phdr, e->phdr_vaddr + bias);

	uintptr_t brk = 0;
	EXPECT_EQ(vma_count(mm), e->nr_loads);
	mm_switch(mm);
	for (unsigned i = 0; i < e->nr_loads; i++) {
		const struct elf_expect_load *l = &e->loads[i];
		uintptr_t start = ALIGN_DOWN(l->vaddr + bias, PAGE_SIZE);
		uintptr_t end = ALIGN_UP(l->vaddr + bias + l->memsz, PAGE_SIZE);
		struct vma v;
		if (end > brk)
			brk = end;
		if (!EXPECT_TRUE(vma_lookup(mm, start, &v)))
			continue;
		EXPECT_EQ(v.start, start);
		EXPECT_EQ(v.end, end);
		EXPECT_EQ(v.prot, flags_prot(l->flags));
		expect_segment_bytes(e->image, l, bias);
		/* The leaves the reads faulted in carry the segment's permissions. */
		pte_t pte;
		int level;
		if (EXPECT_EQ(pt_lookup(mm, start, &pte, &level), 0))
			EXPECT_EQ(pte_leaf_prot(pte) & (PROT_READ | PROT_WRITE | PROT_EXEC),
				  flags_prot(l->flags) | PROT_READ);
	}
	mm_switch(NULL);
	EXPECT_EQ(info.brk, brk);
	mm_destroy(mm);
}

TEST(elf, static_exec_loads_as_readelf_says)
{
	ASSERT_FALSE(expect_exec.is_dyn);
	expect_loaded(&expect_exec, (size_t)(elf_min_exec_end - elf_min_exec_start));
}

TEST(elf, static_pie_loads_at_linux_dyn_base_as_readelf_says)
{
	ASSERT_TRUE(expect_pie.is_dyn);
	expect_loaded(&expect_pie, (size_t)(elf_min_pie_end - elf_min_pie_start));
}

/* Room after the copy for a relocated program header table of more than 64 KiB. */
#define ELF_COPY_SLACK (ELF_PHDRS_MAX_BYTES + 2 * PAGE_SIZE)

/* A private, writable copy of the ET_EXEC program to break. */
struct elf_copy {
	u8 *buf;
	unsigned order;
	size_t len;
};

static bool elf_copy_get(struct elf_copy *c)
{
	c->len = (size_t)(elf_min_exec_end - elf_min_exec_start);
	c->order = pages_order(c->len + ELF_COPY_SLACK);
	c->buf = alloc_pages(c->order);
	if (!c->buf)
		return test_fail(__FILE__, __LINE__, "no memory for a copy");
	memset(c->buf, 0, PAGE_SIZE << c->order);
	memcpy(c->buf, elf_min_exec_start, c->len);
	return true;
}

static struct elf64_hdr *ehdr(struct elf_copy *c)
{
	return (struct elf64_hdr *)c->buf;
}

static struct elf64_phdr *phdr(struct elf_copy *c, unsigned i)
{
	return (struct elf64_phdr *)(c->buf + ehdr(c)->e_phoff) + i;
}

/* The index of the n-th PT_LOAD (of the unbroken image). */
static unsigned load_index(struct elf_copy *c, unsigned n)
{
	for (unsigned i = 0; i < ehdr(c)->e_phnum; i++)
		if (phdr(c, i)->p_type == PT_LOAD && n-- == 0)
			return i;
	return 0;
}

static unsigned other_index(struct elf_copy *c)
{
	for (unsigned i = 0; i < ehdr(c)->e_phnum; i++)
		if (phdr(c, i)->p_type != PT_LOAD)
			return i;
	return 0;
}

#define OTHER_MACHINE (ELF_MACHINE == EM_RISCV ? EM_X86_64 : EM_RISCV)

/* One broken field; *len may be cut too. */
struct elf_mutation {
	const char *what;
	int err;
	void (*apply)(struct elf_copy *c, size_t *len);
};

#define MUT(name, body)                                                                            \
	static void mut_##name(struct elf_copy *c, size_t *len)                                    \
	{                                                                                          \
		(void)len;                                                                         \
		body;                                                                              \
	}
MUT(magic, ehdr(c)->e_ident[1] = 'X')
MUT(class32, ehdr(c)->e_ident[EI_CLASS] = 1)
MUT(big_endian, ehdr(c)->e_ident[EI_DATA] = 2)
MUT(ident_version, ehdr(c)->e_ident[EI_VERSION] = 0)
MUT(e_version, ehdr(c)->e_version = 2)
MUT(machine, ehdr(c)->e_machine = OTHER_MACHINE)
MUT(type_rel, ehdr(c)->e_type = 1)
MUT(type_core, ehdr(c)->e_type = 4)
MUT(phentsize, ehdr(c)->e_phentsize = 32)
MUT(phnum_zero, ehdr(c)->e_phnum = 0)
/*
 * Move the program header table to the end of the file and pad it with PT_NULL
 * entries to n of them, so that a table too big is refused for its size alone.
 */
static void grow_table(struct elf_copy *c, size_t *len, unsigned n)
{
	struct elf64_hdr *eh = ehdr(c);
	size_t at = ALIGN_UP(*len, 8), old = (size_t)eh->e_phnum * sizeof(struct elf64_phdr);
	memset(c->buf + at, 0, (size_t)n * sizeof(struct elf64_phdr));
	memcpy(c->buf + at, c->buf + eh->e_phoff, old);
	eh->e_phoff = at;
	eh->e_phnum = (u16)n;
	*len = at + (size_t)n * sizeof(struct elf64_phdr);
}

MUT(phnum_over_linux_limit, grow_table(c, len, ELF_PHDRS_MAX_BYTES / 56 + 1))
MUT(phoff_past_file, ehdr(c)->e_phoff = *len - 10)
MUT(phoff_huge, ehdr(c)->e_phoff = ~0UL - 8)
MUT(truncated_header, *len = 63)
MUT(truncated_phdrs, *len = ehdr(c)->e_phoff + 60)
MUT(filesz_over_memsz, phdr(c, load_index(c, 1))->p_filesz = phdr(c, load_index(c, 1))->p_memsz + 1)
MUT(segment_past_file, {
	struct elf64_phdr *p = phdr(c, load_index(c, 1));
	p->p_filesz = *len - p->p_offset + 16;
	p->p_memsz = p->p_filesz + 4096;
})
MUT(offset_wraps,
    phdr(c, load_index(c, 1))->p_offset = ~0UL - 0xfff +
					  (phdr(c, load_index(c, 1))->p_vaddr & 0xfff))
MUT(vaddr_offset_incongruent, phdr(c, load_index(c, 1))->p_vaddr += 8)
MUT(vaddr_below_min, phdr(c, load_index(c, 0))->p_vaddr &= 0xfff)
MUT(vaddr_past_user_half,
    phdr(c, load_index(c, 1))->p_vaddr = USER_VA_END + (phdr(c, load_index(c, 1))->p_vaddr & 0xfff))
MUT(memsz_wraps, phdr(c, load_index(c, 1))->p_memsz = ~0UL - 0x10)
MUT(segments_overlap,
    phdr(c, load_index(c, 1))->p_vaddr = phdr(c, load_index(c, 0))->p_vaddr +
					 (phdr(c, load_index(c, 1))->p_vaddr & 0xfff))
MUT(interp, phdr(c, other_index(c))->p_type = PT_INTERP)
MUT(no_load, {
	for (unsigned i = 0; i < ehdr(c)->e_phnum; i++)
		if (phdr(c, i)->p_type == PT_LOAD)
			phdr(c, i)->p_type = PT_NULL;
})

#define M(name, errno_)                                                                            \
	{                                                                                          \
#name, -errno_, mut_##name                                                         \
	}
static const struct elf_mutation mutations[] = {
    M(magic, ENOEXEC),
    M(class32, ENOEXEC),
    M(big_endian, ENOEXEC),
    M(ident_version, ENOEXEC),
    M(e_version, ENOEXEC),
    M(machine, ENOEXEC),
    M(type_rel, ENOEXEC),
    M(type_core, ENOEXEC),
    M(phentsize, ENOEXEC),
    M(phnum_zero, ENOEXEC),
    M(phnum_over_linux_limit, ENOEXEC),
    M(phoff_past_file, ENOEXEC),
    M(phoff_huge, ENOEXEC),
    M(truncated_header, ENOEXEC),
    M(truncated_phdrs, ENOEXEC),
    M(filesz_over_memsz, EINVAL),
    M(segment_past_file, ENOEXEC),
    M(offset_wraps, ENOEXEC),
    M(vaddr_offset_incongruent, EINVAL),
    M(vaddr_below_min, EINVAL),
    M(vaddr_past_user_half, EINVAL),
    M(memsz_wraps, EINVAL),
    M(segments_overlap, ENOEXEC),
    M(interp, ENOEXEC),
    M(no_load, ENOEXEC),
};

TEST(elf, each_broken_field_is_refused_with_linux_errno_and_maps_nothing)
{
	struct elf_copy c;
	struct elf_info info;
	ASSERT_TRUE(elf_copy_get(&c));
	/* The copy itself is good, and both the mutations below need a second PT_LOAD. */
	ASSERT_EQ(elf_check(c.buf, c.len), 0);
	ASSERT_GE(ELF_MIN_EXEC_NR_LOADS, 2);
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm);
	for (unsigned i = 0; i < ARRAY_SIZE(mutations); i++) {
		const struct elf_mutation *m = &mutations[i];
		size_t len = c.len;
		memcpy(c.buf, elf_min_exec_start, c.len);
		m->apply(&c, &len);
		int err = elf_load(mm, c.buf, len, &info);
		if (err != m->err)
			test_fail(__FILE__, __LINE__, "%s: elf_load gave %d, expected %d", m->what,
				  err, m->err);
		EXPECT_EQ(elf_check(c.buf, len), m->err);
		if (vma_count(mm))
			test_fail(__FILE__, __LINE__, "%s: %u VMAs left", m->what, vma_count(mm));
	}
	/* The largest table Linux takes, PT_NULL entries after the real ones, loads. */
	size_t len = c.len;
	memcpy(c.buf, elf_min_exec_start, c.len);
	grow_table(&c, &len, ELF_PHDRS_MAX_BYTES / 56);
	EXPECT_EQ(elf_load(mm, c.buf, len, &info), 0);
	EXPECT_EQ(info.phnum, ELF_PHDRS_MAX_BYTES / 56);
	EXPECT_EQ(vma_count(mm), ELF_MIN_EXEC_NR_LOADS);
	mm_destroy(mm);
	free_pages(c.buf, c.order);
}

TEST(elf, a_clash_with_an_existing_vma_unmaps_the_segments_already_mapped)
{
	const struct elf_expect_load *last = &elf_min_exec_loads[ELF_MIN_EXEC_NR_LOADS - 1];
	size_t len = (size_t)(elf_min_exec_end - elf_min_exec_start);
	struct elf_info info;
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm);
	/* A VMA where the last segment goes: every segment before it is mapped and filled first. */
	uintptr_t at = ALIGN_DOWN(last->vaddr, PAGE_SIZE);
	ASSERT_EQ(vma_map(mm, at, PAGE_SIZE, PROT_READ, 0), 0);
	EXPECT_EQ(elf_load(mm, elf_min_exec_start, len, &info), -EEXIST);
	EXPECT_EQ(vma_count(mm), 1);
	for (unsigned i = 0; i + 1 < ELF_MIN_EXEC_NR_LOADS; i++)
		EXPECT_FALSE(vma_lookup(mm, elf_min_exec_loads[i].vaddr, &(struct vma){0}));
	mm_destroy(mm);
}

TEST(elf, out_of_memory_at_any_allocation_leaves_no_vma)
{
	size_t len = (size_t)(elf_min_exec_end - elf_min_exec_start);
	struct elf_info info;
	unsigned failed = 0;
	for (unsigned skip = 0; skip < 32; skip++) {
		struct mm *mm = mm_create();
		ASSERT_TRUE(mm);
		mm_inject_alloc_failures(skip, 1);
		int err = elf_load(mm, elf_min_exec_start, len, &info);
		mm_inject_alloc_failures(0, 0);
		if (err) {
			failed++;
			EXPECT_EQ(err, -ENOMEM);
			EXPECT_EQ(vma_count(mm), 0);
		} else {
			EXPECT_EQ(vma_count(mm), ELF_MIN_EXEC_NR_LOADS);
		}
		mm_destroy(mm);
	}
	/* The first few allocations of a load (tables, pages) did fail. */
	EXPECT_GT(failed, 0);
}

/* xorshift64 (Marsaglia 2003): reproducible from the seed. */
static u64 xorshift64(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define FUZZ_ROUNDS 400
#define FUZZ_SEED 0x9e3779b97f4a7c15ULL

TEST(elf, random_byte_flips_never_crash_or_leave_a_vma_on_error)
{
	struct elf_copy c;
	struct elf_info info;
	u64 seed = FUZZ_SEED;
	unsigned loaded = 0, refused = 0;
	ASSERT_TRUE(elf_copy_get(&c));
	/* Most flips land in the headers, where they matter: the ELF header and the table. */
	size_t hot = ehdr(&c)->e_phoff + (size_t)ehdr(&c)->e_phnum * sizeof(struct elf64_phdr);
	for (unsigned round = 0; round < FUZZ_ROUNDS; round++) {
		memcpy(c.buf, elf_min_exec_start, c.len);
		unsigned flips = 1 + xorshift64(&seed) % 4;
		for (unsigned f = 0; f < flips; f++) {
			u64 r = xorshift64(&seed);
			size_t at = (r & 1) ? (r >> 8) % hot : (r >> 8) % c.len;
			c.buf[at] ^= (u8)(1u << ((r >> 4) & 7));
		}
		struct mm *mm = mm_create();
		ASSERT_TRUE(mm);
		int err = elf_load(mm, c.buf, c.len, &info);
		if (err) {
			refused++;
			if (err != -ENOEXEC && err != -EINVAL)
				test_fail(__FILE__, __LINE__, "round %u: error %d", round, err);
			if (vma_count(mm))
				test_fail(__FILE__, __LINE__, "round %u: %d but %u VMAs left",
					  round, err, vma_count(mm));
		} else {
			loaded++;
			EXPECT_EQ(elf_check(c.buf, c.len), 0);
		}
		mm_destroy(mm);
	}
	pr_info("elf fuzz: %u rounds, %u loaded, %u refused\n", FUZZ_ROUNDS, loaded, refused);
	EXPECT_GT(refused, 0);
	free_pages(c.buf, c.order);
}

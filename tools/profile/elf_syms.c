/*
 * ELF64 symbol table reader for the profiler: maps the kernel file, finds
 * SHT_SYMTAB and its string table, and keeps defined FUNC and OBJECT symbols, and
 * the untyped labels of executable sections: assembly entry points (the trap
 * vector, the context switch) have no .type, and without them their instructions
 * would be no symbol's.
 * Every offset is checked against the file size; a bad file is an error message.
 */
#include "elf_syms.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer the sized symbol at an address (a function over a local label), then any
	 * name the same way every time (_start and _text share one). */
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int fail(char *err, size_t len, const char *path, const char *why)
{
	snprintf(err, len, "%s: %s", path, why);
	return -1;
}

int symtab_load(const char *path, struct symtab *out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail(err, errlen, path, "cannot open");
	struct stat st;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return fail(err, errlen, path, "too small for an ELF64 header");
	}
	size_t size = (size_t)st.st_size;
	const uint8_t *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return fail(err, errlen, path, "cannot map");

	const Elf64_Ehdr *eh = (const void *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return fail(err, errlen, path, "not an ELF64 file");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return fail(err, errlen, path, "bad section header table");
	const Elf64_Shdr *sh = (const void *)(base + eh->e_shoff);

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		if (sh[i].sh_link >= eh->e_shnum)
			return fail(err, errlen, path, "symtab links to no string table");
		const Elf64_Shdr *strsh = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    strsh->sh_offset > size || strsh->sh_size > size - strsh->sh_offset)
			return fail(err, errlen, path, "symtab or strtab past the end of the file");
		const Elf64_Sym *s = (const void *)(base + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
		const char *str = (const char *)(base + strsh->sh_offset);

		out->syms = calloc(n ? n : 1, sizeof(struct sym));
		out->n = 0;
		for (size_t j = 0; j < n; j++) {
			int type = ELF64_ST_TYPE(s[j].st_info);
			unsigned shndx = s[j].st_shndx;
			int code_label = type == STT_NOTYPE && shndx < eh->e_shnum &&
					 (sh[shndx].sh_flags & SHF_EXECINSTR);
			if ((type != STT_FUNC && type != STT_OBJECT && !code_label) ||
			    shndx == SHN_UNDEF || s[j].st_name >= strsh->sh_size)
				continue;
			const char *name = str + s[j].st_name;
			if (!memchr(name, '\0', strsh->sh_size - s[j].st_name))
				continue;
			/* Mapping symbols ($x, $d) and assembler-local labels (.L) name no code. */
			if (code_label && (name[0] == '$' || name[0] == '.' || !name[0]))
				continue;
			out->syms[out->n++] = (struct sym){s[j].st_value, s[j].st_size,
							   strdup(name), type != STT_OBJECT};
		}
		qsort(out->syms, out->n, sizeof(struct sym), by_addr);
		munmap((void *)base, size);
		return 0;
	}
	munmap((void *)base, size);
	return fail(err, errlen, path, "no symbol table (was it stripped?)");
}

const struct sym *symtab_find(const struct symtab *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;
	if (!t->n || a < t->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= a)
			lo = mid;
		else
			hi = mid;
	}
	/* Several symbols may share an address; the sort put the largest first. */
	while (lo > 0 && t->syms[lo - 1].addr == t->syms[lo].addr)
		lo--;
	const struct sym *s = &t->syms[lo];
	if (s->size && a >= s->addr + s->size)
		return NULL;
	return s;
}

const struct sym *symtab_by_name(const struct symtab *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->syms[i].name, name))
			return &t->syms[i];
	return NULL;
}

/* Read the function and object symbols of an ELF64 file, sorted by address. */
#ifndef GRACE_ELF_SYMS_H
#define GRACE_ELF_SYMS_H

#include <stdint.h>
#include <stddef.h>

struct sym {
	uint64_t addr, size;
	const char *name;
	int is_func;
};

struct symtab {
	struct sym *syms; /* sorted by addr */
	size_t n;
};

/* 0 on success; on failure, -1 with a message in err. */
int symtab_load(const char *path, struct symtab *out, char *err, size_t errlen);
/* The symbol whose [addr, addr+size) holds a (or the last one at or below a when size is 0), or
 * NULL. */
const struct sym *symtab_find(const struct symtab *t, uint64_t a);
const struct sym *symtab_by_name(const struct symtab *t, const char *name);

#endif

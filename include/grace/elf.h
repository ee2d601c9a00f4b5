/*
 * ELF64 images: the file format's structures and constants (as the System V ABI
 * and Linux's uapi/linux/elf.h name them), and the loader that maps a static
 * executable's PT_LOAD segments into an address space (fs/binfmt_elf.c).
 */
#ifndef GRACE_ELF_H
#define GRACE_ELF_H

#include <grace/address_space.h>
#include <grace/types.h>

/* e_ident[] */
#define EI_MAG0 0
#define EI_CLASS 4
#define EI_DATA 5
#define EI_VERSION 6
#define EI_NIDENT 16
#define ELFMAG "\177ELF"
#define SELFMAG 4
#define ELFCLASS64 2
#define ELFDATA2LSB 1
#define EV_CURRENT 1

/* e_type */
#define ET_EXEC 2
#define ET_DYN 3

/* e_machine */
#define EM_X86_64 62
#define EM_RISCV 243

/* p_type */
#define PT_NULL 0
#define PT_LOAD 1
#define PT_DYNAMIC 2
#define PT_INTERP 3
#define PT_NOTE 4
#define PT_PHDR 6
#define PT_TLS 7

/* p_flags */
#define PF_X 0x1
#define PF_W 0x2
#define PF_R 0x4

struct elf64_hdr {
	u8 e_ident[EI_NIDENT];
	u16 e_type;
	u16 e_machine;
	u32 e_version;
	u64 e_entry;
	u64 e_phoff;
	u64 e_shoff;
	u32 e_flags;
	u16 e_ehsize;
	u16 e_phentsize;
	u16 e_phnum;
	u16 e_shentsize;
	u16 e_shnum;
	u16 e_shstrndx;
};

struct elf64_phdr {
	u32 p_type;
	u32 p_flags;
	u64 p_offset;
	u64 p_vaddr;
	u64 p_paddr;
	u64 p_filesz;
	u64 p_memsz;
	u64 p_align;
};

_Static_assert(sizeof(struct elf64_hdr) == 64, "ELF64 header is 64 bytes");
_Static_assert(sizeof(struct elf64_phdr) == 56, "ELF64 program header is 56 bytes");

/*
 * Where an ET_DYN (static-pie) image is placed: Linux's ELF_ET_DYN_BASE, two
 * thirds of the default mmap window (x86_64: DEFAULT_MAP_WINDOW = 2^47 - 4 KiB;
 * riscv64: 2^38, the Sv39 window), rounded down to the largest p_align of its
 * PT_LOADs as load_elf_binary() does. Without randomization that puts a PIE at
 * 0x555555554000 on x86_64 and 0x2aaaaaa000 on riscv64, as on Linux.
 */
#if defined(__x86_64__)
#define ELF_MACHINE EM_X86_64
#define ELF_ET_DYN_BASE ((((1UL << 47) - 4096) / 3) * 2)
#else
#define ELF_MACHINE EM_RISCV
#define ELF_ET_DYN_BASE (((1UL << 38) / 3) * 2)
#endif

/*
 * Bounds of the program header table, as Linux's load_elf_phdrs(): at least one
 * entry and at most 64 KiB of them (1170; Linux 6.18 on the host runs 1170 and
 * refuses 1171 with ENOEXEC).
 */
#define ELF_PHDRS_MAX_BYTES 65536

/* What the auxiliary vector and brk need from a loaded image. */
struct elf_info {
	uintptr_t load_bias; /* added to every p_vaddr: 0 for ET_EXEC */
	uintptr_t entry;     /* AT_ENTRY: e_entry + load_bias */
	uintptr_t phdr;	     /* AT_PHDR: the program headers in the image's memory, or 0 */
	unsigned phent;	     /* AT_PHENT */
	unsigned phnum;	     /* AT_PHNUM */
	uintptr_t brk;	     /* end of the highest segment, page-aligned: where brk starts */
};

/*
 * Is image[0, len) a static ELF64 executable for this machine that elf_load()
 * can map? 0, -ENOEXEC (not ELF, another machine or class, a bad header or
 * program header table, a segment outside the file, segments out of order or
 * sharing a page, or a PT_INTERP: dynamically linked programs are not
 * supported), or -EINVAL where Linux's load_elf_binary() says so (p_filesz >
 * p_memsz, a segment outside the user half, p_vaddr and p_offset not congruent
 * modulo the page size).
 */
int elf_check(const void *image, size_t len);

/*
 * Check the image, then map each PT_LOAD of it into mm as a private anonymous
 * VMA with its protections, copy its file bytes in and leave the rest (bss,
 * and the tail of its last file page) zero; fill *info. Returns 0, elf_check's
 * errors, -EEXIST if a segment overlaps a VMA already in mm, or -ENOMEM; on
 * error nothing the call mapped is left. The image must stay put meanwhile.
 */
int elf_load(struct mm *mm, const void *image, size_t len, struct elf_info *info);

#endif

/*
 * ACPI static tables: the RSDP, the root table (RSDT or XSDT), the MADT (CPUs,
 * I/O APICs, interrupt source overrides), the SRAT and SLIT (NUMA affinity and
 * distances), the MCFG (PCI Express ECAM) and the HPET table. Generic C,
 * compiled on every arch (its selftests build everywhere); only x86_64 boots with it.
 *
 * Tables point at each other by physical address, so the parser asks the caller's
 * map function for every range it reads; the function returns NULL for a range
 * that is not RAM or firmware memory. Every table's header length is checked for
 * sanity before it is mapped whole and checksummed, and every entry's length
 * against its table. Bad data gives a printk and -EINVAL, never a fault.
 */
#ifndef GRACE_ACPI_H
#define GRACE_ACPI_H

#include <grace/types.h>

#define ACPI_MAX_CPUS 256 /* xAPIC ids are 8 bits */
#define ACPI_MAX_IOAPICS 8
#define ACPI_MAX_OVERRIDES 16
#define ACPI_MAX_MEM_AFFINITY 16
#define ACPI_NO_DOMAIN 0xffffffffu
#define ACPI_MAX_LOCALITIES 16 /* SLIT rows kept; more domains: default distances */
#define ACPI_MAX_MCFG 4	       /* ECAM allocations kept: PCs have one, segment 0 */

/* Interrupt source override flags (MPS INTI flags). */
#define ACPI_POLARITY_MASK 0x3
#define ACPI_POLARITY_ACTIVE_HIGH 0x1
#define ACPI_POLARITY_ACTIVE_LOW 0x3
#define ACPI_TRIGGER_MASK 0xc
#define ACPI_TRIGGER_EDGE 0x4
#define ACPI_TRIGGER_LEVEL 0xc

struct acpi_cpu {
	u32 apic_id;
	u32 uid;	     /* ACPI processor UID */
	bool enabled;	     /* usable now */
	bool online_capable; /* disabled but may be brought up later (ACPI 6.3) */
	u32 domain;	     /* SRAT proximity domain, ACPI_NO_DOMAIN if none */
};

struct acpi_ioapic {
	u32 id;
	u32 addr;     /* physical MMIO base */
	u32 gsi_base; /* first global system interrupt it serves */
};

struct acpi_override {
	u8 bus, source; /* ISA IRQ source */
	u32 gsi;
	u16 flags; /* ACPI_POLARITY_*, ACPI_TRIGGER_* */
};

struct acpi_mem_affinity {
	u64 base, length;
	u32 domain;
};

/* One MCFG allocation: the ECAM of buses start_bus..end_bus of a PCI segment. */
struct acpi_mcfg {
	u64 base; /* physical address of bus 0's configuration space, even if start_bus > 0 */
	u16 segment;
	u8 start_bus, end_bus;
};

struct acpi_info {
	u8 rsdp_revision;
	bool xsdt; /* the root table used was the XSDT */
	char oem_id[7];
	u64 lapic_addr;
	bool pcat_compat;		     /* legacy 8259 PICs present (mask them) */
	struct acpi_cpu cpus[ACPI_MAX_CPUS]; /* in MADT order */
	unsigned nr_cpus;
	unsigned nr_cpus_dropped;
	struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
	unsigned nr_ioapics;
	struct acpi_override overrides[ACPI_MAX_OVERRIDES];
	unsigned nr_overrides;
	bool has_srat;
	struct acpi_mem_affinity mem_affinity[ACPI_MAX_MEM_AFFINITY];
	unsigned nr_mem_affinity;
	u8 slit[ACPI_MAX_LOCALITIES][ACPI_MAX_LOCALITIES]; /* by proximity domain */
	unsigned slit_localities;			   /* 0: no SLIT */
	struct acpi_mcfg mcfg[ACPI_MAX_MCFG];		   /* a bad MCFG leaves none */
	unsigned nr_mcfg;
	u64 hpet_addr;	   /* the first HPET's registers, physical; 0: none (or a bad table) */
	u32 hpet_block_id; /* its event timer block id: revision, timers, vendor */
	u8 hpet_number;
	u16 hpet_min_tick;
};

/* Return a virtual pointer to physical [pa, pa + len), or NULL if that is not table memory. */
typedef const void *(*acpi_map_fn)(void *ctx, u64 pa, u64 len);

/*
 * Parse from an RSDP copy (the multiboot2 tag's bytes, rsdp_len of them).
 * 0, -EINVAL for bad data, -ENODEV when there is no MADT.
 */
int acpi_parse(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
	       struct acpi_info *out);

/* Enabled CPUs in info. */
unsigned acpi_enabled_cpus(const struct acpi_info *info);

/* Sum of a table's bytes (valid tables sum to 0 mod 256). */
u8 acpi_checksum(const void *p, size_t len);

#endif

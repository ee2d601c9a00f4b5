/*
 * What the host runner knows about the machine from outside the kernel, passed on
 * the test command line: expect_cpus=N, expect_hwids=LIST (hart or APIC ids, as
 * "0-3,8"), expect_mem_mib=N (RAM QEMU was given), expect_nodes=N. tests/run
 * takes them from QEMU's configuration and, on riscv64, from the device tree QEMU
 * dumps (dumpdtb), read with dtc on the host. The parser tests compare what the
 * FDT, multiboot2 and ACPI parsers find with these, not with the boot_info those
 * same parsers filled.
 */
#ifndef TESTS_HOST_EXPECT_H
#define TESTS_HOST_EXPECT_H

#include <grace/boot_info.h>
#include <grace/types.h>

struct host_expect {
	unsigned cpus;
	unsigned nr_hwids;
	u32 hwids[MAX_CPUS]; /* ascending */
	u64 mem_bytes;
	unsigned nodes;
};

/* Fill e from the command line; false, with the running test skipped, when it has none. */
bool host_expect_get(struct host_expect *e);

/* Is hwid one of the expected ids? */
bool host_expect_has_hwid(const struct host_expect *e, u32 hwid);

#endif

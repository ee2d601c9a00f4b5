/*
 * SMEP and SMAP: the kernel may not execute user pages (SMEP), nor read or
 * write them outside the user-copy routines' window (SMAP: only while EFLAGS.AC
 * is set, by STAC). Each CPU turns on in CR4 what CPUID leaf 7 offers; the boot
 * CPU decides whether the STAC/CLAC of the window and the trap entry run at all
 * (they are #UD without SMAP), and every other CPU must agree with it.
 */
#include <grace/printk.h>
#include <grace/pgtable.h>
#include "processor.h"
#include "x86_64.h"

#define CPUID7_EBX_SMEP (1u << 7)
#define CPUID7_EBX_SMAP (1u << 20)

/* Written by the boot CPU before any other CPU runs and before any user page exists. */
bool x86_smap_enabled;
static bool smep_enabled;

void x86_user_protect_init_cpu(bool boot_cpu)
{
	u32 ebx = cpuid(0, 0).eax >= 7 ? cpuid(7, 0).ebx : 0;
	bool smep = ebx & CPUID7_EBX_SMEP, smap = ebx & CPUID7_EBX_SMAP;
	u64 cr4 = read_cr4();

	if (boot_cpu) {
		x86_smap_enabled = smap;
		smep_enabled = smep;
	} else if (smap != x86_smap_enabled || smep != smep_enabled) {
		x86_fatal("x86: CPUs differ in SMEP/SMAP");
	}
	if (smep)
		cr4 |= CR4_SMEP;
	if (smap)
		cr4 |= CR4_SMAP;
	write_cr4(cr4);
	if (boot_cpu)
		pr_info("x86: SMEP %s, SMAP %s\n", smep ? "on" : "off (not in CPUID)",
			smap ? "on" : "off (not in CPUID)");
}

/*
 * SMAP's window for assembly: STAC opens kernel access to user pages (sets
 * EFLAGS.AC), CLAC closes it. Both are #UD on a CPU without SMAP, so each runs
 * only when x86_smap_enabled (smap.c) says CR4.SMAP is on. Private to
 * arch/x86_64 (not on the include path).
 */
#ifndef ARCH_X86_64_SMAP_H
#define ARCH_X86_64_SMAP_H

#ifdef __ASSEMBLY__
	.macro SMAP_STAC
	testb	$1, x86_smap_enabled(%rip)
	jz	.Lno_stac\@
	stac
.Lno_stac\@:
	.endm

	.macro SMAP_CLAC
	testb	$1, x86_smap_enabled(%rip)
	jz	.Lno_clac\@
	clac
.Lno_clac\@:
	.endm
#endif

#endif

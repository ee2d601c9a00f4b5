/* CPU hints. */
#ifndef ASM_CPU_H
#define ASM_CPU_H

/*
 * Zihintpause's PAUSE, spelled as the FENCE it is encoded in (pred=W, succ=0) so
 * that any assembler takes it; harts without the extension run it as a no-op fence.
 * QEMU ends the translation block on it, which lets a spinning vCPU yield sooner.
 */
static inline void cpu_relax(void)
{
	__asm__ __volatile__(".insn i 0x0f, 0, x0, x0, 0x010" : : : "memory");
}

#endif

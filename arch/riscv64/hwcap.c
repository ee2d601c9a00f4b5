/*
 * AT_HWCAP on riscv64: Linux sets bit (letter - 'a') for each single-letter
 * extension every hart has. User programs run as rv64gc (glibc's baseline):
 * I, M, A, F, D and C, which QEMU's virt harts and the boards Grace runs on have.
 */
#include <grace/arch.h>

#define HWCAP_ISA(letter) (1UL << ((letter) - 'a'))

unsigned long arch_elf_hwcap(void)
{
	return HWCAP_ISA('i') | HWCAP_ISA('m') | HWCAP_ISA('a') | HWCAP_ISA('f') | HWCAP_ISA('d') |
	       HWCAP_ISA('c');
}

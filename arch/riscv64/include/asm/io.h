/*
 * Device register access. RISC-V orders MMIO against memory only with fences on
 * the I/O bits: a read is followed by `fence i,r` (later memory reads see what the
 * device saw first), a write is preceded by `fence w,o` (the device sees earlier
 * memory writes, e.g. a buffer it is about to DMA). The same rule Linux uses.
 */
#ifndef ASM_IO_H
#define ASM_IO_H

#include <grace/types.h>

#define MMIO_ACCESSORS(bits, type, insn_l, insn_s)                                                 \
	static inline type mmio_read##bits(uintptr_t addr)                                         \
	{                                                                                          \
		type v;                                                                            \
		__asm__ __volatile__(insn_l " %0, 0(%1)" : "=r"(v) : "r"(addr) : "memory");        \
		__asm__ __volatile__("fence i,r" : : : "memory");                                  \
		return v;                                                                          \
	}                                                                                          \
	static inline void mmio_write##bits(uintptr_t addr, type v)                                \
	{                                                                                          \
		__asm__ __volatile__("fence w,o" : : : "memory");                                  \
		__asm__ __volatile__(insn_s " %0, 0(%1)" : : "r"(v), "r"(addr) : "memory");        \
	}

MMIO_ACCESSORS(8, u8, "lbu", "sb")
MMIO_ACCESSORS(16, u16, "lhu", "sh")
MMIO_ACCESSORS(32, u32, "lw", "sw")
MMIO_ACCESSORS(64, u64, "ld", "sd")

#undef MMIO_ACCESSORS

#endif

/*
 * Device register access: memory-mapped (volatile loads and stores; x86 keeps them
 * in program order for uncached mappings) and the PC's separate I/O port space.
 */
#ifndef ASM_IO_H
#define ASM_IO_H

#include <grace/types.h>

#define ARCH_HAS_PORT_IO 1

#define MMIO_ACCESSORS(bits)                                                                       \
	static inline u##bits mmio_read##bits(uintptr_t addr)                                      \
	{                                                                                          \
		return *(volatile u##bits *)addr;                                                  \
	}                                                                                          \
	static inline void mmio_write##bits(uintptr_t addr, u##bits v)                             \
	{                                                                                          \
		*(volatile u##bits *)addr = v;                                                     \
	}
MMIO_ACCESSORS(8)
MMIO_ACCESSORS(16)
MMIO_ACCESSORS(32)
MMIO_ACCESSORS(64)
#undef MMIO_ACCESSORS

static inline u8 inb(u16 port)
{
	u8 v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline u16 inw(u16 port)
{
	u16 v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline u32 inl(u16 port)
{
	u32 v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline void outb(u16 port, u8 v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline void outw(u16 port, u16 v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline void outl(u16 port, u32 v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

#endif

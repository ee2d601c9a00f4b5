# x86_64: built with the host gcc. The kernel code model puts the image in the top
# 2 GiB; no red zone (interrupts use the same stack); no SSE/MMX/AVX registers in
# the kernel, so traps and context switches need not save them.
CROSS_COMPILE :=
ARCH_CFLAGS := -m64 -march=x86-64 -mcmodel=kernel -mno-red-zone -mno-sse -mno-mmx -mno-sse2 \
	-mno-avx -mgeneral-regs-only -fno-pie -fno-asynchronous-unwind-tables
ARCH_LDFLAGS := -m elf_x86_64
ARCH_SRCS := $(wildcard arch/x86_64/*.c arch/x86_64/*.S)
ARCH_DRIVERS := drivers/irqchip/ioapic.c drivers/irqchip/i8259.c drivers/power/isa_debug_exit.c

# The default ISOs boot with an empty command line; scripts/qemu/x86_64.sh builds (and caches) one
# ISO per kernel and command line with the same script.
ARCH_IMAGES := $(BUILD)/kernel.iso
ARCH_TEST_IMAGES := $(BUILD)/kernel-test.iso

$(BUILD)/kernel.iso $(BUILD)/kernel-test.iso: $(BUILD)/%.iso: $(BUILD)/%.elf scripts/mkiso.sh
	@$(if $(Q),echo "  ISO     $@")
	$(Q)scripts/mkiso.sh $< $@ ""

# riscv64: S-mode kernel under OpenSBI, built with Debian's riscv64-linux-gnu toolchain.
CROSS_COMPILE ?= riscv64-linux-gnu-

# rv64imac: no FP in the kernel (sstatus.FS stays Off). medany: PC-relative addressing
# reaches the image at its high link address. Zicsr/Zifencei are separate in the ISA
# spec GCC 12 follows.
ARCH_CFLAGS := -march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany
ARCH_LDFLAGS := -melf64lriscv
ARCH_SRCS := $(wildcard arch/riscv64/*.c arch/riscv64/*.S)
ARCH_DRIVERS := drivers/irqchip/plic.c drivers/power/sifive_test.c
ARCH_IMAGES := $(BUILD)/Image
ARCH_TEST_IMAGES := $(BUILD)/Image-test

# The flat image that OpenSBI's fw_dynamic (QEMU -kernel), U-Boot booti and board
# firmware load: the loaded sections from the header on, bss excluded.
$(BUILD)/Image: $(KERNEL)
	@$(if $(Q),echo "  OBJCOPY $@")
	$(Q)$(OBJCOPY) -O binary $< $@

$(BUILD)/Image-test: $(TEST_KERNEL)
	@$(if $(Q),echo "  OBJCOPY $@")
	$(Q)$(OBJCOPY) -O binary $< $@

# FIRMWARE=none: Grace's own M-mode firmware (arch/riscv64/mfw/), a blob of its own at
# RAM start that QEMU's -bios none enters on every hart; the launcher loads the Image
# beside it, byte for byte the one OpenSBI boots. It reuses the kernel's device-tree
# reader and string functions, compiled once for both.
MFW_SRCS := $(wildcard arch/riscv64/mfw/*.c arch/riscv64/mfw/*.S) drivers/fdt/fdt.c lib/string.c
MFW_OBJS := $(patsubst %,$(BUILD)/%.o,$(basename $(MFW_SRCS)))
MFW_LDSCRIPT := arch/riscv64/mfw/mfw.ld
ARCH_IMAGES += $(BUILD)/mfw.bin
ARCH_TEST_IMAGES += $(BUILD)/mfw.bin

$(BUILD)/mfw.elf: $(MFW_OBJS) $(MFW_LDSCRIPT)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) $(LDFLAGS) -T $(MFW_LDSCRIPT) -o $@ $(MFW_OBJS)

$(BUILD)/mfw.bin: $(BUILD)/mfw.elf
	@$(if $(Q),echo "  OBJCOPY $@")
	$(Q)$(OBJCOPY) -O binary $< $@

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

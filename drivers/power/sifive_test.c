/*
 * The sifive,test device of QEMU's RISC-V machines: one register whose write
 * powers the machine off. QEMU exits with status code for (code << 16) | FAIL,
 * and with 0 for PASS.
 */
#include <grace/arch.h>
#include <grace/poweroff.h>
#include <asm/io.h>

#define SIFIVE_TEST_FAIL 0x3333
#define SIFIVE_TEST_PASS 0x5555
#define SIFIVE_TEST_REG_SIZE 4

static uintptr_t test_reg;

bool sifive_test_init(const struct fdt_mmio *dev)
{
	if (dev->size >= SIFIVE_TEST_REG_SIZE)
		test_reg = (uintptr_t)ioremap(dev->base, SIFIVE_TEST_REG_SIZE);
	return test_reg != 0;
}

void sifive_test_poweroff(int status)
{
	if (!test_reg)
		return;
	/* QEMU's exit status is the code: keep it in 1..255 for a failure. */
	u32 code = status > 0 && status < 256 ? (u32)status : 1;
	mmio_write32(test_reg, status ? code << 16 | SIFIVE_TEST_FAIL : SIFIVE_TEST_PASS);
}

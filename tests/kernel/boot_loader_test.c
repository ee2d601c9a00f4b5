/*
 * Which loader started the kernel, as the device tree's /chosen tells it. U-Boot's
 * booti writes its version (u-boot,version) and the hart it enters the kernel on
 * (boot-hartid) there, beside the bootargs it took from extlinux.conf; OpenSBI
 * entering the kernel directly leaves /chosen as QEMU built it. tests/run says which
 * path a configuration boots (expect_loader=opensbi or uboot, from --boot), so a
 * launcher that quietly stopped going through U-Boot, or started to, fails here.
 * Without a device tree (x86_64 boots from multiboot2) the test skips.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/fdt.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

TEST(boot_loader, chosen_names_uboot_exactly_when_uboot_started_the_kernel)
{
	if (!boot_info.fw_blob || boot_info.fw_blob_size < 8 ||
	    !fdt_header_size(boot_info.fw_blob)) {
		test_skip("the firmware blob is not a device tree on this machine");
		return;
	}
	struct fdt fdt;
	ASSERT_EQ(fdt_open(&fdt, boot_info.fw_blob, boot_info.fw_blob_size), 0);
	int chosen = fdt_path(&fdt, "/chosen", strlen("/chosen"));
	const char *version = chosen >= 0 ? fdt_prop_string(&fdt, chosen, "u-boot,version") : NULL;
	const char *want = cmdline_get("expect_loader");

	if (want && !strcmp(want, "uboot") && !version) {
		test_fail(__FILE__, __LINE__,
			  "expect_loader=uboot, but /chosen has no u-boot,version");
		return;
	}
	if (want && !strcmp(want, "opensbi") && version) {
		test_fail(__FILE__, __LINE__,
			  "expect_loader=opensbi, but U-Boot %s started the kernel", version);
		return;
	}
	if (!version) {
		test_skip("no /chosen u-boot,version: not started by U-Boot");
		return;
	}
	u32 hartid;
	ASSERT_EQ(fdt_prop_u32(&fdt, chosen, "boot-hartid", &hartid), 0);
	printk("# boot_loader: started by U-Boot %s on hart %u\n", version, hartid);
	/* U-Boot's claim and the a0 the kernel booted with must name the same hart. */
	EXPECT_EQ(hartid, boot_info.cpus[boot_info.boot_cpu].hwid);
}

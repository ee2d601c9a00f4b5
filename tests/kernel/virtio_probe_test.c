/*
 * Selftests for finding virtio devices: the FDT scan's virtio-mmio slots against the
 * device tree QEMU dumped on the host (tests/run passes expect_virtio_mmio=N, the
 * count dtc found), and PCI enumeration's view of the modern virtio-net function.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/fdt.h>
#include <grace/pci.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/virtio.h>
#include <asm/memory.h>

#define VIRTIO_MMIO_MIN_SIZE 0x200 /* virtio_mmio.c's: registers and some config space */

TEST(virtio_probe, dt_virtio_mmio_slots_match_the_host)
{
	const char *v = cmdline_get("expect_virtio_mmio");
	u64 want;
	if (!v || parse_u64(v, &want)) {
		test_skip("no expect_virtio_mmio= (a device-tree machine booted by tests/run)");
		return;
	}
	static struct fdt_machine m;
	struct fdt fdt;
	ASSERT_EQ(fdt_open(&fdt, boot_info.fw_blob, boot_info.fw_blob_size), 0);
	ASSERT_EQ(fdt_scan_machine(&fdt, boot_info.cpus[boot_info.boot_cpu].hwid, &m), 0);
	EXPECT_EQ(m.nr_virtio_mmio, want);
	ASSERT_EQ(m.nr_virtio_mmio, boot_info.nr_virtio_mmio);
	for (unsigned i = 0; i < m.nr_virtio_mmio; i++) {
		const struct mmio_device_desc *d = &m.virtio_mmio[i];
		/*
		 * With one PLIC QEMU wires every slot to it, so no line may have been dropped;
		 * with one per socket the slots are on the second, whose lines plic.c does
		 * not deliver, so every line must have been dropped (the device is polled).
		 */
		if (m.nr_plics == 1)
			EXPECT_NE(d->irq, 0);
		else
			EXPECT_EQ(d->irq, 0);
		EXPECT_GE(d->size, VIRTIO_MMIO_MIN_SIZE);
		EXPECT_EQ(d->base, boot_info.virtio_mmio[i].base);
		EXPECT_EQ(d->irq, boot_info.virtio_mmio[i].irq);
		for (unsigned j = 0; j < i; j++)
			EXPECT_NE(d->base, m.virtio_mmio[j].base);
	}
}

TEST(virtio_probe, pci_finds_the_modern_virtio_net_function)
{
	unsigned n = pci_scan();
	if (n == 0) {
		test_skip("no PCI configuration access on this machine");
		return;
	}
	const struct pci_dev *net = NULL;
	for (unsigned i = 0; i < n; i++) {
		const struct pci_dev *d = pci_device(i);
		EXPECT_NE(d->vendor, 0xffff);
		if (d->vendor == 0x1af4 && d->device == 0x1040 + VIRTIO_ID_NET)
			net = d;
	}
	if (!net) {
		test_skip("no modern virtio-net PCI function (QEMU without disable-legacy=on?)");
		return;
	}
	/* The capability list holds the vendor structures virtio_pci.c maps. */
	EXPECT_NE(pci_find_capability(net, PCI_CAP_ID_VNDR, 0), 0);
	bool mem_bar = false;
	for (unsigned b = 0; b < PCI_NUM_BARS; b++)
		mem_bar |= net->bar[b] && net->bar_size[b] >= PAGE_SIZE &&
			   !(net->bar_size[b] & (net->bar_size[b] - 1));
	EXPECT_TRUE(mem_bar);
	EXPECT_NE(net->irq_pin, 0);
	EXPECT_GT(net->irq_line, 0);
	EXPECT_LT(net->irq_line, 16); /* an ISA IRQ: what SeaBIOS routes PCI lines to */
	EXPECT_TRUE(pci_read16(net, PCI_COMMAND) & PCI_COMMAND_MASTER);
}

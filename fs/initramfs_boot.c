/*
 * The boot-time initramfs: the archive the boot loader left in memory (found by
 * the arch's discovery code: the device tree's /chosen linux,initrd-start and
 * -end on riscv64, the first multiboot2 module on x86_64), reserved from the
 * page allocator until now, is unpacked into "/" and its pages are then given
 * to the buddy allocator, as Linux frees the initrd after unpacking.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/initramfs.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/sched.h>

struct initramfs_boot initramfs_boot;

static u64 managed_pages(void)
{
	u64 pages = 0;
	for (unsigned n = 0; n < MAX_NODES; n++)
		pages += node_managed_pages((int)n);
	return pages;
}

void initramfs_init(void)
{
	struct initramfs_boot *b = &initramfs_boot;
	if (!boot_info.initrd_end)
		return;
	b->present = true;
	b->start = boot_info.initrd_start;
	b->end = boot_info.initrd_end;
	int err = initramfs_unpack(phys_to_virt(b->start), b->end - b->start, "/", &b->report);
	/* The boot context keeps no descriptors or directory of its own past this. */
	fs_task_exit(current);
	b->managed_before = managed_pages();
	b->pages_freed = free_boot_range(b->start, b->end);
	printk("initramfs: %llu bytes at %llx: %lu members, %lu skipped%s; %llu KiB freed\n",
	       (unsigned long long)(b->end - b->start), (unsigned long long)b->start,
	       b->report.entries, b->report.skipped,
	       err == -EINVAL ? ", stopped at an error"
	       : err	      ? ", not unpacked"
			      : "",
	       (unsigned long long)(b->pages_freed << PAGE_SHIFT >> 10));
	if (err && err != -EINVAL)
		pr_err("initramfs: cannot unpack into /: %s\n", strerror(err));
}

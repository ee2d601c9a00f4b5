/*
 * The spinlock_delay shell command: the boot argument spinlock_delay= at run time
 * (kernel/locking/spinlock.c, spin_delay_set_single()).
 */
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/spinlock.h>
#include <grace/string.h>

SHELL_CMD(spinlock_delay, "[hashed|single]",
	  "show or set the backoff delays: one per hashed lock address, or one per CPU")
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "hashed") && strcmp(argv[1], "single")))
		return SHELL_USAGE;
	if (argc == 2)
		spin_delay_set_single(!strcmp(argv[1], "single"));
	printk("spinlock_delay: %s\n", READ_ONCE(spinlock_delay_single) ? "single" : "hashed");
	return 0;
}

/*
 * The power-off devices of the machines Grace runs on under QEMU (drivers/power/).
 * Each returns only if the device is absent or ignored the write; arch_shutdown()
 * then falls back to the firmware or halts.
 */
#ifndef GRACE_POWEROFF_H
#define GRACE_POWEROFF_H

#include <grace/fdt.h>

/* sifive,test (RISC-V): map the device the DT described; false if there is none. */
bool sifive_test_init(const struct fdt_mmio *dev);
/* Exit status 0 passes, 1..255 is QEMU's exit status, anything else becomes 1. */
void sifive_test_poweroff(int status);

/* isa-debug-exit (PC): QEMU exits 33 for status 0, 35 for any other. */
void isa_debug_exit(int status);

#endif

/*
 * QEMU's isa-debug-exit device on the PC (-device isa-debug-exit,iobase=0xf4,
 * iosize=0x04, added by scripts/qemu/x86_64.sh): writing v to port 0xf4 makes
 * QEMU exit with status (v << 1) | 1:
 *   EXIT_SUCCESS_VALUE 0x10 -> QEMU exit status 33: success
 *   EXIT_FAILURE_VALUE 0x11 -> QEMU exit status 35: failure (a test failed, a panic)
 * Any other status (0 after a triple fault with -no-reboot, 1 for a QEMU error)
 * means the kernel did not get here. Without the device (real hardware) the
 * write does nothing.
 */
#include <grace/poweroff.h>
#include <asm/io.h>

#define DEBUG_EXIT_PORT 0xf4
#define EXIT_SUCCESS_VALUE 0x10
#define EXIT_FAILURE_VALUE 0x11

void isa_debug_exit(int status)
{
	outl(DEBUG_EXIT_PORT, status == 0 ? EXIT_SUCCESS_VALUE : EXIT_FAILURE_VALUE);
}

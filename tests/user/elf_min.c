/*
 * The smallest static program the ELF loader's selftests load: a read-only
 * string, initialised data bigger than a page, and a bss of a few pages whose
 * start shares a page with the data's end. Built with -nostdlib, once as
 * ET_EXEC and once as static-pie ET_DYN; its code uses no absolute address, so
 * the PIE runs without relocation. It spins: nothing runs it yet.
 */
static const char message[] = "hello from a static ELF\n";
unsigned long counter = 0x1122334455667788UL;
char pattern[5000] = {1, 2, 3, 4, 5, 6, 7, 8};
static char zeros[3 * 4096 + 123];

void _start(void)
{
	for (;;) {
		zeros[counter % sizeof(zeros)]++;
		counter +=
		    (unsigned long)message[counter & 15] + (unsigned long)pattern[counter & 1023];
	}
}

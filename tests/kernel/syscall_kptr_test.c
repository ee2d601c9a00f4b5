/*
 * Kernel addresses handed to system calls as user pointers (suite syscall_kptr).
 * An unmapped user address is no test of a range check: a copy without one
 * still faults there and still returns EFAULT. A mapped kernel address is: a
 * copy that skips access_ok() reads or writes the kernel.
 *
 * From the registry's record of every call of this arch (syscall_meta(): the
 * argument types of its SYSCALL_DEFINEn), the test lists each call with a user
 * pointer among its arguments and has tests/user/kptr.c (linked into the test
 * image) make it, one pointer argument at a time, with an unmapped address and
 * with two kernel addresses of a buffer here: through the kernel image and
 * through the direct map. The program reports a call that does not give EFAULT
 * (or the error the unmapped address gave, where the call fails before it
 * looks at the pointer); then the whole buffer, the target page and a canary
 * page either side, must be as it was filled.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/slab.h>
#include <grace/printk.h>
#include <grace/process.h>
#include <grace/string.h>
#include <grace/syscall.h>
#include <grace/test.h>
#include <asm/memory.h>
#include <asm/unistd.h>

#include "tests/bench/user_prog.h"

#define KPTR_PROGRAM "/bin/kptr"
#define KPTR_FILL 0xa5
#define KPTR_ARGS_MAX 256

extern const char kptr_start[], kptr_end[];

/* The target page in the middle, a canary page either side. Written only through those addresses.
 */
static u8 kptr_area[3 * PAGE_SIZE] __aligned(PAGE_SIZE);

/*
 * Calls that may not be made with junk, though they take pointers: execve would
 * replace the program where its pointers are good, and rt_sigsuspend waits for a
 * signal once its mask is read. (exit, clone and rt_sigreturn take no pointer
 * the registry knows of, so they are not listed at all.)
 */
static const char *const kptr_skipped[] = {"execve", "rt_sigsuspend"};

static bool kptr_skip(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(kptr_skipped); i++)
		if (!strcmp(name, kptr_skipped[i]))
			return true;
	return false;
}

TEST(syscall_kptr, kernel_addresses_are_refused_and_nothing_is_written)
{
	static char *argv[KPTR_ARGS_MAX]; /* too big for the stack; one test runs at a time */
	char *envp[] = {NULL};
	unsigned argc = 0;
	char *strings = kzalloc(KPTR_ARGS_MAX * 48);
	ASSERT_TRUE(strings);
	char *s = strings;

	memset(kptr_area, KPTR_FILL, sizeof(kptr_area));
	void *image = kptr_area + PAGE_SIZE;
	void *direct = phys_to_virt(virt_to_phys(image));
	argv[argc++] = KPTR_PROGRAM;
	argv[argc++] = s;
	s += snprintf(s, 48, "%lx,%lx", (unsigned long)image, (unsigned long)direct) + 1;
	unsigned listed = 0;
	for (unsigned nr = 0; nr < NR_SYSCALLS && argc < KPTR_ARGS_MAX - 1; nr++) {
		const struct syscall_meta *m = syscall_meta(nr);
		unsigned mask = 0;
		for (unsigned i = 0; m && i < m->nargs; i++)
			mask |= m->user_ptr[i] ? 1u << i : 0;
		if (!mask || kptr_skip(m->name))
			continue;
		argv[argc++] = s;
		s += snprintf(s, 48, "%u:%x:%s", nr, mask, m->name) + 1;
		listed++;
	}
	argv[argc] = NULL;
	EXPECT_GT(listed, 30u); /* the registry's pointer records are there at all */

	int err = bench_user_install(KPTR_PROGRAM, kptr_start, kptr_end);
	ASSERT_EQ(err, 0);
	struct process *p = proc_spawn(KPTR_PROGRAM, argv, envp, &err);
	ASSERT_TRUE(p);
	int status = proc_wait(p);
	EXPECT_EQ(status, 0); /* (calls it reported) << 8, or the signal that ended it */

	unsigned changed = 0, first = 0;
	for (unsigned i = 0; i < sizeof(kptr_area); i++)
		if (kptr_area[i] != KPTR_FILL && !changed++)
			first = i;
	if (changed)
		pr_info(
		    "# syscall_kptr: %u bytes of the kernel buffer written, the first at page %u "
		    "offset %u\n",
		    changed, first / (unsigned)PAGE_SIZE, first % (unsigned)PAGE_SIZE);
	EXPECT_EQ(changed, 0u);
	vfs_unlink(KPTR_PROGRAM);
	kfree(strings);
}

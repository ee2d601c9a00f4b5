/*
 * /dev/bench_mark, the profiler's channel as a file: a well-formed message
 * reaches the channel byte by byte as the kernel's own marks do, and anything
 * else is refused with nothing sent.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>

extern volatile u8 bench_mark_channel[256];

static void channel_clear(void)
{
	for (unsigned b = 0; b < 256; b++)
		bench_mark_channel[b] = 0;
}

static bool channel_empty(void)
{
	for (unsigned b = 0; b < 256; b++)
		if (bench_mark_channel[b])
			return false;
	return true;
}

/* Were exactly the bytes of msg and its NUL stored to the channel? */
static bool channel_holds(const char *msg)
{
	bool want[256] = {[0] = true};
	for (const char *p = msg; *p; p++)
		want[(u8)*p] = true;
	for (unsigned b = 0; b < 256; b++)
		if (!!bench_mark_channel[b] != want[b])
			return false;
	return true;
}

static long mark(int fd, const char *msg)
{
	return vfs_write(fd, msg, strlen(msg));
}

TEST(bench_mark, messages_reach_the_channel_and_bad_ones_are_refused)
{
	char big[200], too_many[32];
	int fd = vfs_open("/dev/bench_mark", O_WRONLY, 0);
	ASSERT_GE(fd, 0);

	/* The first phase of a boot sends each CPU's per-CPU base ahead of its begin. */
	EXPECT_EQ(mark(fd, "begin t/first 1"), 15);
	EXPECT_EQ(mark(fd, "end 0"), 5);
	channel_clear();
	EXPECT_EQ(mark(fd, "begin t/x 1\n"), 12);
	EXPECT_TRUE(channel_holds("begin t/x 1"));
	channel_clear();
	EXPECT_EQ(mark(fd, "end 42"), 6);
	EXPECT_TRUE(channel_holds("end 42"));

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(too_many, sizeof(too_many), "begin t %u", num_online_cpus() + 1);
	const char *bad[] = {"percpu 0 0", "pause",	"end",	  "end x", "end 1 2", "begin t",
			     "begin  1",   "begin t 0", too_many, big,	   "\n"};
	channel_clear();
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(mark(fd, bad[i]), -EINVAL);
	EXPECT_TRUE(channel_empty());
	EXPECT_EQ(vfs_close(fd), 0);
}

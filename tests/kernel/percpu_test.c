/* Selftests for the per-CPU section's layout (grace/percpu.h). */
#include <grace/compiler.h>
#include <grace/cpumask.h>
#include <grace/percpu.h>
#include <grace/test.h>

/* Defined next to each other: the compiler would put them on one line if it could. */
static DEFINE_PER_CPU_ALIGNED(u8, percpu_test_aligned);
static DEFINE_PER_CPU(u8, percpu_test_plain);

static uintptr_t percpu_line(const void *p)
{
	return (uintptr_t)p / CACHE_LINE_SIZE;
}

/*
 * An aligned variable shares its lines with no plain one: the aligned ones come
 * after every plain one, from a line boundary, and the section ends on one.
 */
TEST(percpu, aligned_variables_share_no_line_with_plain_ones)
{
	uintptr_t start = (uintptr_t)__percpu_aligned_start;
	EXPECT_EQ(start % CACHE_LINE_SIZE, 0);
	EXPECT_EQ((uintptr_t)__percpu_end % CACHE_LINE_SIZE, 0);
	EXPECT_GE((uintptr_t)&percpu_test_aligned, start);
	EXPECT_LT((uintptr_t)&percpu_test_plain, start);
	EXPECT_NE(percpu_line(&percpu_test_aligned), percpu_line(&percpu_test_plain));
	/* Each CPU's copy keeps the layout: it is the section moved by a multiple of a line. */
	unsigned cpu;
	for_each_online_cpu(cpu)
		EXPECT_NE(percpu_line(per_cpu_ptr(&percpu_test_aligned, cpu)),
			  percpu_line(per_cpu_ptr(&percpu_test_plain, cpu)));
}

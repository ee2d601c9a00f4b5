/* Reading the host runner's expect_* command-line values (see host_expect.h). */
#include <grace/cmdline.h>
#include <grace/string.h>
#include <grace/test.h>

#include "host_expect.h"

static bool expect_u64(const char *key, u64 *out)
{
	const char *v = cmdline_get(key);
	return v && parse_u64(v, out) == 0;
}

/* "0-3,8" into ascending ids; false on anything else. */
static bool expect_id_list(const char *s, struct host_expect *e)
{
	char word[24];
	e->nr_hwids = 0;
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		if (n == 0 || n >= sizeof(word))
			return false;
		memcpy(word, s, n);
		word[n] = '\0';
		s += n + (s[n] == ',');
		char *dash = strchr(word, '-');
		u64 lo, hi;
		if (dash)
			*dash = '\0';
		if (parse_u64(word, &lo) || (dash ? parse_u64(dash + 1, &hi) : (hi = lo, 0)) ||
		    hi < lo)
			return false;
		for (u64 id = lo; id <= hi; id++) {
			if (e->nr_hwids == MAX_CPUS ||
			    (e->nr_hwids && id <= e->hwids[e->nr_hwids - 1]))
				return false;
			e->hwids[e->nr_hwids++] = (u32)id;
		}
	}
	return e->nr_hwids > 0;
}

bool host_expect_get(struct host_expect *e)
{
	u64 cpus, mib, nodes;
	const char *ids = cmdline_get("expect_hwids");
	if (!expect_u64("expect_cpus", &cpus) || !expect_u64("expect_mem_mib", &mib) ||
	    !expect_u64("expect_nodes", &nodes) || !ids) {
		test_skip("no expect_* values on the command line (tests/run passes them)");
		return false;
	}
	if (!expect_id_list(ids, e) || e->nr_hwids != cpus) {
		test_fail(__FILE__, __LINE__, "expect_hwids='%s' is not %llu ascending ids", ids,
			  (unsigned long long)cpus);
		return false;
	}
	e->cpus = (unsigned)cpus;
	e->mem_bytes = mib << 20;
	e->nodes = (unsigned)nodes;
	return true;
}

bool host_expect_has_hwid(const struct host_expect *e, u32 hwid)
{
	for (unsigned i = 0; i < e->nr_hwids; i++)
		if (e->hwids[i] == hwid)
			return true;
	return false;
}

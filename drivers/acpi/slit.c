/*
 * The SLIT (System Locality Information Table): the relative distance between
 * every two proximity domains, an N x N byte matrix after a u64 N, with 10 meaning
 * local. Only the first ACPI_MAX_LOCALITIES rows and columns are kept; numa_init()
 * checks the values against its rules once domains are mapped to nodes.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define SLIT_COUNT_OFF ACPI_HEADER_LEN
#define SLIT_MATRIX_OFF (ACPI_HEADER_LEN + 8)

int acpi_parse_slit(const u8 *t, u32 len, struct acpi_info *out)
{
	if (len < SLIT_MATRIX_OFF) {
		pr_err("acpi: SLIT of %u bytes is too short\n", len);
		return -EINVAL;
	}
	u64 n = get_unaligned_u64(t + SLIT_COUNT_OFF);
	if (n == 0 || n > 0xffff || n * n > len - SLIT_MATRIX_OFF) {
		pr_err("acpi: SLIT claims %llu localities in %u bytes\n", (unsigned long long)n,
		       len);
		return -EINVAL;
	}
	unsigned keep = n < ACPI_MAX_LOCALITIES ? (unsigned)n : ACPI_MAX_LOCALITIES;
	for (unsigned i = 0; i < keep; i++)
		for (unsigned j = 0; j < keep; j++)
			out->slit[i][j] = t[SLIT_MATRIX_OFF + i * n + j];
	out->slit_localities = keep;
	return 0;
}

/*
 * IPv4 options on receive (RFC 791 section 3.1, RFC 1122 3.2.1.8), checked the
 * way Linux's __ip_options_compile() checks a received header, and with its
 * defaults for what follows.
 *
 * An option is one byte (End of Option List, No Operation) or a type, a length
 * that counts both and the data. A length below 2 or running past the header, a
 * Record Route, Timestamp or source route too short for its pointer or with a
 * pointer that does not fit, a second one of those, or a Router Alert under 4
 * bytes makes the header malformed: dropped (DROP_IP_OPTIONS). Anything after
 * End of Option List is padding. Options that parse are taken but not acted on:
 * a host is the datagram's last hop, so there is nothing to record or forward,
 * and unknown ones are ignored, as RFC 1122 3.2.1.8 asks. A source route is
 * refused (DROP_IP_SOURCE_ROUTE): Linux's accept_source_route is 0 for "all",
 * and a datagram's way back is the route's, never one the sender chose.
 *
 * Linux also answers a malformed header with an ICMP Parameter Problem
 * (RFC 1122 3.2.2.5, a SHOULD); Grace sends no ICMP errors.
 */
#include <grace/inet.h>

#include "ip.h"

#define IPOPT_END 0
#define IPOPT_NOOP 1
#define IPOPT_RR 7
#define IPOPT_TIMESTAMP 68
#define IPOPT_LSRR 131
#define IPOPT_SSRR 137
#define IPOPT_RA 148

/* Timestamp flags (the low nibble of its fourth byte). */
#define IPOPT_TS_TSANDADDR 1
#define IPOPT_TS_PRESPEC 3

/* A Timestamp option's length and pointer (RFC 791, Linux's checks). */
static bool ip_ts_ok(const u8 *o, u32 len)
{
	u32 ptr;
	u8 flag;

	if (len < 4)
		return false;
	ptr = o[2];
	flag = o[3] & 0xf;
	if (ptr < 5)
		return false;
	if (ptr <= len) /* room left: the next entry must fit (an unknown flag is let be) */
		return ptr + 3 <= len &&
		       !((flag == IPOPT_TS_TSANDADDR || flag == IPOPT_TS_PRESPEC) && ptr + 7 > len);
	/* Full: the overflow count (the high nibble) must not have run out. */
	return flag == IPOPT_TS_PRESPEC || o[3] >> 4 != 15;
}

enum inet_drop ip_options_check(const u8 *opt, u32 len)
{
	bool rr = false, ts = false, srr = false;

	while (len) {
		u8 type = opt[0];
		u32 olen;

		if (type == IPOPT_END)
			break; /* the rest is padding */
		if (type == IPOPT_NOOP) {
			opt++;
			len--;
			continue;
		}
		if (len < 2)
			return DROP_IP_OPTIONS;
		olen = opt[1];
		if (olen < 2 || olen > len)
			return DROP_IP_OPTIONS;
		switch (type) {
		case IPOPT_RR:
			if (rr || olen < 3 || opt[2] < 4 || (opt[2] <= olen && opt[2] + 3u > olen))
				return DROP_IP_OPTIONS;
			rr = true;
			break;
		case IPOPT_LSRR:
		case IPOPT_SSRR:
			if (srr || olen < 3 || opt[2] < 4)
				return DROP_IP_OPTIONS;
			srr = true;
			break;
		case IPOPT_TIMESTAMP:
			if (ts || !ip_ts_ok(opt, olen))
				return DROP_IP_OPTIONS;
			ts = true;
			break;
		case IPOPT_RA:
			if (olen < 4)
				return DROP_IP_OPTIONS;
			break;
		default: /* security, stream id, anything unknown: ignored */
			break;
		}
		opt += olen;
		len -= olen;
	}
	return srr ? DROP_IP_SOURCE_ROUTE : NR_INET_DROPS;
}

/*
 * The Internet checksum (RFC 1071): the ones' complement of the ones' complement
 * sum of the 16-bit words, the last byte of an odd length padded with a zero.
 *
 * The sum is taken over words as they lie in memory, in the CPU's byte order,
 * not in network order: ones' complement addition is the same in either order
 * (RFC 1071 section 2(B)), so a sum of byte-swapped words is the byte-swapped
 * sum, and storing the folded result back as a native u16 puts its bytes in
 * network order again. Only the odd last byte needs the order: it is the high
 * byte of its word on the wire, so in memory it comes first, which is the low
 * half of a little-endian load and the high half of a big-endian one.
 *
 * The words are read a byte at a time: a header after the 14-byte Ethernet
 * header is only 2-aligned, and a test may checksum from any address; RISC-V
 * traps on a misaligned load.
 */
#include <grace/inet.h>

/* Add carries back in until the sum fits 16 bits (the "end-around carry"). */
static u32 csum_fold16(u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u32)sum;
}

u32 csum_partial(const void *data, size_t len, u32 sum)
{
	const u8 *p = data;
	u64 acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		acc += (u32)p[i] | (u32)p[i + 1] << 8;
#else
		acc += (u32)p[i] << 8 | (u32)p[i + 1];
#endif
	}
	if (len & 1) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		acc += p[len - 1];
#else
		acc += (u32)p[len - 1] << 8;
#endif
	}
	/* 2^48 words would overflow acc; an skb holds 2048 bytes. */
	return csum_fold16(acc);
}

u16 csum_fold(u32 sum)
{
	return (u16)~csum_fold16(sum);
}

/*
 * RFC 768's pseudo-header: source and destination addresses, a zero byte and
 * the protocol, and the UDP length. The addresses are in network order in
 * memory like the packet's words, so their halves add as they are; the
 * protocol and length are host numbers and go in byte-swapped to match.
 */
u16 udp_checksum(u32 saddr, u32 daddr, const void *udp, size_t len)
{
	u32 sum = (saddr >> 16) + (saddr & 0xffff) + (daddr >> 16) + (daddr & 0xffff) +
		  htons(IPPROTO_UDP) + htons((u16)len);
	return csum_fold(csum_partial(udp, len, sum));
}

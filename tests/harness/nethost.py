"""The network checked from the host: raw frames into a second NIC, UDP load through the first.

tests/run boots the test image to its shell with a second virtio-net device on QEMU's
`-netdev dgram` (QEMU 7.2): its frames are UDP datagrams between two ports on
127.0.0.1, so this file plays the wire and a peer at PEER_IP/PEER_MAC on it. The guest
gives that device (eth1) GUEST_IP from the boot argument eth1=GUEST_IP/24.

1. Frames: a valid ARP request and echo requests, whose replies must be the bytes
   computed here (the IP identification is the guest's to choose: it is taken from the
   reply, then everything else must match); then malformed frames of many kinds and echo
   requests from martian sources, each kind a known number of times. The guest's
   counters (`netstat`, `ifconfig eth1`, read at the prompt before and after) must have
   moved by exactly what was sent: one drop reason per kind, nothing answered but the
   valid requests.
2. Load: LOAD_DATAGRAMS datagrams to the forwarded echo port (QEMU's user networking,
   hostfwd to the guest's port 7), as fast as the host sends them. Every one that
   reached eth0 was echoed or dropped under a guest counter (eth0 rx == tx + drops);
   what never reached eth0, or left it and never came back, was lost inside the host's
   QEMU, and is reported apart.
Every address used is on 127.0.0.1.

HostNet, at the end, is the host's side of the test boot's own network tests
(tests/kernel/virtio_net_test.c): a listener the kernel sends to through QEMU's user
networking, and the check of the guest's echo service through the forwarded port.
"""
import socket
import struct
import threading
import time

from . import kmsg
from .launcher import free_udp_port

GUEST_MAC = bytes.fromhex("525400000102")
GUEST_IP = bytes([10, 0, 3, 15])
PEER_MAC = bytes.fromhex("020000000302")
PEER_IP = bytes([10, 0, 3, 2])
BOOT_ARG = "eth1=10.0.3.15/24"
LOAD_DATAGRAMS = 2000
EACH = 10           # frames of each malformed kind
PINGS = 5
REPLY_WAIT_S = 3


def qemu_flags(arch, local_port, remote_port):
    """The second NIC: frames to and from 127.0.0.1:remote_port, QEMU on local_port."""
    dev = {"riscv64": "virtio-net-device", "x86_64": "virtio-net-pci,disable-legacy=on,romfile="}[arch]
    return (f"-netdev dgram,id=net1,local.type=inet,local.host=127.0.0.1,local.port={local_port},"
            f"remote.type=inet,remote.host=127.0.0.1,remote.port={remote_port} "
            f"-device {dev},netdev=net1,mac={':'.join(f'{b:02x}' for b in GUEST_MAC)}")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(dst, src, proto, payload):
    return dst + src + struct.pack("!H", proto) + payload


def ip(src, dst, proto, payload, ident=1, ttl=64, ihl_version=None, tot_len=None, frag=0,
       check=None, opts=b""):
    """An IPv4 packet; opts (a multiple of 4 bytes) go after the 20-byte header, in its checksum."""
    ihl_version = ihl_version or 0x45 + len(opts) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", ihl_version, 0, tot_len or 20 + len(opts) + len(payload),
                      ident, frag, ttl, proto, 0, src, dst) + opts
    c = csum(hdr) if check is None else check
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def icmp_echo(kind, ident, seq, data):
    body = struct.pack("!BBHHH", kind, 0, 0, ident, seq) + data
    return body[:2] + struct.pack("!H", csum(body)) + body[4:]


def udp(src, dst, sport, dport, data, good=True):
    u = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    c = csum(src + dst + struct.pack("!BBH", 0, 17, len(u)) + u) or 0xffff
    return u[:6] + struct.pack("!H", c if good else c ^ 0x5a5a) + u[8:]


def arp(op, sha, sip, tha, tip):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, sip, tha, tip)


def to_guest(l3, proto=0x0800, src_mac=PEER_MAC):
    return eth(GUEST_MAC, src_mac, proto, l3)


def ping(src, seq):
    return to_guest(ip(src, GUEST_IP, 1, icmp_echo(8, 0x4e48, seq, bytes(range(56))), ident=seq))


def malformed():
    """(frame, drop reason netstat names) for each kind, as a peer on the wire would send."""
    good_ip = ip(PEER_IP, GUEST_IP, 17, udp(PEER_IP, GUEST_IP, 4000, 7, b"x" * 18))
    bad_csum = bytearray(good_ip)
    bad_csum[10] ^= 0xff
    short_icmp = ip(PEER_IP, GUEST_IP, 1, b"\x08\x00\xf7")
    bad_icmp = bytearray(ip(PEER_IP, GUEST_IP, 1, icmp_echo(8, 1, 1, b"abcd")))
    bad_icmp[-1] ^= 1
    record_route = ip(PEER_IP, GUEST_IP, 17, udp(PEER_IP, GUEST_IP, 4000, 7, b"o" * 18),
                      opts=bytes([7, 7, 4, 0, 0, 0, 0, 0]))
    bad_option_byte = bytearray(record_route)
    bad_option_byte[24] ^= 0x5a  # in the option, after the checksum was taken over it
    subnet_bcast = GUEST_IP[:3] + b"\xff"
    kinds = [
        (bytes(10), "eth_short"),
        (eth(GUEST_MAC, PEER_MAC, 0x86dd, bytes(46)), "eth_proto"),
        (to_guest(good_ip[:12]), "ip_short"),
        (to_guest(bytes([0x65]) + good_ip[1:]), "ip_version"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, bytes(26), ihl_version=0x44)), "ip_hdr_len"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, bytes(26), tot_len=900)), "ip_len"),
        (to_guest(bytes(bad_csum)), "ip_csum"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, bytes(26), frag=0x2000)), "ip_fragment"),
        (to_guest(ip(PEER_IP, bytes([10, 0, 3, 99]), 17, bytes(26))), "ip_not_ours"),
        (to_guest(ip(PEER_IP, GUEST_IP, 6, bytes(26))), "ip_proto"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, udp(PEER_IP, GUEST_IP, 4000, 7, b"y" * 18, good=False))),
         "udp_csum"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, udp(PEER_IP, GUEST_IP, 4000, 9, b"z" * 18))), "udp_no_port"),
        (to_guest(short_icmp), "icmp_short"),
        (to_guest(bytes(bad_icmp)), "icmp_csum"),
        (to_guest(arp(1, bytes(6) + b"", PEER_IP, bytes(6), GUEST_IP)[:20], 0x0806), "arp_short"),
        (to_guest(arp(1, b"\xff" * 6, PEER_IP, bytes(6), GUEST_IP), 0x0806), "arp_bad_sha"),
        (to_guest(bytes(bad_option_byte)), "ip_csum"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, bytes(26), opts=bytes([7, 12, 4, 0]))), "ip_options"),
        (to_guest(ip(PEER_IP, GUEST_IP, 17, bytes(26), opts=bytes([131, 7, 4, 10, 0, 3, 1, 0]))),
         "ip_source_route"),
        (to_guest(ip(PEER_IP, b"\xff" * 4, 1, icmp_echo(8, 0x4e48, 98, bytes(8)))), "icmp_broadcast"),
        (to_guest(ip(PEER_IP, subnet_bcast, 1, icmp_echo(8, 0x4e48, 97, bytes(8)))), "icmp_broadcast"),
        (eth(bytes.fromhex("525400000199"), PEER_MAC, 0x0800, good_ip), "eth_otherhost"),
    ]
    for src in ([255] * 4, [224, 0, 0, 9], [0] * 4, [127, 0, 0, 1]):
        kinds.append((ping(bytes(src), 99), "ip_martian_src"))
    return kinds


def counters(con, deadline):
    """netstat's and `ifconfig eth0`/`eth1`'s numbers, as {"drop ip_csum": n, "eth1 rx packets": n}."""
    out = {}
    for cmd in ("netstat", "ifconfig eth0", "ifconfig eth1"):
        out_text, seen = con.command(cmd, deadline)
        if out_text is None:
            raise RuntimeError(f"no prompt after {cmd}: {seen[-200:]!r}")
        dev = cmd.split()[1] if " " in cmd else ""
        for line in out_text.replace("\r", "").split("\n"):
            words = kmsg.strip_time(line).split()
            if not words:
                continue
            if words[0] == "drop":
                k, v = words[1].split("=")
                out["drop " + k] = int(v)
            elif words[0] == "ip":
                for w in words[1:]:
                    k, v = w.split("=")
                    out["ip " + k] = int(v)
            elif words[0] == "udp" and words[1] == "port=7":
                out["udp7 drops"] = int(words[3].split("=")[1])
            elif dev and words[0] in ("rx", "tx", "qdisc=pfifo"):
                for w in words[1:]:
                    if "=" in w:
                        k, v = w.split("=")
                        if v.isdigit():
                            out[f"{dev} {words[0].split('=')[0]} {k}"] = int(v)
    return out


def delta(a, b, key):
    return b.get(key, 0) - a.get(key, 0)


def frames_check(con, wire, deadline):
    """Part 1; returns the problems found (empty: passed) and a one-line summary."""
    problems = []
    before = counters(con, deadline)
    wire.sendto(to_guest(arp(1, PEER_MAC, PEER_IP, bytes(6), GUEST_IP), 0x0806), wire.qemu)
    sent = 1
    for seq in range(PINGS):
        wire.sendto(ping(PEER_IP, seq), wire.qemu)
        sent += 1
    kinds = malformed()
    for frame, _ in kinds:
        for _ in range(EACH):
            wire.sendto(frame, wire.qemu)
            sent += 1
            time.sleep(0.0005)   # the guest's 64 receive buffers, refilled by its interrupt
    replies = []
    end = time.monotonic() + REPLY_WAIT_S
    while time.monotonic() < end:
        try:
            replies.append(wire.recv(2048))
        except socket.timeout:
            pass
    after = counters(con, deadline)

    want_arp = eth(PEER_MAC, GUEST_MAC, 0x0806, arp(2, GUEST_MAC, GUEST_IP, PEER_MAC, PEER_IP))
    arps = [r for r in replies if r[12:14] == b"\x08\x06"]
    echoes = [r for r in replies if r[12:14] == b"\x08\x00"]
    if arps != [want_arp]:
        problems.append(f"ARP replies {[a.hex() for a in arps]}, want exactly {want_arp.hex()}")
    for seq in range(PINGS):
        got = [r for r in echoes if len(r) >= 42 and struct.unpack("!H", r[40:42])[0] == seq]
        if len(got) != 1:
            problems.append(f"echo seq {seq}: {len(got)} replies, want 1")
            continue
        ident = struct.unpack("!H", got[0][18:20])[0]
        want = eth(PEER_MAC, GUEST_MAC, 0x0800,
                   ip(GUEST_IP, PEER_IP, 1, icmp_echo(0, 0x4e48, seq, bytes(range(56))), ident=ident))
        if got[0] != want:
            problems.append(f"echo seq {seq}: got {got[0].hex()}, want {want.hex()}")
    if len(replies) != 1 + PINGS:
        problems.append(f"{len(replies)} frames came back, want {1 + PINGS} (one ARP reply, {PINGS} echo replies)")

    want = {}
    for _, reason in kinds:
        want["drop " + reason] = want.get("drop " + reason, 0) + EACH
    for key, n in want.items():
        if delta(before, after, key) != n:
            problems.append(f"{key}: rose by {delta(before, after, key)}, want {n}")
    for key in after:
        if key.startswith("drop ") and key not in want and delta(before, after, key):
            problems.append(f"{key} rose by {delta(before, after, key)}: nothing sent was for it")
    checks = [("eth1 rx packets", sent), ("eth1 rx dropped", 0), ("ip rx_frames", sent),
              ("ip tx_icmp_replies", PINGS), ("ip rx_arp", 1 + 2 * EACH), ("eth1 tx packets", 1 + PINGS)]
    for key, n in checks:
        if delta(before, after, key) != n:
            problems.append(f"{key}: rose by {delta(before, after, key)}, want {n}")
    return problems, f"{sent} frames sent ({len(kinds)} malformed kinds x {EACH}), {len(replies)} replies"


def load_check(con, echo_port, deadline, count=LOAD_DATAGRAMS):
    """Part 2; returns (problems, summary)."""
    before = counters(con, deadline)
    echoed = set()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        # Room for every echo, so the host's own socket buffer is not where they are lost.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        for i in range(count):
            s.sendto(struct.pack("!I", i) + b"grace load" * 8, ("127.0.0.1", echo_port))
            try:
                while True:
                    data = s.recv(2048)
                    echoed.add(struct.unpack("!I", data[:4])[0])
            except BlockingIOError:
                pass
        end = time.monotonic() + REPLY_WAIT_S
        while time.monotonic() < end:
            try:
                data = s.recv(2048)
                echoed.add(struct.unpack("!I", data[:4])[0])
            except BlockingIOError:
                time.sleep(0.01)
    after = counters(con, deadline)
    rx = delta(before, after, "eth0 rx packets")
    tx = delta(before, after, "eth0 tx packets")
    # netstat's own two exchanges are on the console, not eth0; what eth0 took in either
    # left again as an echo or ended under a guest counter.
    drops = sum(delta(before, after, k) for k in after if k.startswith("drop ")) + \
        delta(before, after, "eth0 rx dropped") + delta(before, after, "eth0 tx dropped")
    problems = []
    if rx != tx + drops:
        problems.append(f"eth0 took in {rx} frames, sent {tx} and dropped {drops}: "
                        f"{rx - tx - drops} unaccounted for inside the guest")
    # An ARP exchange (either side asking) is one frame in and one out, both ARP.
    arps = delta(before, after, "ip rx_arp")
    lost_in = count - (rx - arps)
    lost_out = tx - arps - len(echoed)
    where = {k: delta(before, after, k) for k in after
             if k.startswith("drop ") or k.endswith(" dropped") or k == "eth0 qdisc drops"}
    where = ", ".join(f"{k} {v}" for k, v in where.items() if v) or "none"
    summary = (f"{count} datagrams sent, {len(echoed)} echoed; guest: {rx} in, {tx} out, {drops} "
               f"dropped ({where}); lost in host QEMU: {lost_in} before eth0, {lost_out} after")
    if len(echoed) == 0:
        problems.append("no datagram came back")
    return problems, summary


class Wire:
    """The host's end of the dgram NIC: a UDP socket on 127.0.0.1 and QEMU's address."""

    def __init__(self, host_port, qemu_port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", host_port))
        self.sock.settimeout(0.1)
        self.qemu = ("127.0.0.1", qemu_port)

    def sendto(self, frame, addr):
        self.sock.sendto(frame, addr)

    def recv(self, n):
        return self.sock.recv(n)

    def close(self):
        self.sock.close()




# The host's side of the network tests (tests/kernel/virtio_net_test.c): the kernel sends
# HOST_PAYLOAD to the gateway 10.0.2.2:<listener>, which QEMU's user networking delivers
# to 127.0.0.1:<listener> here, and we answer with the same bytes; once the kernel prints
# NET_ECHO_READY we send ECHO_PAYLOAD to the forwarded echo port until it comes back.
HOST_PAYLOAD = b"grace virtio-net to the host"
NET_ECHO_READY = "# virtio_net: echo service ready for the host"
ECHO_PAYLOAD = b"grace echo check from the host"
ECHO_RESEND_S = 0.5
ECHO_GIVE_UP_S = 25


class HostNet:
    """A UDP listener the kernel sends to, and the sender that checks the echo service."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.echo_port = free_udp_port()
        self.received = []          # payloads that reached the listener
        self.echo_ready = False     # the kernel said the echo service waits for us
        self.echo_ok = None         # None: never tried; then whether the echo came back
        self.stop = threading.Event()
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self):
        while not self.stop.is_set():
            try:
                data, addr = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received.append(data)
            self.sock.sendto(data, addr)

    def _echo_check(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(ECHO_RESEND_S)
            deadline = time.monotonic() + ECHO_GIVE_UP_S
            self.echo_ok = False
            while time.monotonic() < deadline and not self.stop.is_set():
                s.sendto(ECHO_PAYLOAD, ("127.0.0.1", self.echo_port))
                try:
                    data, _ = s.recvfrom(2048)
                except socket.timeout:
                    continue
                if data == ECHO_PAYLOAD:
                    self.echo_ok = True
                    return

    def feed(self, line):
        if line.strip() == NET_ECHO_READY and not self.echo_ready:
            self.echo_ready = True
            threading.Thread(target=self._echo_check, daemon=True).start()

    def problems(self, status):
        """What went wrong on the host's side of the tests that ran (skipped ones ask nothing)."""
        out = []
        if status.get("virtio_net.udp_round_trip_through_the_host") == "pass" and \
                HOST_PAYLOAD not in self.received:
            out.append(f"the host listener on 127.0.0.1:{self.port} never got {HOST_PAYLOAD!r}")
        ran_echo = status.get("virtio_net.host_datagrams_reach_the_echo_service") in ("pass", "fail")
        if ran_echo and not self.echo_ready:
            out.append(f"no '{NET_ECHO_READY}' line before the echo test ended")
        elif ran_echo and not self.echo_ok:
            out.append(f"no echo of {ECHO_PAYLOAD!r} from 127.0.0.1:{self.echo_port} (forwarded to the guest's port 7)")
        return out

    def close(self):
        self.stop.set()
        self.sock.close()

#!/bin/sh
# Boot Grace/riscv64 under QEMU: OpenSBI (-bios default, fw_dynamic) loads
# $BUILD/Image at RAM start + 2 MiB and enters it in S-mode.
#
# Environment (all optional): BUILD (build/riscv64, relative to the repo root),
# SMP (8), MEM (512M), NUMA (number of nodes; CPUs and memory split evenly),
# MACHINE (virt, the default, or sifive_u: QEMU's HiFive Unleashed, whose hart 0 is
# an E51 monitor core without an MMU; SMP counts it, so SMP=5 gives four U54 harts),
# CMDLINE (kernel command line, /chosen bootargs), QEMUFLAGS (appended last, e.g.
# "-cpu rv64,sstc=off" or "-machine virt,aclint=on"), GDB (=1: wait for gdb on :1234),
# TESTS (=1: boot $BUILD/Image-test, the kernel with the selftests and benchmarks),
# GRACE_UDP_ECHO_PORT (the host's 127.0.0.1 UDP port forwarded to the guest's echo
# service, 10.0.2.15:7, through QEMU's user networking; unset: 5555 if it is free,
# otherwise a free one, named in the first line printed), BOOT (opensbi, the
# default: OpenSBI enters the kernel; uboot: through U-Boot's distro boot, below),
# DTB (a device tree to boot with instead of QEMU's: given to OpenSBI with -dtb, or
# to U-Boot on the boot disk; it must describe the machine QEMU builds), INITRD (a cpio
# newc archive: QEMU's -initrd loads it and names it in /chosen linux,initrd-start/end),
# FIRMWARE (opensbi, the default: QEMU's OpenSBI; none: no OpenSBI, -bios none, and
# Grace's own M-mode firmware $BUILD/mfw.bin at RAM start, below).
#
# QEMU's exit status: 0 after a clean power-off, the kernel's failure code (1 for
# a failed test, 3 for a panic) through the sifive,test device. The test runner
# still judges from the console: SBI SRST, the fallback, always exits 0, and so
# does sifive_u's reset.
set -e
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-build/riscv64}
SMP=${SMP:-8}
MEM=${MEM:-512M}
if [ "$TESTS" = 1 ]; then
	IMAGE=$BUILD/Image-test
	target=test-image
else
	IMAGE=$BUILD/Image
	target=all
fi

if [ ! -f "$IMAGE" ]; then
	echo "riscv64.sh: $IMAGE not found; run make ARCH=riscv64 $target first" >&2
	exit 1
fi

# MEM in MiB (QEMU's -m: a bare number is MiB), for splitting it between NUMA nodes.
mem_mib() {
	case $1 in
	*[Gg]) echo $(( ${1%?} * 1024 )) ;;
	*[Mm]) echo "${1%?}" ;;
	*) echo "$1" ;;	# a bare number is MiB to QEMU
	esac
}


# BOOT=uboot boots the way a board whose firmware is U-Boot does: OpenSBI enters
# S-mode U-Boot where it would enter the kernel, and U-Boot's distro boot, with no
# key typed, finds extlinux.conf on a virtio disk (scripts/image/riscv64.sh) and
# starts the kernel with booti. The command line reaches the kernel only through
# extlinux.conf's append line, never through -append, so each kernel and command
# line gets its own disk image, cached under $BUILD/uboot/ by a hash of both and
# rebuilt when the kernel is newer. Debian's U-Boot counts down its bootdelay (2 s)
# first. It loads the kernel at 0x84000000 and extlinux.conf and the device tree at
# 0x8c000000 and up, so RAM must reach past them: with 128 MiB U-Boot faults loading
# extlinux.conf; 256 MiB leaves room for U-Boot itself, relocated to the top.
boot_disk=""
case $BOOT in
"" | opensbi) ;;
uboot)
	if [ -n "$INITRD" ]; then
		echo "riscv64.sh: INITRD is given to OpenSBI's boot (BOOT=opensbi), not to U-Boot's disk" >&2
		exit 1
	fi
	uboot_bin=/usr/lib/u-boot/qemu-riscv64_smode/u-boot.bin
	if [ ! -f "$uboot_bin" ]; then
		echo "riscv64.sh: BOOT=uboot needs $uboot_bin (Debian package u-boot-qemu)" >&2
		exit 1
	fi
	if [ "${MACHINE:-virt}" != virt ] || [ "$(mem_mib "$MEM")" -lt 256 ]; then
		echo "riscv64.sh: BOOT=uboot runs Debian's qemu-riscv64_smode U-Boot: MACHINE=virt and MEM of 256M or more" >&2
		exit 1
	fi
	hash=$(printf '%s %s %s' "$IMAGE" "$CMDLINE" "$DTB" | sha1sum | cut -c1-16)
	boot_disk=$BUILD/uboot/$hash.img
	# shellcheck disable=SC3013 # -nt: dash's and bash's test both have it
	if [ ! -f "$boot_disk" ] || [ "$IMAGE" -nt "$boot_disk" ] ||
		{ [ -n "$DTB" ] && [ "$DTB" -nt "$boot_disk" ]; }; then
		KERNEL=$IMAGE OUT=$boot_disk CMDLINE=$CMDLINE DTB=$DTB scripts/image/riscv64.sh >/dev/null
	fi
	DTB=""	# on the disk for U-Boot, which passes it on
	IMAGE=$uboot_bin	# what -kernel loads and OpenSBI enters
	CMDLINE=""	# given to U-Boot's extlinux.conf above, not to QEMU
	;;
*)
	echo "riscv64.sh: BOOT is opensbi or uboot, not '$BOOT'" >&2
	exit 1 ;;
esac

# FIRMWARE=none: QEMU starts every hart at RAM start in M-mode (-bios none). There -kernel
# puts $BUILD/mfw.bin, Grace's M-mode firmware (arch/riscv64/mfw/), and a loader device
# puts the kernel's Image at RAM start + 2 MiB, its header's text_offset, where the
# firmware enters it in S-mode. The Image is the same file OpenSBI boots; -append and
# -initrd still reach /chosen, since -kernel is given.
bios=default
set --
case $FIRMWARE in
"" | opensbi) ;;
none)
	if [ "${MACHINE:-virt}" != virt ] || { [ -n "$BOOT" ] && [ "$BOOT" != opensbi ]; }; then
		echo "riscv64.sh: FIRMWARE=none boots QEMU's virt straight into the kernel: MACHINE=virt, no BOOT=uboot" >&2
		exit 1
	fi
	if [ ! -f "$BUILD/mfw.bin" ]; then
		echo "riscv64.sh: $BUILD/mfw.bin not found; run make ARCH=riscv64 $target first" >&2
		exit 1
	fi
	bios=none
	set -- -device "loader,file=$IMAGE,addr=0x80200000"
	IMAGE=$BUILD/mfw.bin ;;
*)
	echo "riscv64.sh: FIRMWARE is opensbi or none, not '$FIRMWARE'" >&2
	exit 1 ;;
esac

# The host port of the guest's echo service, chosen late (QEMU binds it moments after;
# see scripts/qemu/udp-port), and named in the launcher's one line of its own, so a
# second machine booted beside this one, which gets another port, says where it is.
gdb_note=""
[ "$GDB" = 1 ] && gdb_note="; QEMU waits for gdb on localhost:1234"
if [ "${MACHINE:-virt}" = sifive_u ]; then
	net_line="no network (sifive_u has no virtio-net)"
else
	ECHO_PORT=${GRACE_UDP_ECHO_PORT:-$(scripts/qemu/udp-port 5555)}
	net_line="UDP echo: host 127.0.0.1:$ECHO_PORT -> guest port 7"
fi

# The network: a virtio-net device on one of the virt machine's virtio-mmio slots, behind
# QEMU's user networking (slirp). virtio-mmio is the legacy version 1 unless told
# otherwise; Grace drives only version 2 (virtio 1.x). No IPv6: slirp would send router
# advertisements every few minutes, traffic in the middle of tests that count pages.
case ${MACHINE:-virt} in
virt)
	set -- -machine virt -bios "$bios" -nographic -no-reboot \
		-smp "$SMP" -m "$MEM" -kernel "$IMAGE" "$@" \
		-global virtio-mmio.force-legacy=false \
		-netdev "user,id=net0,ipv6=off,hostfwd=udp:127.0.0.1:$ECHO_PORT-:7" \
		-device virtio-net-device,netdev=net0 ;;
sifive_u)
	# No virtio-mmio slots (its network device is a Cadence GEM, which Grace does not
	# drive), no power-off device, a SiFive UART; QEMU wants 2 to 5 harts.
	if [ "$SMP" -lt 2 ] || [ "$SMP" -gt 5 ] || [ -n "$NUMA" ]; then
		echo "riscv64.sh: MACHINE=sifive_u has 2 to 5 harts (SMP=$SMP) and no NUMA" >&2
		exit 1
	fi
	set -- -machine sifive_u -bios default -nographic -no-reboot \
		-smp "$SMP" -m "$MEM" -kernel "$IMAGE"
	# Its firmware can reset but not power off: a reset ends the run (-no-reboot).
	CMDLINE="poweroff=reset${CMDLINE:+ $CMDLINE}" ;;
*)
	echo "riscv64.sh: MACHINE is virt or sifive_u, not '$MACHINE'" >&2
	exit 1 ;;
esac

if [ -n "$NUMA" ] && [ "$NUMA" -gt 0 ]; then
	if [ "$NUMA" -gt "$SMP" ]; then
		echo "riscv64.sh: NUMA=$NUMA nodes need at least as many CPUs (SMP=$SMP)" >&2
		exit 1
	fi
	total=$(mem_mib "$MEM")
	node=0
	while [ "$node" -lt "$NUMA" ]; do
		# Node i gets CPUs [i*SMP/NUMA, (i+1)*SMP/NUMA), as on x86_64, so counts differ by
		# at most one; the last node takes the memory remainder. (QEMU's riscv virt board
		# refuses a node without harts, hence NUMA <= SMP above.)
		first=$((node * SMP / NUMA))
		next=$(((node + 1) * SMP / NUMA))
		if [ "$node" -eq $((NUMA - 1)) ]; then
			nmem=$((total - total / NUMA * (NUMA - 1)))
		else
			nmem=$((total / NUMA))
		fi
		set -- "$@" -object "memory-backend-ram,id=mem$node,size=${nmem}M" \
			-numa "node,nodeid=$node,cpus=$first-$((next - 1)),memdev=mem$node"
		node=$((node + 1))
	done
	# Distances (the DT /distance-map): a line of nodes, 10 more per hop.
	src=0
	while [ "$src" -lt "$NUMA" ]; do
		dst=$((src + 1))
		while [ "$dst" -lt "$NUMA" ]; do
			set -- "$@" -numa "dist,src=$src,dst=$dst,val=$((10 + 10 * (dst - src)))"
			dst=$((dst + 1))
		done
		src=$((src + 1))
	done
fi

[ -n "$CMDLINE" ] && set -- "$@" -append "$CMDLINE"
[ -n "$DTB" ] && set -- "$@" -dtb "$DTB"
[ -n "$INITRD" ] && set -- "$@" -initrd "$INITRD"
# U-Boot's disk, on a virtio-mmio slot of its own (Grace reports a block device as one
# it has no driver for). Read-only: boots of one configuration share the cached image.
[ -n "$boot_disk" ] && set -- "$@" \
	-drive "file=$boot_disk,format=raw,if=none,id=boot,readonly=on" -device virtio-blk-device,drive=boot
[ "$GDB" = 1 ] && set -- "$@" -s -S

echo "riscv64.sh: ${MACHINE:-virt}, SMP=$SMP, MEM=$MEM${BOOT:+, BOOT=$BOOT}${FIRMWARE:+, FIRMWARE=$FIRMWARE}; $net_line$gdb_note"
# QEMUFLAGS is split into words on purpose: it holds several options.
# shellcheck disable=SC2086
exec qemu-system-riscv64 "$@" $QEMUFLAGS

#!/bin/sh
# Boot Grace/x86_64 under QEMU: SeaBIOS or OVMF -> GRUB (from an ISO) -> multiboot2 kernel.
#
# Environment (all optional): MACHINE (pc: i440FX and PIIX, PCI configuration through
# ports 0xcf8/0xcfc; q35: ICH9 and PCI Express, configuration through ECAM), FIRMWARE
# (bios: SeaBIOS; uefi: OVMF, whose GRUB starts the kernel after ExitBootServices
# with an EFI memory map), BUILD (build/x86_64, relative to the repo root),
# SMP (8), MEM (512M), NUMA (number of nodes; CPUs and memory split evenly),
# CMDLINE (kernel command line), QEMUFLAGS (appended last), GDB (=1: wait for gdb
# on :1234), TESTS (=1: boot $BUILD/kernel-test.elf, the kernel with the selftests
# and benchmarks), GRACE_UDP_ECHO_PORT (the host's 127.0.0.1 UDP port forwarded to the
# guest's echo service, 10.0.2.15:7, through QEMU's user networking; unset: 5555 if it
# is free, otherwise a free one, named in the first line printed), INITRD (a
# cpio newc archive, put on the ISO and loaded by GRUB's module2 as the first module),
# LINUX (a Linux bzImage booted instead of Grace, by QEMU's -kernel with INITRD and
# CMDLINE: make compare runs Linux on the same machine, CPU, memory and initramfs).
#
# QEMU's exit status (isa-debug-exit at port 0xf4; see drivers/power/isa_debug_exit.c):
#   33  the kernel powered off with success (arch_shutdown(0))
#   35  the kernel powered off with failure (a failed test, a panic)
#   other  it never reached arch_shutdown (0: triple fault under -no-reboot; 1: QEMU error)
# The test runner judges from the console output; these statuses only add to it.
#
# GRUB takes the command line from grub.cfg, so each kernel and command line gets
# its own ISO, cached under $BUILD/iso/ by a hash of both and rebuilt when the
# kernel or scripts/mkiso.sh is newer. The ISO boots under both firmwares.
set -e
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-build/x86_64}
case ${MACHINE:-pc} in
pc|q35) machine=${MACHINE:-pc} ;;
*) echo "x86_64.sh: MACHINE must be pc or q35, not '$MACHINE'" >&2; exit 1 ;;
esac
case ${FIRMWARE:-bios} in
bios|uefi) firmware=${FIRMWARE:-bios} ;;
*) echo "x86_64.sh: FIRMWARE must be bios or uefi, not '$FIRMWARE'" >&2; exit 1 ;;
esac
SMP=${SMP:-8}
MEM=${MEM:-512M}

if [ "$TESTS" = 1 ]; then
	KERNEL=$BUILD/kernel-test.elf
	target=test-image
else
	KERNEL=$BUILD/kernel.elf
	target=all
fi

if [ -n "$LINUX" ]; then
	if [ ! -f "$LINUX" ]; then
		echo "x86_64.sh: LINUX=$LINUX not found" >&2
		exit 1
	fi
	set -- -kernel "$LINUX" -append "$CMDLINE"
	[ -z "$INITRD" ] || set -- "$@" -initrd "$INITRD"
else
	if [ ! -f "$KERNEL" ]; then
		echo "x86_64.sh: $KERNEL not found; run make ARCH=x86_64 $target first" >&2
		exit 1
	fi
	if [ -z "$CMDLINE" ] && [ -z "$INITRD" ]; then
		iso=${KERNEL%.elf}.iso
	else
		hash=$(printf '%s %s %s' "$KERNEL" "$CMDLINE" "$INITRD" | sha1sum | cut -c1-16)
		iso=$BUILD/iso/$hash.iso
	fi
	# shellcheck disable=SC3013 # -nt: dash's and bash's test both have it
	if [ ! -f "$iso" ] || [ "$KERNEL" -nt "$iso" ] || [ scripts/mkiso.sh -nt "$iso" ] ||
		{ [ -n "$INITRD" ] && [ "$INITRD" -nt "$iso" ]; }; then
		mkdir -p "$(dirname "$iso")"
		scripts/mkiso.sh "$KERNEL" "$iso" "$CMDLINE" "$INITRD"
	fi
	set -- -cdrom "$iso"
fi

# MEM in MiB (QEMU's -m: a bare number is MiB), for splitting it between NUMA nodes.
mem_mib() {
	case $1 in
	*[Gg]) echo $(( ${1%?} * 1024 )) ;;
	*[Mm]) echo "${1%?}" ;;
	*) echo "$1" ;;	# a bare number is MiB to QEMU
	esac
}

numa_args=""
if [ -n "$NUMA" ]; then
	total=$(mem_mib "$MEM")
	i=0
	while [ "$i" -lt "$NUMA" ]; do
		# Node i gets CPUs [i*SMP/NUMA, (i+1)*SMP/NUMA) and an even share of memory
		# (the last node takes the remainder).
		first=$(( i * SMP / NUMA ))
		next=$(( (i + 1) * SMP / NUMA ))
		size=$(( total / NUMA ))
		[ "$i" -eq $(( NUMA - 1 )) ] && size=$(( total - size * (NUMA - 1) ))
		numa_args="$numa_args -object memory-backend-ram,id=mem$i,size=${size}M"
		if [ "$next" -gt "$first" ]; then
			numa_args="$numa_args -numa node,nodeid=$i,cpus=$first-$(( next - 1 )),memdev=mem$i"
		else
			numa_args="$numa_args -numa node,nodeid=$i,memdev=mem$i"
		fi
		i=$(( i + 1 ))
	done
	# Distances (ACPI SLIT): a line of nodes, 10 more per hop, so "nearest" means something.
	i=0
	while [ "$i" -lt "$NUMA" ]; do
		j=$(( i + 1 ))
		while [ "$j" -lt "$NUMA" ]; do
			numa_args="$numa_args -numa dist,src=$i,dst=$j,val=$(( 10 + 10 * (j - i) ))"
			j=$(( j + 1 ))
		done
		i=$(( i + 1 ))
	done
fi

# UEFI: OVMF's code read-only, and its variable store (boot entries OVMF writes at every
# boot) a private copy. The copy is opened on descriptor 3 and unlinked at once, so
# QEMU writes to a file nobody else sees, and nothing is left behind however QEMU ends
# (the test runner kills it with SIGKILL).
firmware_args=""
if [ "$firmware" = uefi ]; then
	OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
	OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.fd
	if [ ! -f "$OVMF_CODE" ] || [ ! -f "$OVMF_VARS" ]; then
		echo "x86_64.sh: $OVMF_CODE or $OVMF_VARS missing (package ovmf)" >&2
		exit 1
	fi
	vars=$(mktemp "$BUILD/ovmf-vars.XXXXXX")
	cp "$OVMF_VARS" "$vars"
	exec 3<>"$vars"
	rm -f "$vars"
	firmware_args="-drive if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE \
		-drive if=pflash,format=raw,unit=1,file=/dev/fd/3"
fi

gdb_args=""
[ "$GDB" = 1 ] && gdb_args="-s -S"

# The host port of the guest's echo service, chosen late (QEMU binds it moments after;
# see scripts/qemu/udp-port), and named in the launcher's one line of its own, so a
# second machine booted beside this one, which gets another port, says where it is.
gdb_note=""
[ "$GDB" = 1 ] && gdb_note="; QEMU waits for gdb on localhost:1234"
ECHO_PORT=${GRACE_UDP_ECHO_PORT:-$(scripts/qemu/udp-port 5555)}
echo "x86_64.sh: $machine, $firmware, SMP=$SMP, MEM=$MEM; UDP echo: host 127.0.0.1:$ECHO_PORT -> guest port 7$gdb_note"

# The network: a modern-only virtio-net PCI device (no legacy I/O BAR) behind QEMU's user
# networking (slirp), the echo service's port forwarded from the host's loopback. No
# option ROM (romfile=): the firmware boots the ISO, and iPXE would only slow the boot. No IPv6:
# slirp would send router advertisements every few minutes, traffic in the middle of tests
# that count pages.
net_args="-netdev user,id=net0,ipv6=off,hostfwd=udp:127.0.0.1:$ECHO_PORT-:7 \
	-device virtio-net-pci,netdev=net0,disable-legacy=on,romfile="

# The CPU: QEMU's default qemu64 plus SMEP and SMAP (TCG emulates both), so the kernel's
# user-page protections are on; nothing else of the model changes.
cpu_args="-cpu qemu64,+smep,+smap"

# shellcheck disable=SC2086
exec qemu-system-x86_64 \
	-machine "$machine" \
	$cpu_args \
	$firmware_args \
	"$@" \
	-serial mon:stdio \
	-display none \
	-no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-smp "$SMP" \
	-m "$MEM" \
	$net_args $numa_args $gdb_args $QEMUFLAGS

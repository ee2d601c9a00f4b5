#!/bin/sh
# Build the disk image U-Boot's distro boot starts Grace/riscv64 from, laid out as
# on the SD card of a board whose firmware is U-Boot (StarFive VisionFive 2, SiFive
# HiFive Unmatched): an MBR with one bootable FAT partition (scripts/image/fat-disk.sh)
# holding
#   /extlinux/extlinux.conf   the one entry: the kernel, the device tree, the command line
#   /Image                    the kernel, with the RISC-V Linux image header booti reads
#   /DTB's name               when DTB names one
# U-Boot finds extlinux.conf on its own (sysboot), loads the kernel and boots it with
# booti, the hart id in a0 and the device tree, with bootargs set from the append
# line, in a1. `make image` builds build/riscv64/grace.img; scripts/qemu/riscv64.sh
# builds one per test kernel and command line (BOOT=uboot).
#
# Environment (all optional; paths relative to the repo root): BUILD (build/riscv64),
# KERNEL ($BUILD/Image), OUT ($BUILD/grace.img), CMDLINE (the kernel command line),
# DTB (the board's device tree; without it U-Boot passes the one it runs on, which
# under QEMU is QEMU's).
set -e
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-build/riscv64}
KERNEL=${KERNEL:-$BUILD/Image}
OUT=${OUT:-$BUILD/grace.img}

if [ ! -f "$KERNEL" ]; then
	echo "riscv64.sh: $KERNEL not found; run make ARCH=riscv64 first" >&2
	exit 1
fi
# booti refuses an image without the magic at 0x30; say so here rather than on the board.
if [ "$(dd if="$KERNEL" bs=1 skip=48 count=5 2>/dev/null)" != RISCV ]; then
	echo "riscv64.sh: $KERNEL has no RISC-V Linux image header (want build/riscv64/Image, not the ELF)" >&2
	exit 1
fi
if [ -n "$DTB" ] && [ ! -f "$DTB" ]; then
	echo "riscv64.sh: DTB=$DTB not found" >&2
	exit 1
fi
# U-Boot runs the append line through its macro expansion before it becomes bootargs:
# ${var} and $(var) are replaced, quotes and backslashes removed. Grace's arguments
# need none of these, so refuse them rather than boot with a different command line.
newline='
'
case $CMDLINE in
*\$* | *\'* | *\\* | *"$newline"*)
	printf "riscv64.sh: U-Boot would rewrite \$, quotes, backslashes and newlines in the command line: '%s'\n" "$CMDLINE" >&2
	exit 1 ;;
esac

mkdir -p "$(dirname "$OUT")"
root=$(mktemp -d "$OUT.root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir "$root/extlinux"
cp "$KERNEL" "$root/Image"
fdt_line=""
if [ -n "$DTB" ]; then
	cp "$DTB" "$root/$(basename "$DTB")"
	fdt_line="fdt /$(basename "$DTB")"
fi

# No prompt and no menu: U-Boot boots the default label at once. Without an append
# line U-Boot leaves /chosen bootargs as the device tree has it.
{
	echo "# Grace, for U-Boot's distro boot (sysboot); built by scripts/image/riscv64.sh"
	echo "default grace"
	echo "label grace"
	echo "	menu label Grace"
	echo "	kernel /Image"
	[ -n "$fdt_line" ] && echo "	$fdt_line"
	[ -n "$CMDLINE" ] && echo "	append $CMDLINE"
	true
} >"$root/extlinux/extlinux.conf"

scripts/image/fat-disk.sh "$root" "$OUT"
echo "riscv64.sh: $OUT (one FAT partition: /Image, /extlinux/extlinux.conf${DTB:+, /$(basename "$DTB")}; U-Boot's distro boot; dd it to an SD card)"

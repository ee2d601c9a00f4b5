#!/bin/sh
# Build the image a PC boots Grace/x86_64 from: the hybrid GRUB ISO of
# scripts/mkiso.sh, which a BIOS boots (El Torito from a CD, the MBR from a disk or
# USB stick) and UEFI boots (El Torito's EFI image, or the EFI system partition of
# its GPT). Write it to a stick whole, e.g. `dd if=build/x86_64/grace.iso
# of=/dev/sdX bs=4M conv=fsync`. GRUB talks on COM1 at 115200 baud and starts the
# kernel with CMDLINE. `make image ARCH=x86_64` builds build/x86_64/grace.iso.
#
# Environment (all optional; paths relative to the repo root): BUILD (build/x86_64),
# KERNEL ($BUILD/kernel.elf), OUT ($BUILD/grace.iso), CMDLINE (the kernel command
# line). DTB is for device-tree machines and must be empty here.
set -e
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-build/x86_64}
KERNEL=${KERNEL:-$BUILD/kernel.elf}
OUT=${OUT:-$BUILD/grace.iso}

if [ ! -f "$KERNEL" ]; then
	echo "x86_64.sh: $KERNEL not found; run make ARCH=x86_64 first" >&2
	exit 1
fi
if [ -n "$DTB" ]; then
	echo "x86_64.sh: DTB=$DTB given, but a PC describes itself through ACPI" >&2
	exit 1
fi
if ! grub-file --is-x86-multiboot2 "$KERNEL"; then
	echo "x86_64.sh: $KERNEL has no multiboot2 header GRUB accepts" >&2
	exit 1
fi

mkdir -p "$(dirname "$OUT")"
scripts/mkiso.sh "$KERNEL" "$OUT" "$CMDLINE"
echo "x86_64.sh: $OUT (BIOS and UEFI; dd it to a USB stick)"

#!/bin/sh
# Build a BIOS-bootable GRUB ISO that loads a Grace kernel via multiboot2.
#   mkiso.sh KERNEL_ELF OUT_ISO CMDLINE
# GRUB talks on the serial line (COM1), waits 0 s, and passes CMDLINE to the kernel.
# The kernel is copied without debug info (the kernel embeds its own symbol table).
set -e
kernel=$1
out=$2
cmdline=$3

work=$(mktemp -d "${out%.iso}.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/boot/grub"
objcopy --strip-debug "$kernel" "$root/boot/kernel.elf"

# GRUB's script syntax: single quotes keep every byte except ' itself.
set -f	# no pathname expansion of arguments like test=spin*
quoted=""
for arg in $cmdline; do
	case $arg in
	*"'"*) echo "mkiso.sh: a single quote in the command line is not supported" >&2; exit 1 ;;
	esac
	quoted="$quoted '$arg'"
done

cat > "$root/boot/grub/grub.cfg" <<CFG
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
set default=0
menuentry "Grace" {
	multiboot2 /boot/kernel.elf$quoted
	boot
}
CFG

# Only the BIOS platform, and only the modules grub.cfg needs: a smaller, faster ISO.
grub-mkrescue -d /usr/lib/grub/i386-pc \
	--install-modules="multiboot2 normal serial terminal boot iso9660 biosdisk" \
	--fonts= --locales= --themes= \
	-o "$work/out.iso" "$root" >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
# Rename into place: a concurrent reader never sees a half-written ISO.
mv "$work/out.iso" "$out"

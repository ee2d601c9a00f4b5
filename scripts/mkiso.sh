#!/bin/sh
# Build a GRUB ISO that loads a Grace kernel via multiboot2, bootable both ways:
# by a PC BIOS (El Torito, or the MBR when written to a disk or stick) and by UEFI
# (El Torito's EFI image, or the GPT's EFI system partition on a stick).
#   mkiso.sh KERNEL_ELF OUT_ISO CMDLINE [INITRD]
# GRUB talks on the serial line (COM1), waits 0 s, and passes CMDLINE to the kernel;
# INITRD, a cpio archive, is loaded by module2 as the first module (the initramfs).
# The kernel is copied without debug info (the kernel embeds its own symbol table).
set -e
kernel=$1
out=$2
cmdline=$3
initrd=$4

# The two platforms the ISO must boot on.
for dir in /usr/lib/grub/i386-pc /usr/lib/grub/x86_64-efi; do
	if [ ! -d "$dir" ]; then
		echo "mkiso.sh: $dir is missing (packages grub-pc-bin, grub-efi-amd64-bin)" >&2
		exit 1
	fi
done

work=$(mktemp -d "${out%.iso}.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/boot/grub"
objcopy --strip-debug "$kernel" "$root/boot/kernel.elf"
module=""
if [ -n "$initrd" ]; then
	cp "$initrd" "$root/boot/initrd.cpio"
	module="
	module2 /boot/initrd.cpio initrd"
fi

# GRUB's script syntax: single quotes keep every byte except ' itself.
set -f	# no pathname expansion of arguments like test=spin*
quoted=""
for arg in $cmdline; do
	case $arg in
	*"'"*) echo "mkiso.sh: a single quote in the command line is not supported" >&2; exit 1 ;;
	esac
	quoted="$quoted '$arg'"
done

# all_video: under UEFI there is no text mode, and GRUB's multiboot2 loader sets a
# graphics mode before it starts the kernel; without a video driver it prints an
# "error:" line (and boots anyway). Under BIOS it keeps text mode.
cat > "$root/boot/grub/grub.cfg" <<CFG
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
insmod all_video
set timeout=0
set default=0
menuentry "Grace" {
	multiboot2 /boot/kernel.elf$quoted$module
	boot
}
CFG

# Only the modules grub.cfg needs, a smaller, faster ISO; the EFI image's built-in
# configuration loads every partition map module, so those come too (each missing one
# is an error line on the console).
modules="multiboot2 normal serial terminal boot iso9660 all_video \
	$(cat /usr/lib/grub/x86_64-efi/partmap.lst)"
# Without -d, grub-mkrescue makes a boot image for every platform under /usr/lib/grub.
grub-mkrescue \
	--install-modules="$(echo $modules)" \
	--fonts= --locales= --themes= \
	-o "$work/out.iso" "$root" >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
# Rename into place: a concurrent reader never sees a half-written ISO.
mv "$work/out.iso" "$out"

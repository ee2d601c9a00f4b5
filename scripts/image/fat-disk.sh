#!/bin/sh
# Build a disk image with an MBR partition table and one bootable FAT partition
# holding the files of a directory: what U-Boot's distro boot scans on an SD card,
# a USB stick or a virtio disk.
#   fat-disk.sh DIR OUT
# Without root and without loop devices: sfdisk writes the table into the file,
# and mtools formats and fills the partition at its byte offset (img@@offset).
set -e
# sfdisk lives in /sbin, which is not on an ordinary user's PATH on Debian.
PATH=$PATH:/usr/sbin:/sbin
dir=$1
out=$2
if [ ! -d "$dir" ] || [ -z "$out" ]; then
	echo "usage: fat-disk.sh DIR OUT" >&2
	exit 2
fi

# The partition starts at 1 MiB, where partitioning tools align it: an SD card's
# erase blocks line up with the file system's, and board firmware that keeps its
# own loader in the first MiB (SPL, U-Boot proper) finds that space free.
START_SECTOR=2048
# At least 32 MiB: mformat then picks FAT16 (FAT12 below 16 MiB has a 4084-cluster
# limit some firmware mishandles), and a kernel rebuilt larger still fits when the
# card's files are replaced by hand. The image is sparse, so the free space costs
# nothing on the host. Above that, the files' size and room for FAT's own tables.
MIN_MIB=32
SLACK_MIB=8

content_mib=$(du -s --apparent-size --block-size=1M "$dir" | cut -f1)
part_mib=$((content_mib + SLACK_MIB))
[ "$part_mib" -lt "$MIN_MIB" ] && part_mib=$MIN_MIB
part_sectors=$((part_mib * 2048))

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
truncate -s $((START_SECTOR * 512 + part_mib * 1024 * 1024)) "$tmp"

# Type 0x0e: FAT16 addressed by LBA. Marked bootable: distro boot tries the
# bootable partitions of a disk (part list -bootable) before falling back to the first.
printf 'label: dos\nstart=%s, size=%s, type=e, bootable\n' "$START_SECTOR" "$part_sectors" |
	sfdisk --quiet "$tmp" >/dev/null

# -H: the sectors before the partition, which the FAT boot sector records; the
# geometry (64 heads, 32 sectors per track) is the usual one for LBA media.
fat="$tmp@@$((START_SECTOR * 512))"
mformat -i "$fat" -T "$part_sectors" -h 64 -s 32 -H "$START_SECTOR" -v GRACE ::
# -s: whole directories; -p: keep times; -Q: stop at the first error. Every entry of
# DIR, dot files too, lands at the root of the file system.
for entry in "$dir"/* "$dir"/.[!.]*; do
	[ -e "$entry" ] || continue
	mcopy -i "$fat" -s -p -Q "$entry" ::/
done

# mktemp made it private; the image is for reading and writing to cards, like any output.
chmod 644 "$tmp"
# Rename into place: a concurrent reader never sees a half-written image.
mv "$tmp" "$out"
trap - EXIT

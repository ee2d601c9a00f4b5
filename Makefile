# Grace: build, boot and test. See README.md for the targets and variables.
#
#   make [ARCH=riscv64|x86_64]        build build/<arch>/kernel.elf and the boot image
#   make test-image                   the same kernel with the tests: kernel-test.elf
#   make qemu SMP=8 MEM=512M          boot under QEMU to the grace> prompt (Ctrl-A X quits)
#   make qemu INITRD_DIR=dir          the same with dir's tree unpacked into / (an initramfs)
#   make qemu INIT=/bin/sh            a user program as the first process: tests/user's programs
#                                     and (x86_64) busybox in /bin, INITRD_DIR's files over them
#   make test                         the matrix (both arches, SMP=1,4,64); or one configuration
#   make test T=vfs.*                 the tests matching a glob (ARGS=test=vfs.*), one configuration
#   make help                         the targets and variables, from README.md's tables
#   make list-tests / list-benches    every test's suite.name / every benchmark, from the test image
#   make mutants                      mutation testing: every tests/mutants/*.patch caught
#   make bench BENCH=spinlock SMP=8   run benchmarks, print bench: lines
#   make compare [SMP=1,2,4,8]        the same programs on Grace and on Debian's Linux (x86_64)
#   make report [SMP=8] [REUSE=1]     every seed experiment: tables and plots in build/report/
#   make gdb                          boot with QEMU waiting for gdb on :1234
#   make ... DEBUG=1                  slab debugging (red zones, poison), in build/<arch>-debug
#   make ... LOCKDEP=1                the lock validator and lock statistics, in build/<arch>-lockdep
#   make ... LOCKSTAT=1               the lock statistics alone, in build/<arch>-lockstat
#   make ... RACE_POINTS=0            a test image without race points, in build/<arch>-norace

ARCH ?= riscv64
SMP ?= 8
MEM ?= 512M
NUMA ?=
ARGS ?=
QEMUFLAGS ?=
MACHINE ?=
BOOT ?=
FIRMWARE ?=
DTB ?=
INITRD_DIR ?=
INIT ?=
BENCH ?= all
TIMEOUT ?=
PHASE_MS ?=
WORKLOADS ?=
REUSE ?=
SEEDS ?= 100
T ?=
COMMA := ,

ifeq ($(filter $(ARCH),riscv64 x86_64),)
$(error ARCH must be riscv64 or x86_64, not '$(ARCH)')
endif

# CPUS=N is SMP=N, as xv6 spells it; both given and different is refused.
CPUS ?=
SMP_GIVEN := $(filter command line,$(origin SMP) $(origin CPUS))
ifneq ($(CPUS),)
ifneq ($(and $(filter command line,$(origin SMP)),$(filter-out $(CPUS),$(SMP))),)
$(error CPUS=$(CPUS) and SMP=$(SMP) disagree: CPUS is another name for SMP, give one)
endif
override SMP := $(CPUS)
endif

# Every user variable checked before anything is built (scripts/check-vars says what is
# allowed in one line), once, by the make the user ran: a recursive make gets the same
# variables, and make compare's hands SMP=1,2,4,8 on to a build that does not use it.
UNCHECKED_GOALS := clean help list-tests list-benches format format-check deps abi
CHECKED_VARS := ARCH SMP MEM NUMA MACHINE BOOT FIRMWARE DTB INITRD_DIR INIT MODE DEBUG LOCKDEP \
	LOCKSTAT TESTS V RACE_POINTS REUSE TIMEOUT PHASE_MS SEEDS T
shell_quote = '$(subst ','\'',$(1))'
ifeq ($(MAKELEVEL),0)
ifneq ($(filter-out $(UNCHECKED_GOALS),$(or $(MAKECMDGOALS),all)),)
VAR_PROBLEM := $(shell $(foreach v,$(CHECKED_VARS),$(v)=$(call shell_quote,$($(v)))) \
	GOALS=$(call shell_quote,$(MAKECMDGOALS)) scripts/check-vars)
ifneq ($(VAR_PROBLEM),)
$(error $(VAR_PROBLEM))
endif
endif
endif

# DEBUG=1: slab red zones, poison and double-free checks (include/grace/slab.h).
# LOCKDEP=1: the lock validator (include/grace/lockdep.h), with the lock statistics.
# LOCKSTAT=1: the lock statistics alone. Each builds apart, in build/<arch>-debug,
# -lockdep, -lockstat or a combination (-debug-lockdep), so switching does not
# rebuild the normal tree; the suffix is exported for tests/run.
DEBUG ?=
LOCKDEP ?=
LOCKSTAT ?=
DEBUG_CFLAGS :=
BUILD_SUFFIX :=
ifeq ($(DEBUG),1)
BUILD_SUFFIX := $(BUILD_SUFFIX)-debug
DEBUG_CFLAGS += -DGRACE_DEBUG=1
endif
ifeq ($(LOCKDEP),1)
BUILD_SUFFIX := $(BUILD_SUFFIX)-lockdep
DEBUG_CFLAGS += -DGRACE_LOCKDEP=1 -DGRACE_LOCKSTAT=1
else ifeq ($(LOCKSTAT),1)
BUILD_SUFFIX := $(BUILD_SUFFIX)-lockstat
DEBUG_CFLAGS += -DGRACE_LOCKSTAT=1
endif
# RACE_POINTS=0: a test image whose mechanisms have no race points (tests that use
# them fail), in build/<arch>-norace: what make profile compares to learn their cost.
RACE_POINTS ?=
ifeq ($(RACE_POINTS),0)
BUILD_SUFFIX := $(BUILD_SUFFIX)-norace
endif
BUILD := build/$(ARCH)$(BUILD_SUFFIX)
ifneq ($(BUILD_SUFFIX),)
export GRACE_BUILD_SUFFIX := $(BUILD_SUFFIX)
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The production kernel, and the same kernel with the selftests and benchmarks linked
# in: what make test, make bench and make profile boot (make qemu TESTS=1 too).
KERNEL := $(BUILD)/kernel.elf
TEST_KERNEL := $(BUILD)/kernel-test.elf
TESTS ?=
# arch/<arch>/build.mk adds rules; keep `all` the default goal whatever it defines first.
.DEFAULT_GOAL := all
include arch/$(ARCH)/build.mk

CC := $(CROSS_COMPILE)gcc
LD := $(CROSS_COMPILE)ld
NM := $(CROSS_COMPILE)nm
OBJCOPY := $(CROSS_COMPILE)objcopy
READELF := $(CROSS_COMPILE)readelf

# The compiler's own headers (stdint.h, stdarg.h). Asked of the compiler the first time a
# recipe needs it, never while make reads this file: on a fresh machine the cross
# compiler only exists once scripts/install-deps has run, and a parse-time $(shell)
# would have read an empty path and let -isystem swallow the next flag.
CC_INCLUDE = $(eval CC_INCLUDE := $$(call cc_include_dir))$(CC_INCLUDE)
cc_include_dir = $(or $(filter /%,$(shell $(CC) -print-file-name=include 2>/dev/null)),\
	$(error $(CC) is missing or has no include directory; run scripts/install-deps))

# Recursive (=), not :=, so that CC_INCLUDE is expanded in recipes only.
CFLAGS = -std=gnu11 -ffreestanding -fno-builtin -nostdinc -isystem $(CC_INCLUDE) \
	-O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wframe-larger-than=2048 \
	-fno-omit-frame-pointer -fno-stack-protector -fno-pic -fno-common -fno-strict-aliasing \
	-ffunction-sections -fno-toplevel-reorder -MMD -MP \
	-Iinclude -Iarch/$(ARCH)/include $(ARCH_CFLAGS) $(DEBUG_CFLAGS)
ASFLAGS = -D__ASSEMBLY__ $(filter-out -std=gnu11,$(CFLAGS))
LDFLAGS := -nostdlib -static -z max-page-size=4096 -z noexecstack --no-warn-rwx-segments $(ARCH_LDFLAGS)

# Drivers every machine may have (parsers, the UART, PCI, virtio and its devices: each
# finds nothing on a machine without them); the machine-specific ones (interrupt
# controllers, power-off devices) are named by the arch's ARCH_DRIVERS.
COMMON_DRIVERS := acpi fdt firmware uart pci virtio net
DRIVER_SRCS := $(wildcard $(COMMON_DRIVERS:%=drivers/%/*.c)) $(ARCH_DRIVERS)
KERNEL_SRCS := $(wildcard kernel/*.c kernel/*/*.c mm/*.c fs/*.c fs/*/*.c net/*.c net/*/*.c lib/*.c) $(DRIVER_SRCS) $(ARCH_SRCS)
TEST_SRCS := $(wildcard tests/kernel/*.c tests/bench/*.c)
objs_of = $(patsubst %,$(BUILD)/%.o,$(basename $(1)))
KERNEL_OBJS := $(call objs_of,$(KERNEL_SRCS))
# Device trees of boards the parser selftests read: each .dts compiled by dtc and
# linked in as dtb_<name>_start..dtb_<name>_end (tests/kernel/dts/dtb_blob.S).
TEST_DTS := $(wildcard tests/kernel/dts/*.dts)
TEST_DTB_OBJS := $(patsubst %.dts,$(BUILD)/%.dtb.o,$(TEST_DTS))
# Static programs the ELF loader's selftests load (tests/user/elf_min.c), built for the
# target with the same compiler as ET_EXEC and as static-pie ET_DYN, and the benchmarks'
# (tests/user/null_syscall.c, open_close.c, memscale.c) and the kernel-pointer selftest's
# (tests/user/kptr.c), linked in as <name>_start..<name>_end
# (tests/user/elf_blob.S), with what readelf says of the first two in elf_expect.h.
TEST_ELFS := elf_min_exec elf_min_pie null_syscall open_close memscale kptr
TEST_ELF_OBJS := $(TEST_ELFS:%=$(BUILD)/tests/user/%.elf.o)
TEST_OBJS := $(call objs_of,$(TEST_SRCS)) $(TEST_DTB_OBJS) $(TEST_ELF_OBJS)
# Race points (include/grace/race_point.h) exist only in the test image: the sources
# that include the header are compiled a second time, into $(BUILD)/race/, with
# GRACE_RACE_POINTS, and the test image links those objects instead. A header that
# included it would hide its users from this search, so none may.
RACE_HEADERS := $(shell grep -rl --include='*.h' '^\#include <grace/race_point.h>' \
	include arch fs kernel lib mm net drivers)
ifneq ($(RACE_HEADERS),)
$(error $(RACE_HEADERS): only .c files may include <grace/race_point.h> (the Makefile finds them by it))
endif
RACE_SRCS := $(if $(filter 0,$(RACE_POINTS)),kernel/race_point.c,\
	$(shell grep -l '^\#include <grace/race_point.h>' $(KERNEL_SRCS)))
RACE_OBJS := $(patsubst %,$(BUILD)/race/%.o,$(basename $(RACE_SRCS)))
TEST_KERNEL_OBJS := $(filter-out $(call objs_of,$(RACE_SRCS)),$(KERNEL_OBJS)) $(RACE_OBJS)
OBJS := $(KERNEL_OBJS) $(TEST_OBJS) $(RACE_OBJS)
LDSCRIPT := linker/$(ARCH).ld

# The white-box tests include internal headers by their path from the root
# (<mm/page_alloc_internal.h>); nothing else in the kernel may.
$(TEST_OBJS): CFLAGS += -I.
$(TEST_OBJS) $(RACE_OBJS): CFLAGS += -DGRACE_RACE_POINTS=1

DEPS_STAMP := build/.deps-ok

.PHONY: all test-image image deps qemu gdb qemu-gdb test abi docs-check fsdiff userdiff compare report user-progs mutants bench profile plugin format format-check clean help list-tests list-benches
all: $(KERNEL) $(ARCH_IMAGES)
test-image: $(TEST_KERNEL) $(ARCH_TEST_IMAGES)

# Installs what is missing (quiet when nothing is); re-checked once per build/ tree.
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps
	$(Q)scripts/install-deps
	$(Q)mkdir -p build && touch $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/race/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (race points)")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.S | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) $(ASFLAGS) -c $< -o $@

$(BUILD)/tests/kernel/dts/%.dtb: tests/kernel/dts/%.dts | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  DTC     $<")
	$(Q)dtc -q -I dts -O dtb -o $@ $<

$(BUILD)/tests/kernel/dts/%.dtb.o: $(BUILD)/tests/kernel/dts/%.dtb tests/kernel/dts/dtb_blob.S
	$(Q)$(CC) $(ASFLAGS) -DDTB_PATH='"$<"' -DDTB_START=dtb_$(subst -,_,$*)_start \
		-DDTB_END=dtb_$(subst -,_,$*)_end -c tests/kernel/dts/dtb_blob.S -o $@

USER_CFLAGS := -O2 -ffreestanding -fno-stack-protector -nostdlib -Wl,--build-id=none
$(BUILD)/tests/user/elf_min_exec.elf: tests/user/elf_min.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) $(USER_CFLAGS) -static -fno-pie -no-pie -o $@ $<
$(BUILD)/tests/user/elf_min_pie.elf: tests/user/elf_min.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) $(USER_CFLAGS) -static-pie -fPIE -Wl,--no-dynamic-linker -o $@ $<

# The benchmarks' programs (tests/user/null_syscall.c, open_close.c): no libc, their own
# _start (tests/user/nolibc.h).
$(BUILD)/tests/user/null_syscall.elf $(BUILD)/tests/user/open_close.elf: \
		$(BUILD)/tests/user/%.elf: tests/user/%.c tests/user/nolibc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) $(USER_CFLAGS) -static -fno-pie -no-pie -o $@ $<

# The threaded benchmark's program (tests/user/memscale.c): glibc's pthreads, static; and
# the kernel-pointer selftest's (tests/user/kptr.c), static glibc too.
$(BUILD)/tests/user/memscale.elf $(BUILD)/tests/user/kptr.elf: $(BUILD)/tests/user/%.elf: \
		tests/user/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) -static -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/tests/user/%.elf.o: $(BUILD)/tests/user/%.elf tests/user/elf_blob.S
	$(Q)$(CC) $(ASFLAGS) -DELF_PATH='"$<"' -DELF_START=$*_start -DELF_END=$*_end \
		-c tests/user/elf_blob.S -o $@

# The programs of the differential user tests (tests/harness/userdiff.py): every tests/user/*.c but
# the loader's elf_min.c, built as anyone builds a static Linux program, against the
# target's glibc, into $(BUILD)/tests/user/<name>. `make user-progs` builds them for ARCH.
# A program too long for one file keeps its parts in tests/user/<name>/, headers its <name>.c
# includes; -MMD makes the program depend on them.
USER_PROGS := $(filter-out elf_min null_syscall open_close memscale kptr,$(basename $(notdir $(wildcard tests/user/*.c))))
USER_BINS := $(USER_PROGS:%=$(BUILD)/tests/user/%)
$(USER_BINS): $(BUILD)/tests/user/%: tests/user/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) -static -O2 -Wall -Wextra -Werror -MMD -MP -MF $@.d -o $@ $<
-include $(USER_BINS:=.d)
user-progs: $(USER_BINS)

# make compare's program (tests/compare/): the workloads, one static glibc binary that
# Grace and Linux boot as /init from the same initramfs.
COMPARE_PROG := $(BUILD)/compare/compare
$(COMPARE_PROG): $(wildcard tests/compare/*.c tests/compare/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  USER    $@")
	$(Q)$(CC) -static -O2 -Wall -Wextra -Werror -pthread -o $@ $(filter %.c,$^)

$(BUILD)/tests/user/elf_expect.h: $(TEST_ELFS:%=$(BUILD)/tests/user/%.elf) scripts/gen-elf-expect
	$(Q){ scripts/gen-elf-expect $(READELF) ELF_MIN_EXEC $(BUILD)/tests/user/elf_min_exec.elf && \
	  scripts/gen-elf-expect $(READELF) ELF_MIN_PIE $(BUILD)/tests/user/elf_min_pie.elf; } > $@.tmp
	$(Q)mv $@.tmp $@
$(BUILD)/tests/kernel/elf_test.o: $(BUILD)/tests/user/elf_expect.h
$(BUILD)/tests/kernel/elf_test.o: CFLAGS += -I$(BUILD)/tests/user

# The kernel embeds its own symbol table for backtraces. Link three times: with an
# empty table, with the table of that link (now the right size, so every address
# that follows it moves into place), and with the table of the second link.
# $(1): the objects of the ELF the recipe writes ($@). The steps' files are named
# by KSYMS_TMP, under $(BUILD)/link/.
KSYMS_TMP = $(BUILD)/link/$(notdir $@)
ksyms_link = $(LD) $(LDFLAGS) -T $(LDSCRIPT) -o $(1) $(2)
define link_with_ksyms
	@$(if $(Q),echo "  LD      $@")
	@mkdir -p $(BUILD)/link
	$(Q)scripts/gen-ksyms /dev/null > $(KSYMS_TMP).ksyms0.S
	$(Q)$(CC) $(ASFLAGS) -c $(KSYMS_TMP).ksyms0.S -o $(KSYMS_TMP).ksyms0.o
	$(Q)$(call ksyms_link,$(KSYMS_TMP).0,$(1) $(KSYMS_TMP).ksyms0.o)
	$(Q)$(NM) -n --defined-only $(KSYMS_TMP).0 | scripts/gen-ksyms - > $(KSYMS_TMP).ksyms1.S
	$(Q)$(CC) $(ASFLAGS) -c $(KSYMS_TMP).ksyms1.S -o $(KSYMS_TMP).ksyms1.o
	$(Q)$(call ksyms_link,$(KSYMS_TMP).1,$(1) $(KSYMS_TMP).ksyms1.o)
	$(Q)$(NM) -n --defined-only $(KSYMS_TMP).1 | scripts/gen-ksyms - > $(KSYMS_TMP).ksyms2.S
	$(Q)$(CC) $(ASFLAGS) -c $(KSYMS_TMP).ksyms2.S -o $(KSYMS_TMP).ksyms2.o
	$(Q)$(call ksyms_link,$@,$(1) $(KSYMS_TMP).ksyms2.o)
	$(Q)$(NM) -n --defined-only $@ | scripts/gen-ksyms - | cmp -s - $(KSYMS_TMP).ksyms2.S || \
		{ echo "ksyms: symbol table of $@ did not converge after three links" >&2; rm -f $@; exit 1; }
endef

$(KERNEL): $(KERNEL_OBJS) $(LDSCRIPT) scripts/gen-ksyms
	$(call link_with_ksyms,$(KERNEL_OBJS))

$(TEST_KERNEL): $(TEST_KERNEL_OBJS) $(TEST_OBJS) $(LDSCRIPT) scripts/gen-ksyms
	$(call link_with_ksyms,$(TEST_KERNEL_OBJS) $(TEST_OBJS))

# QEMU is started by scripts/qemu/<arch>.sh from these variables, for make and the test runner alike:
# tests/harness/launcher.py states which it reads, and starts it with them (make qemu and make gdb
# as tests/run does). TESTS=1: boot the test image instead of the production kernel.
LAUNCH = $(SYSTEM_PYTHON) tests/harness/launcher.py $(ARCH)
QEMU_ENV = BUILD=$(BUILD) SMP=$(SMP) MEM=$(MEM) NUMA="$(NUMA)" QEMUFLAGS="$(QEMUFLAGS)" TESTS=$(TESTS) \
	MACHINE="$(MACHINE)" BOOT="$(BOOT)" FIRMWARE="$(FIRMWARE)" DTB="$(DTB)"
# One configuration's QEMU for tests/run: the machine, the boot path and the firmware.
RUN_MACHINE = --machine "$(MACHINE)" --boot "$(BOOT)" --firmware "$(FIRMWARE)"
BOOT_IMAGE := $(if $(filter 1,$(TESTS)),test-image,all)
BOOT_ELF := $(if $(filter 1,$(TESTS)),$(TEST_KERNEL),$(KERNEL))

# INITRD_DIR=dir: dir packed into a cpio newc archive (scripts/mkinitrd) on every boot,
# handed to the kernel as its initramfs.
# INIT=PATH: PATH runs as the first process instead of the shell (init=PATH, before ARGS),
# and the machine powers off when it ends. Its initramfs is made on every boot by
# scripts/mkuserroot in $(BUILD)/userroot: the programs of tests/user (make user-progs) in
# /bin, on x86_64 Debian's static busybox (scripts/install-deps) with a link for each applet,
# the scripts of tests/user in /tests, and INITRD_DIR's tree copied over them.
INITRD := $(if $(or $(INITRD_DIR),$(INIT)),$(BUILD)/initrd.cpio)
USER_ROOT := $(BUILD)/userroot
USER_SCRIPTS := $(wildcard tests/user/*.sh)
USER_BUSYBOX := $(if $(filter x86_64,$(ARCH)),/bin/busybox)
qemu: $(BOOT_IMAGE) $(if $(INIT),$(USER_BINS)) | $(DEPS_STAMP)
ifneq ($(INIT),)
	$(Q)scripts/mkuserroot $(if $(USER_BUSYBOX),-b $(USER_BUSYBOX)) $(addprefix -t ,$(USER_SCRIPTS)) \
		$(if $(INITRD_DIR),-m "$(INITRD_DIR)") $(USER_ROOT) $(USER_BINS)
	$(Q)scripts/mkinitrd $(USER_ROOT) $(INITRD)
else
	$(if $(INITRD_DIR),$(Q)scripts/mkinitrd "$(INITRD_DIR)" $(INITRD))
endif
	$(Q)$(LAUNCH) $(QEMU_ENV) CMDLINE="$(strip $(if $(INIT),init=$(INIT)) $(ARGS))" INITRD="$(INITRD)"

# What a real machine boots: build/riscv64/grace.img (a disk image for U-Boot's distro
# boot; DTB=board.dtb adds a device tree) or build/x86_64/grace.iso (BIOS and UEFI).
image: all
	$(Q)BUILD=$(BUILD) DTB="$(DTB)" CMDLINE="$(ARGS)" scripts/image/$(ARCH).sh

GDB_CMD := $(if $(filter riscv64,$(ARCH)),gdb-multiarch,gdb)
gdb qemu-gdb: $(BOOT_IMAGE)
	$(Q)scripts/install-deps --gdb $(ARCH)
	@echo "QEMU waits for gdb on localhost:1234. In another terminal:"
	@echo "  $(GDB_CMD) $(BOOT_ELF) -ex 'target remote :1234'"
	$(Q)$(LAUNCH) $(QEMU_ENV) CMDLINE="$(ARGS)" GDB=1

# Any of these on the command line selects one configuration; none runs the matrix.
SELECTORS := $(strip $(foreach v,ARCH SMP CPUS MEM NUMA ARGS QEMUFLAGS MACHINE BOOT FIRMWARE DTB T,$(if $(filter command line,$(origin $(v))),$(v))))
# T=GLOB: the tests matching GLOB, the short form of ARGS=test=GLOB.
TEST_ARGS := $(strip $(if $(T),test=$(T)) $(ARGS))

# Debian's Python, whose packages (python3-matplotlib, for make report's plots) the one
# first on PATH may not see.
SYSTEM_PYTHON := /usr/bin/python3

test: | $(DEPS_STAMP)
	$(Q)python3 tests/unistd_check.py
	$(Q)python3 tests/abi_check.py
ifeq ($(SELECTORS),)
	$(Q)$(SYSTEM_PYTHON) tests/report_test.py
	$(Q)python3 scripts/make-help --check
	$(Q)python3 tests/host_tools_test.py
	$(Q)python3 tests/run --matrix $(if $(filter 1,$(LOCKDEP)),--lockdep)
	$(Q)$(MAKE) -s docs-check
else
	$(Q)$(MAKE) -s test-image
	$(Q)python3 tests/run --arch $(ARCH) --smp $(SMP) --mem $(MEM) --numa "$(NUMA)" \
		--args "$(TEST_ARGS)" --qemuflags "$(QEMUFLAGS)" $(RUN_MACHINE) $(if $(DTB),--dtb "$(DTB)") \
		$(if $(TIMEOUT),--timeout $(TIMEOUT))
endif

# The system calls of each arch from the registry, implemented or ENOSYS (scripts/abi).
abi:
	$(Q)python3 scripts/abi

# The examples marked in README.md and docs/*.md (tests/docs_check.py), run and compared
# with what the pages show; they boot riscv64's test image, some under the profiler.
docs-check: | $(DEPS_STAMP)
	$(Q)$(MAKE) -s ARCH=riscv64 test-image plugin
	$(Q)python3 tests/docs_check.py

# The VFS against Linux (tests/harness/fsdiff.py) for seeds 1..SEEDS; make test runs the fixed seeds.
fsdiff: test-image | $(DEPS_STAMP)
	$(Q)python3 tests/run --fsdiff $(SEEDS) --arch $(ARCH) --smp $(if $(SMP_GIVEN),$(SMP),4) \
		$(if $(TIMEOUT),--timeout $(TIMEOUT))

# The same programs on Grace and on Linux (tests/compare.py): Debian's Linux kernel package
# fetched once, both kernels booted at each of SMP=1,2,4,8 (default) with the same
# initramfs; tables printed and written as CSV under build/x86_64/compare/.
# x86_64 unless ARCH= asks otherwise (and then it says why it cannot).
COMPARE_ARCH := $(if $(filter command line,$(origin ARCH)),$(ARCH),x86_64)
compare: | $(DEPS_STAMP)
	$(Q)$(if $(filter x86_64,$(COMPARE_ARCH)),$(MAKE) -s ARCH=x86_64 all build/x86_64/compare/compare plugin &&) \
		python3 tests/compare.py --arch $(COMPARE_ARCH) \
		--smp $(if $(SMP_GIVEN),$(SMP),1$(COMMA)2$(COMMA)4$(COMMA)8) \
		$(if $(PHASE_MS),--phase-ms $(PHASE_MS)) $(WORKLOADS)

# Every seed experiment in one report (tests/report.py): the seed benchmarks and their
# profiles for both arches at SMP=8 (or SMP=), or REUSE=1 to read the last runs' logs;
# build/report/index.html and index.md, checked in headless Chromium.
REPORT_ARCHES := $(if $(filter command line,$(origin ARCH)),$(ARCH),riscv64 x86_64)
report: | $(DEPS_STAMP)
	$(Q)scripts/install-deps --report
	$(Q)$(if $(REUSE),,$(foreach a,$(REPORT_ARCHES),$(MAKE) -s ARCH=$(a) test-image &&) $(MAKE) -s plugin &&) \
		$(SYSTEM_PYTHON) tests/report.py --smp $(SMP) --arch $(subst $(eval) ,$(COMMA),$(REPORT_ARCHES)) \
		$(if $(REUSE),--reuse)

# User programs against Linux (tests/harness/userdiff.py): tests/user's programs run at the prompt
# and on the host (natively, or under qemu-riscv64), their outputs compared.
userdiff: test-image user-progs | $(DEPS_STAMP)
	$(Q)python3 tests/run --userdiff --arch $(ARCH) --smp $(if $(SMP_GIVEN),$(SMP),4) \
		$(if $(TIMEOUT),--timeout $(TIMEOUT))

# Mutation testing: each tests/mutants/*.patch, applied to a scratch copy in
# build/mutants/, must make the tests its header names fail. The runner builds the
# base trees it needs (riscv64, riscv64-debug, riscv64-lockdep) itself.
mutants: | $(DEPS_STAMP)
	$(Q)python3 tests/mutants/run

bench: test-image
	$(Q)python3 tests/run --bench $(BENCH) --arch $(ARCH) --smp $(SMP) --mem $(MEM) --numa "$(NUMA)" \
		--args "$(ARGS)" --qemuflags "$(QEMUFLAGS)" $(RUN_MACHINE) $(if $(TIMEOUT),--timeout $(TIMEOUT))

# The QEMU TCG profiling plugin (tools/profile), built with the host compiler.
PLUGIN := build/tools/grace_profile.so
PLUGIN_SRCS := $(wildcard tools/profile/*.c)
$(PLUGIN): $(PLUGIN_SRCS) $(wildcard tools/profile/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $@")
	$(Q)gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -shared \
		-fvisibility=hidden -o $@ $(PLUGIN_SRCS) -lpthread

MODE ?= insns
profile: test-image $(PLUGIN)
	$(Q)python3 tests/run --bench $(BENCH) --profile $(MODE) --arch $(ARCH) --smp $(SMP) --mem $(MEM) \
		--numa "$(NUMA)" --args "$(ARGS)" --qemuflags "$(QEMUFLAGS)" $(RUN_MACHINE) $(if $(TIMEOUT),--timeout $(TIMEOUT))

plugin: $(PLUGIN)

# The targets and variables, read from README.md's tables (make test checks those tables
# against this Makefile: scripts/make-help --check).
# Python comes with scripts/install-deps, which help does not run: on a fresh machine it
# says so instead.
help:
	$(Q)if command -v python3 >/dev/null; then python3 scripts/make-help; else \
		echo "make help reads README.md with python3, which scripts/install-deps installs" \
		"(README.md's \"Make targets\" has the same tables)"; fi

# Every selftest's suite.name and every benchmark, read from the test image's .testcases
# and .benches sections (what the kernel runs, and what tests/run counts against the KTAP
# plan); T=GLOB lists the tests make test T=GLOB would run.
list-tests: test-image
	$(Q)python3 scripts/list-cases tests $(TEST_KERNEL) $(T)
list-benches: test-image
	$(Q)python3 scripts/list-cases benches $(TEST_KERNEL) README.md

# Every C source and header, kernel, tests and plugin, in .clang-format's style.
FORMAT_SRCS = $(sort $(wildcard $(addsuffix /*.[ch],arch/* arch/*/mfw arch/*/include/asm drivers/* include/grace \
	fs kernel kernel/* lib mm net net/* tests/kernel tests/bench tests/user tests/user/* tools/profile)))
format-check: | $(DEPS_STAMP)
	$(Q)clang-format --dry-run -Werror $(FORMAT_SRCS)
format: | $(DEPS_STAMP)
	$(Q)clang-format -i $(FORMAT_SRCS)

clean:
	rm -rf build/riscv64 build/x86_64 build/riscv64-* build/x86_64-* build/tools build/mutants

-include $(OBJS:.o=.d)

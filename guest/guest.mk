# The test guest: a freestanding PVH ELF. It is always built without
# sanitizers (it runs inside the VM), into build/guest whatever BUILD is
# (build/guest-clang with clang, so `make check-clang` really compiles it
# with clang). Ring-3 code (guest/user/, guest/lib.c) is linked into its own
# 2 MiB user region; see guest/guest.ld and docs/guest.md.
GUEST_BUILD := build/guest$(if $(findstring clang,$(notdir $(CC))),-clang)
GUEST_ELF   := $(GUEST_BUILD)/capvisor-guest.elf
GUEST_SRCS  := $(wildcard guest/*.c guest/*.S guest/user/*.c)
GUEST_OBJS  := $(patsubst guest/%,$(GUEST_BUILD)/%.o,$(GUEST_SRCS))
GUEST_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -O2 -g -I. -Iinclude -ffreestanding -fno-pic -fno-pie \
	-fno-stack-protector -fno-builtin -mno-red-zone -mgeneral-regs-only \
	-mcmodel=small -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fcf-protection=none -nostdinc -MMD -MP

$(GUEST_BUILD)/%.c.o: guest/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_BUILD)/%.S.o: guest/%.S
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_ELF): $(GUEST_OBJS) guest/guest.ld
	ld -nostdlib -static -no-pie -z noexecstack --no-warn-rwx-segments --build-id=none -T guest/guest.ld \
		-o $@ $(GUEST_OBJS)

.PHONY: guest
guest: $(GUEST_ELF)

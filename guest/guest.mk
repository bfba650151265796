# The test guest: a freestanding PVH ELF. It is always built without
# sanitizers (it runs inside the VM), into build/guest whatever BUILD is.
GUEST_BUILD := build/guest
GUEST_ELF   := $(GUEST_BUILD)/capvisor-guest.elf
GUEST_SRCS  := $(wildcard guest/*.c guest/*.S)
GUEST_OBJS  := $(patsubst guest/%,$(GUEST_BUILD)/%.o,$(GUEST_SRCS))
GUEST_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -I. -ffreestanding -fno-pic \
	-fno-stack-protector -fno-builtin -mno-red-zone -mno-sse -mno-mmx -mno-avx \
	-mcmodel=kernel -nostdinc -MMD -MP

$(GUEST_BUILD)/%.c.o: guest/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_BUILD)/%.S.o: guest/%.S
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_ELF): $(GUEST_OBJS) guest/guest.ld
	ld -nostdlib -static -T guest/guest.ld -o $@ $(GUEST_OBJS)

.PHONY: guest
guest: $(GUEST_ELF)

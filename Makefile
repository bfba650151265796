# capvisor: top-level Makefile (GNU make).
#
#   make            build build/capvisor
#   make test       install deps if missing, build, run unit, sim and integration tests
#   make check      make test, then the tests again under ASan+UBSan, a clang build, the fuzz smoke run
#   make bench      benchmarks (figures go in the README)
#   make demo       the README's main job
#   make install    binary, man page and bash completion under $(DESTDIR)$(PREFIX)
#
# Objects go out of tree under $(BUILD). SAN=1 builds with ASan+UBSan under build/san.

CC      ?= cc
ifeq ($(CC),cc)
CC      := gcc
endif
SAN     ?=
ifeq ($(SAN),1)
BUILD   ?= build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD   ?= build
SANFLAGS :=
endif

VERSION := 0.1.0
CFLAGS  ?= -O2 -g
WFLAGS  := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# libxml2 reads and writes libvirt domain XML (cli/domain*.c).
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
XML_LIBS   := $(shell pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)
CPPFLAGS += -std=gnu11 -D_GNU_SOURCE -DCAPVISOR_VERSION='"$(VERSION)"' -I. -Iinclude -MMD -MP $(XML_CFLAGS)
ALL_CFLAGS = $(CPPFLAGS) $(WFLAGS) $(CFLAGS) $(SANFLAGS)
LDLIBS  := -ljson-c -lcap-ng -lseccomp $(XML_LIBS) -lpthread -lm
LDFLAGS += $(SANFLAGS)

# Everything but main() goes into one archive that the binary, the unit
# tests, the benchmarks and the fuzzers link against.
# SRC_DIRS is the one list of source folders; MAIN_SRC holds main().
SRC_DIRS := sched sim dispatch vmm vmm/kvm vmm/boot vmm/qmp cli devices acpi util host
MAIN_SRC  := cli/main.c
CORE_SRCS := $(filter-out $(MAIN_SRC),$(wildcard $(addsuffix /*.c,$(SRC_DIRS))))
CORE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRCS))
LIB       := $(BUILD)/libcapvisor.a
BIN       := $(BUILD)/capvisor

.PHONY: all test check bench demo fuzz clean deps install uninstall
all: $(BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The test guest is built by guest/guest.mk and embedded as the default kernel.
include guest/guest.mk

GUEST_BLOB     := vmm/boot/guest_blob.S
GUEST_BLOB_OBJ := $(BUILD)/$(GUEST_BLOB:.S=.o)
$(GUEST_BLOB_OBJ): $(GUEST_BLOB) $(GUEST_ELF)
	@mkdir -p $(dir $@)
	$(CC) -DGUEST_ELF_PATH='"$(GUEST_ELF)"' -c $< -o $@

$(LIB): $(CORE_OBJS) $(GUEST_BLOB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(patsubst %.c,$(BUILD)/%.o,$(MAIN_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	scripts/install-deps.sh

include tests/tests.mk
include bench/bench.mk

# Without /dev/kvm no guest boots: the demo's QoS then goes through the same
# engine in the simulator, and says so.
demo: deps $(BIN)
	@if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then \
		scripts/demo.py $(BIN) && scripts/demo_host.py $(BIN); \
	else \
		echo "make demo: /dev/kvm is not accessible, so no guest can boot here;" \
		     "showing the demo's QoS through the same engine in the simulator"; \
		scripts/demo_sim.py $(BIN); \
	fi

clean:
	rm -rf build

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the binary, the man page
# and the bash completion. INSTALL_BIN installs another build (e.g. build/clang).
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL_BIN ?= $(BIN)
install: $(INSTALL_BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/capvisor
	install -m 644 docs/capvisor.1 $(DESTDIR)$(MANDIR)/man1/capvisor.1
	install -m 644 completions/capvisor.bash $(DESTDIR)$(BASHCOMPDIR)/capvisor

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/capvisor $(DESTDIR)$(MANDIR)/man1/capvisor.1 \
	      $(DESTDIR)$(BASHCOMPDIR)/capvisor

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Developer tools: each tools/NAME.c becomes $(BUILD)/tools/NAME.
TOOLS := $(patsubst tools/%.c,$(BUILD)/tools/%,$(wildcard tools/*.c))
$(BUILD)/tools/%: $(BUILD)/tools/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
all: $(TOOLS)

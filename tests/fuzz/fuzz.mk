# libFuzzer targets (clang only), included by tests/tests.mk.
#   make fuzz-smoke   about 25 s per target: part of `make check`
#   make fuzz         10 minutes per target (FUZZ_TIME=seconds to change)
# Each target is built from the sources it exercises, instrumented, with no
# listening sockets (the client target's server bytes wait in a socketpair);
# crashes are written to build/fuzz/ (artifact_prefix).

FUZZ_CC      ?= clang
FUZZ_BUILD   := build/fuzz
FUZZ_TIME    ?= 600
FUZZ_FLAGS   := -std=gnu11 -D_GNU_SOURCE -DCAPVISOR_VERSION='"$(VERSION)"' -I. -Iinclude \
		$(WFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_QMP_SRCS := tests/fuzz/fuzz_qmp.c vmm/qmp/qmp.c vmm/qmp/qmp_commands.c vmm/qmp/qmp_groups.c \
		 dispatch/dl_miss.c

# The client side: what ctl and top make of a server's bytes.
FUZZ_QMP_CLIENT_SRCS := tests/fuzz/fuzz_qmp_client.c cli/qmp_client.c cli/ctl_format.c

$(FUZZ_BUILD)/fuzz_qmp: $(FUZZ_QMP_SRCS) vmm/qmp/qmp.h vmm/qmp/qmp_backend.h vmm/qmp/qmp_commands.h \
			tests/lib/qmp_fake_vm.h tests/fuzz/fuzz.h tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_QMP_SRCS) -o $@ -ljson-c

$(FUZZ_BUILD)/fuzz_qmp_client: $(FUZZ_QMP_CLIENT_SRCS) cli/qmp_client.h cli/ctl_format.h \
			       vmm/qmp/qmp_backend.h tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_QMP_CLIENT_SRCS) -o $@ -ljson-c -lm

# libvirt domain XML in: the reader and the option parsers it calls.
FUZZ_DOMAIN_SRCS := tests/fuzz/fuzz_domain.c cli/domain_in.c cli/domain_meta.c \
		    cli/domain_schema.c cli/domain_tune.c cli/domain_util.c vmm/emulator.c \
		    dispatch/hostspec.c util/json_strict.c util/keyval.c util/paths.c dispatch/qosspec.c \
		    cli/vmdef.c

$(FUZZ_BUILD)/fuzz_domain: $(FUZZ_DOMAIN_SRCS) cli/domain.h cli/domain_util.h tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(XML_CFLAGS) $(FUZZ_DOMAIN_SRCS) -o $@ $(XML_LIBS) -ljson-c

# Runs fuzzer $(1) for $(2) seconds over a scratch corpus seeded from a corpus
# folder (never written to): $(3) (default tests/fuzz/corpus), with dictionary
# $(4) (default qmp.dict; "none": no dictionary) and inputs of at most $(5)
# bytes (default 4096).
fuzz_dict = $(if $(filter none,$(1)),,-dict=$(or $(1),tests/fuzz/qmp.dict))

define run_fuzzer
	@mkdir -p $(FUZZ_BUILD)/corpus-$(1)
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/$(1) -max_total_time=$(2) -max_len=$(or $(5),4096) \
		-timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
		$(call fuzz_dict,$(4)) -artifact_prefix=$(FUZZ_BUILD)/$(1)- \
		$(FUZZ_BUILD)/corpus-$(1) $(or $(3),tests/fuzz/corpus)
endef

fuzz-smoke: $(FUZZ_BUILD)/fuzz_qmp $(FUZZ_BUILD)/fuzz_domain
	$(call run_fuzzer,fuzz_qmp,25)
	$(call run_fuzzer,fuzz_domain,25,tests/fuzz/corpus-domain,tests/fuzz/domain.dict)

fuzz: $(FUZZ_BUILD)/fuzz_qmp $(FUZZ_BUILD)/fuzz_domain
	$(call run_fuzzer,fuzz_qmp,$(FUZZ_TIME))
	$(call run_fuzzer,fuzz_domain,$(FUZZ_TIME),tests/fuzz/corpus-domain,tests/fuzz/domain.dict)

# The client target, run by fuzz-smoke and fuzz through a prerequisite.
.PHONY: fuzz-smoke-qmp-client fuzz-qmp-client
fuzz-smoke: fuzz-smoke-qmp-client
fuzz: fuzz-qmp-client
FUZZ_CLIENT_SEEDS := tests/fuzz/corpus-client
FUZZ_CLIENT_DICT  := tests/fuzz/qmp_client.dict

fuzz-smoke-qmp-client: $(FUZZ_BUILD)/fuzz_qmp_client
	$(call run_fuzzer,fuzz_qmp_client,25,$(FUZZ_CLIENT_SEEDS),$(FUZZ_CLIENT_DICT))

fuzz-qmp-client: $(FUZZ_BUILD)/fuzz_qmp_client
	$(call run_fuzzer,fuzz_qmp_client,$(FUZZ_TIME),$(FUZZ_CLIENT_SEEDS),$(FUZZ_CLIENT_DICT))


# ---- fuzz_guest: what a guest reaches (PIO, MMIO and MSR exits; tests/fuzz/fuzz_guest.c) ----
# Built from the core sources (all but `capvisor run` itself, which embeds
# the test guest), instrumented object by object; its seed corpus and
# regression inputs are tests/fuzz/corpus-guest.
FUZZ_GUEST_SRCS := tests/fuzz/fuzz_guest.c $(filter-out vmm/vm_run.c cli/cmd_run.c,$(CORE_SRCS))
FUZZ_GUEST_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_GUEST_SRCS))

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(XML_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_guest: $(FUZZ_GUEST_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) $^ -o $@ $(LDLIBS)

-include $(FUZZ_GUEST_OBJS:.o=.d)

.PHONY: fuzz-smoke-guest fuzz-guest
fuzz-smoke-guest: $(FUZZ_BUILD)/fuzz_guest
	$(call run_fuzzer,fuzz_guest,25,tests/fuzz/corpus-guest,none,1024)
fuzz-guest: $(FUZZ_BUILD)/fuzz_guest
	$(call run_fuzzer,fuzz_guest,$(FUZZ_TIME),tests/fuzz/corpus-guest,none,1024)
fuzz-smoke: fuzz-smoke-guest
fuzz: fuzz-guest


# ---- fuzz_vmdef: VM definition files (tests/fuzz/fuzz_vmdef.c) ----
# Seeded from tests/fuzz/vmdef/, with tests/fuzz/vmdef.dict.
FUZZ_VMDEF_SRCS := tests/fuzz/fuzz_vmdef.c cli/vmdef.c util/json_strict.c util/paths.c \
		   dispatch/qosspec.c util/keyval.c

$(FUZZ_BUILD)/fuzz_vmdef: $(FUZZ_VMDEF_SRCS) cli/vmdef.h util/json_strict.h util/paths.h \
			  dispatch/qosspec.h \
			  tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_VMDEF_SRCS) -o $@ -ljson-c

.PHONY: fuzz-vmdef-smoke fuzz-vmdef
fuzz-vmdef-smoke: $(FUZZ_BUILD)/fuzz_vmdef
	$(call run_fuzzer,fuzz_vmdef,25,tests/fuzz/vmdef,tests/fuzz/vmdef.dict,2048)
fuzz-vmdef: $(FUZZ_BUILD)/fuzz_vmdef
	$(call run_fuzzer,fuzz_vmdef,$(FUZZ_TIME),tests/fuzz/vmdef,tests/fuzz/vmdef.dict,2048)
fuzz-smoke: fuzz-vmdef-smoke
fuzz: fuzz-vmdef

# libFuzzer target for VM definition files (tests/fuzz/fuzz_vmdef.c), beside
# fuzz.mk's: `make fuzz-vmdef-smoke` (part of fuzz-smoke, so of `make check`)
# and `make fuzz-vmdef` (FUZZ_TIME seconds). Seeded from tests/fuzz/vmdef/.
FUZZ_VMDEF_SRCS := tests/fuzz/fuzz_vmdef.c vmm/vmdef.c vmm/json_strict.c vmm/paths.c

$(FUZZ_BUILD)/fuzz_vmdef: $(FUZZ_VMDEF_SRCS) vmm/vmdef.h vmm/json_strict.h vmm/paths.h \
			  tests/fuzz/fuzz_vmdef.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_VMDEF_SRCS) -o $@ -ljson-c

define run_vmdef_fuzzer
	@mkdir -p $(FUZZ_BUILD)/corpus-fuzz_vmdef
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_vmdef -max_total_time=$(1) -max_len=2048 \
		-timeout=5 -rss_limit_mb=1024 -print_final_stats=1 -dict=tests/fuzz/vmdef.dict \
		-artifact_prefix=$(FUZZ_BUILD)/fuzz_vmdef- $(FUZZ_BUILD)/corpus-fuzz_vmdef tests/fuzz/vmdef
endef

.PHONY: fuzz-vmdef-smoke fuzz-vmdef
fuzz-vmdef-smoke: $(FUZZ_BUILD)/fuzz_vmdef
	$(call run_vmdef_fuzzer,25)
fuzz-vmdef: $(FUZZ_BUILD)/fuzz_vmdef
	$(call run_vmdef_fuzzer,$(FUZZ_TIME))
fuzz-smoke: fuzz-vmdef-smoke
fuzz: fuzz-vmdef

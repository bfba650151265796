# Benchmarks: figures for the README. Not part of `make test`.
# Each bench/*.c is a standalone program linked against the core library;
# each bench/bench_*.sh is run in order by `make bench`.
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench bench-build
bench-build: all $(BENCH_BINS)

bench: deps bench-build
	@for b in $(sort $(wildcard bench/bench_*.sh)); do \
		echo "== $$b"; BUILD=$(BUILD) CAPVISOR=$(BIN) $$b || exit 1; \
	done

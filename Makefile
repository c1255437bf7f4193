# collisiond - one Makefile for the daemon, its tests and its benchmarks.
#
#   make               build the daemon and build/collisiond-bench into build/ (build packages only)
#   make build         the same plus every unit-test binary (needs the test packages: make deps-test)
#   make run           install what is missing, build, start on 127.0.0.1:8080 with the demo mesh
#   make test          install what is missing, build, run every Check suite and integration script
#   make SANITIZE=address,undefined test     the same under ASan/UBSan (build/san-address-undefined/)
#   make SANITIZE=thread test                the same under TSan
#   make valgrind      the unit suites under valgrind's memcheck
#   make bench         build/collisiond-bench, then the anchor harness in ../shared/bench if present
#   make bench-http    the HTTP benchmark against nginx, with the same harness
#   make bench-worlds  worlds: snapshot ingest and rewound hitscans over loopback
#   make fuzz          libFuzzer targets (clang), a short run each
#   make reliability   the longer reliability runs: 40 kill -9 rounds, 30 s of abusive
#                      clients (6000 idle, 300 slowloris), 60 s per fuzz target
#   make lint-spec     lint api/openapi.yaml (npx @redocly/cli)
#   make stress        peak RSS per request kind (uploads, big response, soak summary)
#   make soak          the 10-minute mixed-traffic soak (RSS must stay flat)
#   make image         the container image from docker/Dockerfile (podman or docker)
#   make stress-persist  concurrent writers + restarts against the data dir, long (RACE_TRIALS, RACE_ROUNDS)
#   make bench-replicas  time to ready and memory of a replica with SIZE_MB (1024) of meshes in Redis
#
# Top-level targets first install missing Debian packages (deps), then run a
# sub-make, so that pkg-config sees what was just installed.

SHELL := /bin/bash
comma := ,
CC ?= cc
BUILD ?= build
SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD := build/san-$(subst $(comma),-,$(SANITIZE))
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ifneq ($(filter address,$(subst $(comma), ,$(SANITIZE))),)
SANFLAGS += -fno-sanitize-recover=all
endif
endif

OPT ?= -O2
CORE_OPT ?= -O3
# core/ never reads errno: sqrt is then one instruction, without a branch
# to the library for a negative argument
CORE_FLAGS := -fno-math-errno
WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wvla -Wwrite-strings -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -Icore -Iapi -Iserver
CFLAGS += -std=gnu11 -g -pthread $(WARN) $(SANFLAGS) -MMD -MP
LDFLAGS += -pthread $(SANFLAGS)

PKGS_BUILD := gcc make pkg-config libmicrohttpd-dev libcjson-dev libhiredis-dev
PKGS_TEST := check libgmp-dev curl openssl python3 procps prometheus redis-server nginx-light
PKG_CFLAGS = $(shell pkg-config --cflags libcjson libmicrohttpd 2>/dev/null)
CJSON_LIBS = $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
MHD_LIBS = $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt)
HIREDIS_LIBS = $(shell pkg-config --libs hiredis 2>/dev/null || echo -lhiredis)

CORE_SRC := $(wildcard core/*.c)
API_SRC := $(wildcard api/*.c)
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_SUPPORT := $(filter-out tests/unit/test_%,$(wildcard tests/unit/*.c))

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
API_OBJ := $(API_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)

.PHONY: all binaries build run test test-run deps deps-test valgrind bench bench-http fuzz reliability lint-spec image clean
.PHONY: stress-persist bench-replicas
.DEFAULT_GOAL := all

# plain `make` on a fresh machine needs only PKGS_BUILD: the test binaries
# (Check, GMP) are built by `make build` / `make test`, which install PKGS_TEST.
all: deps
	@$(MAKE) --no-print-directory binaries

binaries: $(BUILD)/collisiond $(BUILD)/collisiond-bench
build: binaries $(TEST_BIN)

# ---- dependencies: install what is missing (apt-get; sudo when not root)
define apt_install
missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
if [ -n "$$missing" ]; then \
  echo "installing:$$missing"; sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
  $$sudo apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing >/dev/null; \
fi
endef
deps:
	@$(call apt_install,$(PKGS_BUILD))
deps-test:
	@$(call apt_install,$(PKGS_BUILD) $(PKGS_TEST))
	@# the contract test needs npm; a Node.js from elsewhere (with its own npm) is fine too
	@command -v npm >/dev/null || { $(call apt_install,nodejs npm) }

# ---- libraries and binaries
$(BUILD)/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(CORE_OPT) $(CORE_FLAGS) -c -o $@ $<
# the AVX-512 kernel runs faster built with -O2 than -O3 (interleaved pairs,
# docs/performance-log.md); the other kernels keep CORE_OPT
$(BUILD)/core/raycast_avx512.o: CORE_OPT = -O2
$(BUILD)/api/%.o: api/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(OPT) -c -o $@ $<
$(BUILD)/server/%.o: server/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(OPT) -c -o $@ $<
$(BUILD)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(OPT) -c -o $@ $<
$(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(CORE_OPT) -c -o $@ $<

$(BUILD)/libcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libapi.a: $(API_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libserver.a: $(SERVER_OBJ) $(BUILD)/server/openapi_blob.o
	@rm -f $@
	ar rcs $@ $^

# the spec is compiled into the binary so GET /v1/openapi.yaml needs no file
$(BUILD)/server/openapi_blob.c: api/openapi.yaml
	@mkdir -p $(@D)
	@{ echo '/* generated from api/openapi.yaml */'; echo '#include <stddef.h>'; \
	   echo 'extern const char openapi_yaml[]; extern const size_t openapi_yaml_len;'; \
	   echo 'const char openapi_yaml[] = {'; od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0};'; \
	   echo 'const size_t openapi_yaml_len = sizeof(openapi_yaml) - 1;'; } > $@
$(BUILD)/server/openapi_blob.o: $(BUILD)/server/openapi_blob.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/collisiond: $(BUILD)/server/main.o $(BUILD)/libserver.a $(BUILD)/libapi.a $(BUILD)/libcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(MHD_LIBS) $(CJSON_LIBS) $(HIREDIS_LIBS) -lm

$(BUILD)/collisiond-bench: $(BUILD)/bench/collisiond_bench.o $(BUILD)/libapi.a $(BUILD)/libcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CJSON_LIBS) -lm

# libmicrohttpd's floor under collisiond's transport settings (bench/http_scale.sh)
$(BUILD)/mhd-floor: $(BUILD)/bench/mhd_floor.o
	$(CC) $(LDFLAGS) -o $@ $^ $(MHD_LIBS)

# every tests/unit/test_X.c is one Check suite, linked with everything below server/main.c
$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/libserver.a $(BUILD)/libapi.a $(BUILD)/libcore.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(MHD_LIBS) $(CJSON_LIBS) $(HIREDIS_LIBS) -lgmp -lm

# ---- running
run: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	$(BUILD)/collisiond --demo $(ARGS)

test: deps-test
	@$(MAKE) --no-print-directory test-run

test-run: $(BUILD)/collisiond $(BUILD)/collisiond-bench $(TEST_BIN)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run_all.sh $(TEST_BIN)

valgrind: deps-test
	@$(MAKE) --no-print-directory $(TEST_BIN)
	@command -v valgrind >/dev/null || { sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; $$sudo apt-get install -y -q valgrind >/dev/null; }
	@fail=0; for t in $(TEST_BIN); do CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full $$t >/dev/null || { echo "valgrind: $$t failed"; fail=1; }; done; \
	 [ $$fail = 0 ] && echo "valgrind: all suites clean"; exit $$fail

# ---- benchmarks: the anchor harness beside the project (../shared/bench),
# run from a copy in build/bench-harness (the shared folder is read-only).
HARNESS ?= ../shared/bench
BENCH_OUT ?= $(abspath build/bench-harness)
BENCH_STEPS ?= build data anchors report
bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond-bench
	@[ -x $(HARNESS)/run.sh ] || { echo "bench: no harness at $(HARNESS) (set HARNESS=...)"; exit 1; }
	BENCH_OUT=$(BENCH_OUT) PROJECT_BENCH="$(abspath $(BUILD)/collisiond-bench)" $(HARNESS)/run.sh $(BENCH_STEPS)

bench-http: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	@[ -x $(HARNESS)/run.sh ] || { echo "bench-http: no harness at $(HARNESS) (set HARNESS=...)"; exit 1; }
	HARNESS=$(HARNESS) BENCH_OUT=$(BENCH_OUT) COLLISIOND="$(abspath $(BUILD)/collisiond)" bench/http_bench.sh

# the archive for a lent many-core machine (bench/device_pack.sh: binaries,
# nginx, wrk, curl, their libraries and loader, level data) -> build/device.tar.gz
.PHONY: device-pack
device-pack: deps
	bench/device_pack.sh

# worlds: snapshot ingest and rewound hitscans over loopback (LEVEL=level.obj, else
# generated with $(HARNESS)/gen_data.py); a benchmark, not a test
.PHONY: bench-worlds
bench-worlds: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	HARNESS=$(HARNESS) COLLISIOND="$(abspath $(BUILD)/collisiond)" bench/world_bench.sh

fuzz: deps-test
	BUILD=$(BUILD) tests/fuzz/run.sh

# the reliability scripts of make test, longer (about 5 minutes)
reliability: deps-test
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	@fail=0; for s in durability abuse fuzz malformed; do \
	  DURABILITY_ROUNDS=40 ABUSE_SECONDS=30 ABUSE_IDLE=6000 ABUSE_SLOW=300 FUZZ_SECONDS=60 \
	  BUILD=$(BUILD) bash tests/integration/$$s.sh || fail=1; done; exit $$fail

# the OpenAPI spec, linted with Redocly (npm; a pinned release: "@1" took
# 1.34.21, whose @redocly/respect-core@1.34.21 the registry does not have);
# the container image (podman or docker)
lint-spec:
	npx --yes @redocly/cli@1.34.20 lint api/openapi.yaml
image:
	@if command -v podman >/dev/null; then podman build --format docker -f docker/Dockerfile -t collisiond .; \
	 else docker build -f docker/Dockerfile -t collisiond .; fi

# ---- store backends: the persistence races at length (bounded in make test)
RACE_TRIALS ?= 500
RACE_ROUNDS ?= 6
stress-persist: deps-test
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	BUILD=$(BUILD) RACE_TRIALS=$(RACE_TRIALS) RACE_ROUNDS=$(RACE_ROUNDS) bash tests/integration/persist_races.sh
SIZE_MB ?= 1024
bench-replicas: deps-test
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	BUILD=$(BUILD) SIZE_MB=$(SIZE_MB) bench/replicas_ready.sh

-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d)

clean:
	rm -rf build

# ---- memory (issue 10): peak RSS per request kind, and the long soak
#   make stress   upload peaks (JSON/OBJ/STL, STRESS_MIB MiB bodies), the big
#                 response, and a STRESS_SOAK_S-second soak summary
#   make soak     the 10-minute mixed soak; fails past 5 % RSS growth after warm-up
STRESS_MIB ?= 32
STRESS_SOAK_S ?= 60
SOAK_S ?= 600
.PHONY: stress soak
stress: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	python3 tests/stress/mem_stress.py $(BUILD)/collisiond --size-mib $(STRESS_MIB) --check
	python3 tests/stress/soak.py $(BUILD)/collisiond --phases 5 --phase-requests 300 --clients 4 --max-phase-growth 10
	python3 tests/stress/soak.py $(BUILD)/collisiond --seconds $(STRESS_SOAK_S) --clients 4 --checkpoint 15 --settle 2.5 --warmup 0.2
soak: deps
	@$(MAKE) --no-print-directory $(BUILD)/collisiond
	python3 tests/stress/soak.py $(BUILD)/collisiond --seconds $(SOAK_S) --clients 4 --args "--threads 8" --checkpoint 60 --settle 2.5 --warmup 0.2 --max-growth 5 --csv $(BUILD)/soak.csv

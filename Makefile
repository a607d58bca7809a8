# zbench: the one build entry point.
#
#   make                  host program ./zbench and the static guest binaries in guest/
#   make test             unit, golden, fuzz-corpus, security and integration tests (integration
#                         boots VMs), and the host tests again under ASan and UBSan (two lanes);
#                         with SANITIZE set, only the host tests, sanitized
#   make fuzz             run each libFuzzer target for FUZZ_SECONDS (default 60)
#   make integration-slow integration tests that build OpenZFS from source (tens of minutes;
#                         not part of make test): bisect.sh; and slurm.sh (a Slurm of its own)
#   make run              install what is missing, build, build or reuse the image, run quick.json
#   make check-format     clang-format check;  make analyze: clang-tidy/cppcheck
#   DEVELOPER=1           -Werror and the strict warning list
#   SANITIZE=address,undefined   build everything with sanitizers
#   V=1                   show the commands

CC ?= cc
CFLAGS ?= -O2 -g
# The host's stages as floors, from the ground up: each may include the ones before it, never
# one after it (docs/architecture.md names the exceptions; tests/includes.sh checks both).
# A header of another folder is written with it ("run/channel.h", "guest/units.h"): -Ibuilder
# and -I. find it, so no -I order can pick between two headers of one name. The guest's own
# sources find theirs with -Iguest -Iguest/engine.
HOST_DIRS = builder/core builder/diskmodel builder/image builder/vm builder/matrix builder/run builder/report builder/cli
CPPFLAGS += -D_GNU_SOURCE -Ibuilder -I. -Iguest -Iguest/engine
WARN = -Wall -Wextra -Wformat=2 -Wshadow -Wpointer-arith -Wstrict-prototypes \
       -Wmissing-prototypes -Wno-unused-parameter -Wvla
ifdef DEVELOPER
WARN += -Werror
endif
ifdef SANITIZE
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ALL_CFLAGS = $(CFLAGS) $(WARN) $(SANFLAGS) -MMD -MP
HOST_LIBS = -ljansson -lsqlite3 -lcrypto -laio -luring -lblkid -lvirt -lguestfs -lpthread -lm
# The guest binaries go into the image and so into its cache key: the same source must give the
# same bytes in any checkout directory (no build path in the debug info).
GUEST_REPRO = -ffile-prefix-map=$(CURDIR)=.
GUEST_LIBS = -Wl,-Bstatic -ljansson -laio -luring -lpthread -lm
BUILD = build
# `make test` builds with one job per core (a clean tree: about 90 s on one of 2 cores)
NPROC := $(shell nproc 2>/dev/null || echo 1)

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '   CC ' $@;
QUIET_LINK = @echo ' LINK ' $@;
QUIET_AR = @echo '   AR ' $@;
endif

# --- sources: one file per concern (docs/architecture.md) ---------------------------------
SHARED_SRCS = guest/units.c guest/proto.c guest/phase.c

ENGINE_SRCS = guest/engine/options.c guest/engine/options_table.c guest/engine/options_hooks.c guest/engine/ioengines.c guest/engine/ioengine_psync.c guest/engine/ioengine_libaio.c guest/engine/ioengine_io_uring.c guest/engine/workload.c guest/engine/workload_worker.c guest/engine/workload_gen.c guest/engine/workload_dist.c guest/engine/buffers.c guest/engine/rate.c guest/engine/stats.c guest/engine/output_json.c guest/engine/output_normal.c guest/engine/iozone.c guest/engine/output_iozone.c

# The host: every .c in the stage folders (HOST_DIRS, in pipeline order; a new file in a folder
# is built without touching this list), plus the guest's fio option mapping, which the host
# checks matrices with. The two programs' main() files stay out of the archive.
HOST_MAINS = builder/cli/main.c builder/cli/gen_docs.c
# The disk model's nbdkit filter is a plug-in of nbdkit, not a part of zbench (below).
DM_FILTER_SRC = builder/diskmodel/nbdkit_filter.c
HOST_SRCS = $(filter-out $(DM_FILTER_SRC),$(sort $(wildcard $(addsuffix /*.c,$(HOST_DIRS))))) guest/fio_job.c

AGENT_SRCS = guest/agent.c guest/agent_boot.c guest/agent_channel.c guest/agent_zfs.c \
	guest/agent_report.c guest/agent_workload.c guest/agent_fio.c guest/fio_job.c guest/agent_cmd.c guest/agent_warm.c \
	guest/telemetry.c

ENGINE_MAIN = guest/engine/main.c

# Host objects (dynamic, sanitizable) and guest objects (static) are built separately.
# Everything of the host but main() goes into one archive, libzbench.a: zbench, the unit tests,
# the VM golden printer and the fuzz drivers link it, and the linker takes from it only the
# objects each program uses. The engine's sources are in it because the host checks workload
# options with the engine's own table (guest/engine/options*.c); zbench links that table and
# what it needs, not the engine's workload, statistics and output code (the unit tests of the
# engine link those).
HOST_OBJS = $(patsubst %.c,$(BUILD)/host/%.o,$(HOST_SRCS) $(SHARED_SRCS) $(ENGINE_SRCS))
HOSTLIB_OBJS = $(filter-out $(patsubst %.c,$(BUILD)/host/%.o,$(HOST_MAINS)),$(HOST_OBJS))
HOSTLIB = $(BUILD)/host/libzbench.a
AGENT_OBJS = $(patsubst %.c,$(BUILD)/guest/%.o,$(AGENT_SRCS) $(SHARED_SRCS))
ENGINE_OBJS = $(patsubst %.c,$(BUILD)/guest/%.o,$(ENGINE_MAIN) $(ENGINE_SRCS) $(SHARED_SRCS))
# The engine also runs on the host (validation against fio, bench/): same sources, dynamic.
ENGINE_HOST_OBJS = $(patsubst %.c,$(BUILD)/host/%.o,$(ENGINE_MAIN) $(ENGINE_SRCS) $(SHARED_SRCS))

UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

PROGRAMS = zbench guest/zbench-agent guest/zbench-engine $(BUILD)/zbench-engine-host

# Files generated from the schema and command tables (builder/cli/gen_docs.c): built here under
# build/gen/, committed at their places by `make generated`, checked by tests/generated.sh.
GEN = $(BUILD)/zbench-gen
GENERATED = schema:docs/zbench-matrix.schema.json man1:docs/zbench.1 man5:docs/zbench-matrix.5 \
	bash:contrib/completion/zbench.bash zsh:contrib/completion/_zbench
GEN_OUT = $(foreach g,$(GENERATED),$(BUILD)/gen/$(notdir $(word 2,$(subst :, ,$(g)))))

all: $(PROGRAMS) $(GEN_OUT) diskmodel

# The disk service-time model as an nbdkit filter (docs/disks.md): the model's sources (the same
# files zbench links; not the JSON renderer) and the filter, position-independent, without
# sanitizers (nbdkit loads it into a process that has no sanitizer runtime).
DM_SO = $(BUILD)/zbench-diskmodel.so
DM_SO_SRCS = $(filter-out builder/diskmodel/dm_stats_json.c,$(wildcard builder/diskmodel/*.c))
DM_SO_OBJS = $(patsubst %.c,$(BUILD)/pic/%.o,$(DM_SO_SRCS))
.PHONY: diskmodel
diskmodel: $(DM_SO)
$(DM_SO): $(DM_SO_OBJS)
	$(QUIET_LINK)$(CC) -shared $(CFLAGS) -o $@ $^ -lpthread -lm
$(BUILD)/pic/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

zbench: $(BUILD)/host/builder/cli/main.o $(HOSTLIB)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@ $^ $(HOST_LIBS)

# Rebuilt whole, in one `ar` call, when any object changes: `rm` first, so an object whose source
# left HOST_SRCS does not linger, and so builder/stats.o and guest/engine/stats.o (one member
# name) are both added rather than one replacing the other; ld finds each through the index.
$(HOSTLIB): $(HOSTLIB_OBJS)
	@rm -f $@
	$(QUIET_AR)$(AR) rcs $@ $^

# Static guest binaries: never sanitized (they run as PID 1 in a minimal initramfs).
guest/zbench-agent: $(AGENT_OBJS)
	$(QUIET_LINK)$(CC) -static $(CFLAGS) -o $@ $^ $(GUEST_LIBS)

guest/zbench-engine: $(ENGINE_OBJS)
	$(QUIET_LINK)$(CC) -static $(CFLAGS) -o $@ $^ $(GUEST_LIBS)

$(GEN): $(BUILD)/host/builder/cli/gen_docs.o $(HOSTLIB)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@ $^ $(HOST_LIBS)

$(GEN_OUT): $(GEN)
	@mkdir -p $(BUILD)/gen
	$(Q)$(foreach g,$(GENERATED),$(GEN) $(word 1,$(subst :, ,$(g))) >$(BUILD)/gen/$(notdir $(word 2,$(subst :, ,$(g)))) &&) true

# $(call splice,COMMAND,MARK,FILE): COMMAND's output replaces what FILE holds between its lines
# <!-- BEGIN MARK --> and <!-- END MARK --> (tests/generated.sh checks the same span).
splice = $(1) >$(BUILD)/gen/splice.in && awk -v f=$(BUILD)/gen/splice.in \
	'/<!-- END $(2) -->/ {skip=0} !skip {print} \
	 /<!-- BEGIN $(2) -->/ {while ((getline l <f) > 0) print l; skip=1}' \
	$(3) >$(BUILD)/gen/splice.out && cp $(BUILD)/gen/splice.out $(3)

# Copy the freshly generated files over the committed ones (review the diff, then commit).
generated: $(GEN_OUT) zbench
	$(Q)$(foreach g,$(GENERATED),mkdir -p $(dir $(word 2,$(subst :, ,$(g)))) && cp $(BUILD)/gen/$(notdir $(word 2,$(subst :, ,$(g)))) $(word 2,$(subst :, ,$(g))) &&) true
	$(Q)$(call splice,./zbench matrix keys,zbench matrix keys,docs/matrix.md)
	$(Q)$(call splice,$(GEN) disks,zbench-gen disks,docs/disks.md)
	$(Q)$(call splice,$(GEN) metrics,zbench-gen metrics,docs/reports.md)
	$(Q)./zbench matrix ledger --markdown $(sort $(wildcard matrices/*.ledger.json)) >$(BUILD)/gen/seeds.md && \
		cp $(BUILD)/gen/seeds.md docs/seeds.md

$(BUILD)/zbench-engine-host: $(ENGINE_HOST_OBJS)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@ $^ $(HOST_LIBS)

# Objects depend on the flags they were built with, so SANITIZE=... or DEVELOPER=1 rebuilds.
FLAGS_NOW = $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(HOST_LIBS) $(GUEST_REPRO)
$(BUILD)/.flags: FORCE
	@mkdir -p $(BUILD)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(FLAGS_NOW)' ]; then echo '$(FLAGS_NOW)' > $@; fi

$(BUILD)/host/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/guest/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(GUEST_REPRO) -DZB_GUEST -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(HOSTLIB) $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(HOST_LIBS)

# The telemetry parser is guest code: its test compiles it in.
$(BUILD)/tests/test_telemetry: guest/telemetry.c

# Fuzz targets (tests/fuzz): with a plain main() driver for the corpus regression test, and
# with libFuzzer (clang) for `make fuzz`.
# one target per tests/fuzz/fuzz_NAME.c, its seed corpus in tests/fuzz/corpus/NAME/
FUZZ_TARGETS = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_DRIVERS = $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(HOSTLIB) $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) -Itests/fuzz $(ALL_CFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(HOST_LIBS)

# The same archive for libFuzzer, its objects built once by clang with coverage instrumentation
# (fuzzer-no-link) for every target.
LIBFUZZER_SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -g -O1
LIBFUZZER_SRCS = $(filter-out builder/cli/main.c,$(HOST_SRCS)) $(SHARED_SRCS) $(ENGINE_SRCS)
LIBFUZZER_LIB = $(BUILD)/libfuzzer/libzbench.a
$(BUILD)/libfuzzer/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)clang $(CPPFLAGS) -fsanitize=fuzzer-no-link $(LIBFUZZER_SAN) -MMD -MP -c -o $@ $<
$(LIBFUZZER_LIB): $(patsubst %.c,$(BUILD)/libfuzzer/obj/%.o,$(LIBFUZZER_SRCS))
	@rm -f $@
	$(QUIET_AR)$(AR) rcs $@ $^
$(BUILD)/libfuzzer/fuzz_%: tests/fuzz/fuzz_%.c $(LIBFUZZER_LIB)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)clang $(CPPFLAGS) -Itests/fuzz -fsanitize=fuzzer $(LIBFUZZER_SAN) -o $@ $^ $(HOST_LIBS)

# --- tests ----------------------------------------------------------------------------------
.PHONY: all generated test unit golden security integration integration-slow fuzz fuzz-corpus run deps image check-format format \
	analyze clean FORCE

# Like `make run`, `make test` first installs what the machine lacks (a second or two when
# nothing is missing), so it is the one command a new machine needs (.ci/run calls it).
ifdef SANITIZE
# With sanitizers, the tests that boot no VM (a developer's check; `make test` runs them too, in
# its sanitize lane).
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all
	$(Q)$(MAKE) --no-print-directory test-host
else
# Two lanes: (1) the tests that boot no VM (about 2.5 minutes), then the same built with
# AddressSanitizer and UBSan at the lowest CPU priority (test-sanitize); (2) the default image
# (cached: a second; on a fresh machine its root and DKMS build, about 10 minutes), then the
# integration tests, two at a time (the cloud flavor and the import fixtures are built by the
# tests that boot them, beside the others). The niced sanitize lane takes the CPU time that the
# single-threaded parts of lane 2 leave.
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all
	$(Q)$(MAKE) --no-print-directory -j2 test-lane-host test-lane-vm
endif

.PHONY: test-lane-host test-lane-vm
test-lane-host:
	$(Q)$(MAKE) --no-print-directory test-host
	$(Q)$(MAKE) --no-print-directory test-sanitize
test-lane-vm:
	$(Q)$(MAKE) --no-print-directory test-image
	$(Q)$(MAKE) --no-print-directory integration

.PHONY: test-host test-image test-sanitize
test-host:
	$(Q)$(MAKE) --no-print-directory -j1 unit golden fuzz-corpus security
test-image: all
	$(Q)tests/build-image.sh images/debian12-zfs.json

# test-host with SANITIZE=address,undefined in a copy of the source tree under $(SAN_TREE), so
# that its sanitized ./zbench and objects never replace the ones the integration tests run (the
# guest binaries are built without sanitizers either way). Its lines are prefixed "sanitize:".
SAN_TREE = $(BUILD)/sanitize
test-sanitize:
	$(Q)tests/sanitize.sh $(SAN_TREE)

# the runner's own verdicts first (a leak report after a clean summary is a failure), then the tests
unit: $(UNIT_TESTS)
	$(Q)tests/run-unit-check.sh
	$(Q)tests/run-unit.sh $(UNIT_TESTS)

# The VM backends' command line and domain XML per cell (tests/golden/vm), without booting.
VM_GOLDEN = $(BUILD)/tests/vm-golden
$(VM_GOLDEN): tests/golden/vm/print.c $(HOSTLIB) $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(HOST_LIBS)

# the guest binaries too: exit-status.sh asks `image path`, whose key hashes them (a clean clone has none)
golden: zbench guest/zbench-agent guest/zbench-engine $(BUILD)/zbench-engine-host $(VM_GOLDEN) $(GEN) $(DM_SO)
	$(Q)VM_GOLDEN=$(VM_GOLDEN) tests/golden/run.sh
	$(Q)ENGINE=$(BUILD)/zbench-engine-host tests/engine-fsync.sh
	@# the disk-model filter's completion waits against fio, no VM (about 8 s)
	$(Q)SO=$(CURDIR)/$(DM_SO) tests/diskmodel-filter.sh
ifndef SANITIZE
	@# our engine against fio per I/O (issue 31; 20-35 s under load); not sanitized: its floors are costs
	$(Q)ENGINE=$(BUILD)/zbench-engine-host tests/engine-vs-fio-short.sh
endif
	$(Q)tests/matrices.sh
	$(Q)tests/fio-examples.sh
	$(Q)tests/export.sh
	$(Q)tests/history.sh
	$(Q)tests/reproducible.sh
	$(Q)tests/exit-status.sh
	$(Q)tests/json-output.sh
	$(Q)tests/merge-canon.sh
	$(Q)tests/merge-shards.sh
	$(Q)tests/slurm-submit.sh
	$(Q)tests/workflow.sh
	$(Q)GEN=$(GEN) tests/generated.sh
	$(Q)tests/includes.sh
	$(Q)tests/paths.sh

# Real VMs: the quick matrix, every failure class, kill and resume, the configuration space.
# Longest first (docs/performance.md, "Integration suite"), INTEGRATION_JOBS at a time: most of
# a test's time is one guest CPU's emulation, so on 2 cores two tests side by side cost little
# more than one.
INTEGRATION = $(wildcard tests/integration/warm.sh tests/integration/import.sh \
	tests/integration/faults.sh tests/integration/config.sh tests/integration/libvirt.sh \
	tests/integration/cloud.sh tests/integration/hosts.sh tests/integration/hosts-session.sh \
	tests/integration/phases.sh tests/integration/run.sh tests/integration/hosts-ssh.sh \
	tests/integration/resume.sh tests/integration/fio.sh tests/integration/parallel.sh \
	tests/integration/engines.sh tests/integration/shards.sh tests/integration/adaptive.sh \
	tests/integration/ab.sh tests/integration/buses.sh tests/integration/fiojob.sh \
	tests/integration/diskmodels.sh tests/integration/diskmodel-kill.sh tests/integration/sides.sh)
INTEGRATION_JOBS ?= 2
integration: all
	$(Q)JOBS=$(INTEGRATION_JOBS) tests/run-integration.sh $(INTEGRATION)

# Real VMs on images built from source: a cold OpenZFS build is 10+ minutes on 2 cores, so these
# stay out of make test and make integration (docs/compare.md, "Bisect").
# slurm.sh starts a Slurm of its own (slurmctld, slurmd, munge: installed by install-deps.sh
# --slurm, which only this target asks for) and runs a 4-cell array through it (docs/scale-out.md).
# gate.sh runs an adaptive A/A gate: up to 10 repeats a side (20 VMs, up to 20 minutes under TCG).
INTEGRATION_SLOW = tests/integration/bisect.sh tests/integration/slurm.sh tests/integration/gate.sh
integration-slow: all
	$(Q)builder/install-deps.sh --slurm
	$(Q)JOBS=1 tests/run-integration.sh $(INTEGRATION_SLOW)

# Hostile inputs (docs/security.md): run dirs, matrices, URIs, qcow2 files, devices held open.
# No VMs; each script prints "<name>: N passed, N failed".
SECURITY = $(wildcard tests/security/*.sh)
security: all
	$(Q)rc=0; for t in $(SECURITY); do echo "== $$t"; $$t || rc=1; done; exit $$rc

fuzz-corpus: $(FUZZ_DRIVERS)
	$(Q)for t in $(FUZZ_TARGETS); do $(BUILD)/fuzz/fuzz_$$t tests/fuzz/corpus/$$t || exit 1; done

FUZZ_SECONDS ?= 60
fuzz: $(patsubst %,$(BUILD)/libfuzzer/fuzz_%,$(FUZZ_TARGETS))
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz-corpus/$$t && \
		$(BUILD)/libfuzzer/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
			-print_final_stats=1 $(BUILD)/fuzz-corpus/$$t tests/fuzz/corpus/$$t \
			2>&1 | grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|ERROR|SUMMARY|Done' || exit 1; \
	done

# --- the main job ---------------------------------------------------------------------------
deps:
	$(Q)builder/install-deps.sh

image: deps all
	$(Q)./zbench image build images/debian12-zfs.json

run: image
	$(Q)./zbench run matrices/quick.json

# --- hygiene --------------------------------------------------------------------------------
FORMAT_SRCS = $(wildcard builder/*/*.[ch] guest/*.[ch] guest/engine/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch])

check-format:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)

format:
	$(Q)clang-format -i $(FORMAT_SRCS)

analyze:
	$(Q)cppcheck --quiet --enable=warning,performance,portability --error-exitcode=1 \
		$(CPPFLAGS:-D%=) builder guest

clean:
	rm -rf $(BUILD) zbench guest/zbench-agent guest/zbench-engine

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

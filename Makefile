# libsokovan - top-level build.
#
#   make                     library (shared + static), programs, benchmarks
#   make check               build and run every Check suite, the header test,
#                            the ABI check, the installed-example test and
#                            check-sql (no SQL outside src/manager/store/)
#   make check T="slots"     only the named suites (tests/test_<name>.c, and
#                            the non-Check suites: python, embed, go)
#   make install-python      pip install the Python binding (PYTHON=...)
#   make SANITIZE=address,undefined check   the same under ASan/UBSan
#   make install PREFIX=/usr/local   /  make uninstall PREFIX=...
#   make deps                install the Debian packages the build needs
#   make demo                the README's main job
#   make image-interactive   the Jupyter + sshd image (examples/interactive)
#
# Sources are found by layout, so a new module needs no edit here:
#   src/<module>/*.c -> the library     tests/test_<name>.c -> one Check suite
#   daemons/<prog>/*.c -> a program     bench/<name>/*.c -> a benchmark
#   tests/so/<name>.c -> a test plugin  examples/*.c -> installed-lib examples

VERSION_MAJOR := 0
VERSION_MINOR := 1
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=

CC ?= cc
CXX ?= c++
PKG_CONFIG ?= pkg-config

ifneq ($(SANITIZE),)
BUILD ?= build-san
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT ?= -O1
else
BUILD ?= build
SAN_FLAGS :=
OPT ?= -O2
endif

# Debian packages: the build's dependencies (see `make deps`).
DEB_PACKAGES := build-essential pkg-config libuv1-dev libsqlite3-dev \
	libmsgpack-dev libnuma-dev libhwloc-dev libcap-dev libseccomp-dev \
	libsodium-dev libarchive-dev libmnl-dev libnftables-dev libinih-dev libmicrohttpd-dev libssl-dev libyaml-dev libh2o-dev \
	libbtrfsutil-dev btrfs-progs libpq-dev postgresql \
	check hwloc runc iproute2 procps python3 busybox-static tar \
	python3-venv python3-setuptools python3-wheel-whl python3-websocket \
	python3-websockets wrk openssl golang-go mmdebstrap openssh-client \
	xfsprogs libgoogle-perftools-dev
# make fuzz (tests/fuzz/run.sh): clang and its libFuzzer/sanitizer runtimes,
# only a recommendation of clang-14, which deps does not install
DEB_PACKAGES += clang libclang-rt-14-dev

LIB_PKGS := msgpack hwloc libcap libseccomp sqlite3 libsodium libarchive libmnl libnftables libssl libcrypto libbtrfsutil libpq
LIB_LIBS := -lnuma -ldl -lpthread -lm
PROG_PKGS := libuv inih libmicrohttpd yaml-0.1 libh2o
TEST_PKGS := check

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS) $(PROG_PKGS) 2>/dev/null)
LIB_LDLIBS := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS) 2>/dev/null) $(LIB_LIBS)
PROG_LDLIBS := $(shell $(PKG_CONFIG) --libs $(PROG_PKGS) 2>/dev/null)
TEST_LDLIBS := $(shell $(PKG_CONFIG) --libs $(TEST_PKGS) 2>/dev/null)
# sokovan-manager's allocator: tcmalloc (gperftools), 15-20 % less manager
# CPU per session than glibc's malloc at 1,000 agents, most of it SQLite's
# (bench/RESULTS.md, "tcmalloc"). The program's choice only: the library
# never picks an allocator for its host. Not under sanitizers, which bring
# their own.
MGR_ALLOC_PKG := libtcmalloc_minimal
MGR_ALLOC_LIBS := $(if $(SANITIZE),,$(shell $(PKG_CONFIG) --libs $(MGR_ALLOC_PKG) 2>/dev/null))

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers -Wno-format-truncation
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) $(SAN_FLAGS) \
	-Iinclude -Isrc/include $(PKG_CFLAGS)
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -DSKV_BUILDING_LIBRARY
PROG_CFLAGS := $(BASE_CFLAGS)
LDFLAGS += $(SAN_FLAGS)

MODULES ?= $(filter-out include,$(patsubst src/%/,%,$(wildcard src/*/)))
# A module may keep sub-folders of one job each (src/manager/store/).
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c src/$(m)/*/*.c))
LIB_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))

SONAME := libsokovan.so.$(VERSION_MAJOR)
SHLIB := $(BUILD)/lib/libsokovan.so.$(VERSION)
STLIB := $(BUILD)/lib/libsokovan.a
MAPFILE := src/libsokovan.map

# daemons/common/ is not a program: its sources are linked into every one.
PROGS ?= $(filter-out common,$(patsubst daemons/%/,%,$(wildcard daemons/*/)))
DAEMON_COMMON := $(wildcard daemons/common/*.c)
PROG_BINS := $(addprefix $(BUILD)/bin/,$(PROGS))
BENCHES ?= $(patsubst bench/%/,%,$(wildcard bench/*/))
BENCH_BINS := $(addprefix $(BUILD)/bench/,$(BENCHES))

ALL_SUITES := $(patsubst tests/test_%.c,%,$(wildcard tests/test_*.c))
# Suites that are not Check suites: the Python binding's unittest suite run
# from a fresh virtual environment, and the C embedding example.
EXTRA_SUITES := python embed go
T ?= $(ALL_SUITES) $(EXTRA_SUITES)
C_T := $(filter-out $(EXTRA_SUITES),$(T))
TEST_SRCS := $(addprefix tests/test_,$(addsuffix .c,$(C_T))) $(filter-out tests/test_%.c,$(wildcard tests/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(BUILD)/tests/obj/%.o,$(TEST_SRCS))
TEST_BIN := $(BUILD)/tests/skv-tests
TEST_SOS := $(patsubst tests/so/%.c,$(BUILD)/tests/so/%.so,$(wildcard tests/so/*.c))

PUBLIC_HEADERS := $(wildcard include/sokovan/*.h)

.PHONY: all lib progs benches check check-sql check-unit check-bindings check-python check-embed check-go install-python headertest tests/headertest \
	abicheck check-example install uninstall deps demo demo-stop demo-library clean bench-run fuzz
.DELETE_ON_ERROR:

all: lib progs benches

lib: $(SHLIB) $(STLIB)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(SHLIB): $(LIB_OBJS) $(MAPFILE)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(MAPFILE) \
		-Wl,--no-undefined $(LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_LDLIBS)
	ln -sf libsokovan.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/lib/libsokovan.so

$(STLIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# Programs and benchmarks link the static library: no LD_LIBRARY_PATH needed.
progs: $(PROG_BINS)
.SECONDEXPANSION:
$(BUILD)/bin/%: $$(wildcard daemons/%/*.c) $$(wildcard daemons/%/*.h) \
		$(DAEMON_COMMON) $$(wildcard daemons/common/*.h) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -Idaemons/$* -Idaemons/common -o $@ \
		$(wildcard daemons/$*/*.c) $(DAEMON_COMMON) \
		$(STLIB) $(LDFLAGS) $(LIB_LDLIBS) $(PROG_LDLIBS) $(PROG_ALLOC_LIBS)

$(BUILD)/bin/sokovan-manager: PROG_ALLOC_LIBS = $(MGR_ALLOC_LIBS)
$(BUILD)/bin/sokovan-manager: | need-mgr-alloc
.PHONY: need-mgr-alloc check-alloc
need-mgr-alloc:
	@[ -n "$(SANITIZE)" ] || $(PKG_CONFIG) --exists $(MGR_ALLOC_PKG) || { \
		echo "sokovan-manager links tcmalloc: $(MGR_ALLOC_PKG).pc not found" \
		"(apt-get install libgoogle-perftools-dev, or make deps)" >&2; exit 1; }

# The manager really runs on tcmalloc: its NEEDED entries name it.
check-alloc: $(BUILD)/bin/sokovan-manager
	@if [ -n "$(SANITIZE)" ]; then echo "check-alloc: sanitizer build, glibc/ASan allocator"; \
	elif readelf -d $< | grep -q 'NEEDED.*libtcmalloc_minimal'; then \
		echo "check-alloc: sokovan-manager runs on tcmalloc"; \
	else echo "check-alloc: sokovan-manager is not linked with tcmalloc" >&2; exit 1; fi

benches: $(BENCH_BINS)
$(BUILD)/bench/%: $$(wildcard bench/%/*.c) $$(wildcard bench/%/*.h) tests/e2e_cluster.h $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -Ibench/$* -o $@ $(wildcard bench/$*/*.c) \
		$(STLIB) $(LDFLAGS) $(LIB_LDLIBS) $(PROG_LDLIBS)

bench-run: benches
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# ---- tests ---------------------------------------------------------------

$(BUILD)/tests/suites.inc: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(foreach s,$(C_T),"SKV_SUITE($(s))") > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
FORCE:

$(BUILD)/tests/obj/%.o: tests/%.c $(BUILD)/tests/suites.inc
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -I$(BUILD)/tests -Itests -Idaemons/common -MMD -MP -c $< -o $@

$(TEST_BIN): $(TEST_OBJS) $(STLIB)
	$(CC) -o $@ $(TEST_OBJS) $(STLIB) $(LDFLAGS) $(LIB_LDLIBS) $(TEST_LDLIBS) \
		$(PROG_LDLIBS)

$(BUILD)/tests/so/%.so: tests/so/%.c $(PUBLIC_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -shared $(LDFLAGS) -o $@ $<

check: check-sql check-alloc $(if $(C_T),check-unit) headertest abicheck check-example \
	$(if $(filter python,$(T)),check-python) $(if $(filter embed,$(T)),check-embed) \
	$(if $(filter go,$(T)),check-go)

# The manager's store is the only code that speaks SQL (tests/check-sql.sh).
check-sql:
	@sh tests/check-sql.sh

# The Python binding (bindings/python): pip-installed into a fresh virtual
# environment, then its unittest suite run against the staged install of
# check-example, found through pkg-config (no SOKOVAN_LIB). Under the
# sanitizers the ASan runtime must be loaded first, Python's own intentional
# leaks are not ours to report, and freed memory is not quarantined (the
# leak tests watch RSS).
PYTHON ?= python3
PYENV := $(BUILD)/pyenv
# Debian's setuptools 66 builds wheels through the separate `wheel` package
# (python3-wheel-whl ships it as a wheel file: no index needed).
WHEEL_WHL = $(firstword $(wildcard /usr/share/python-wheels/wheel-*.whl))
ifneq ($(SANITIZE),)
PY_ENV := LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) \
	ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=0
endif
check-python: check-example progs
	rm -rf $(PYENV)
	$(PYTHON) -m venv $(PYENV)
	$(PYENV)/bin/python -c 'import setuptools.command.bdist_wheel' 2>/dev/null || \
		$(PYENV)/bin/python -c 'import wheel' 2>/dev/null || \
		$(PYENV)/bin/pip install -q --no-index $(or $(WHEEL_WHL),wheel)
	$(PYENV)/bin/pip install -q --no-build-isolation bindings/python
	cd $(PYENV) && env -u SOKOVAN_LIB PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig \
		SKV_TEST_BUILD_DIR=$(abspath $(BUILD)) SKV_TEST_SRC_DIR=$(CURDIR) $(PY_ENV) \
		bin/python -m unittest discover -v -s $(CURDIR)/bindings/python/tests
check-bindings: check-python

# examples/embed: another orchestrator's loop linking the staged install
# through pkg-config, built by its own Makefile and run.
check-embed: check-example
	@mkdir -p $(BUILD)/examples/embed
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(MAKE) --no-print-directory -C examples/embed \
		run OUT=$(abspath $(BUILD))/examples/embed CC="$(CC)" \
		CFLAGS="-std=c11 -O2 -Wall -Wextra -Werror $(SAN_FLAGS)"

# The Go binding (bindings/go) and examples/go: `go test ./...` in each
# module against the staged install, found through pkg-config (the client
# tests start the built daemons; the scheduler plugin test loads the C
# suite's test plugins, $(TEST_SOS)). Standard
# library and cgo only: no module proxy (GOPROXY=off), caches under
# $(BUILD). Without go: a failure in CI (make deps installs golang-go), SKIP
# with the reason by hand. Under the sanitizers the ASan runtime must be
# loaded first, and the Go runtime's own allocations are not ours to report.
GO ?= go
# The go command does not see changes to C headers outside a package, so
# the public headers' digest goes into the cgo flags: a changed struct
# rebuilds the binding instead of leaving a stale layout in the cache.
GO_HDR_DIGEST = $(shell cat $(PUBLIC_HEADERS) | sha256sum | cut -c1-16)
GO_ENV = env -u GOFLAGS CGO_CFLAGS="-g -O2 -DSKV_HEADERS_DIGEST=$(GO_HDR_DIGEST)" GOPROXY=off GOSUMDB=off GO111MODULE=on GOTOOLCHAIN=local \
	GOCACHE=$(abspath $(BUILD))/gocache GOPATH=$(abspath $(BUILD))/gopath \
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig LD_LIBRARY_PATH=$(STAGE)/lib \
	SKV_TEST_BUILD_DIR=$(abspath $(BUILD)) SKV_TEST_SRC_DIR=$(CURDIR) \
	CGO_ENABLED=1 CC="$(CC)" $(if $(SANITIZE),CGO_LDFLAGS="$(SAN_FLAGS)") $(PY_ENV)
GO_MODULES := bindings/go examples/go
check-go: check-example progs $(TEST_SOS)
	@if ! command -v $(GO) >/dev/null 2>&1; then \
		if [ -n "$$CI" ]; then echo "check-go: '$(GO)' not found (make deps installs golang-go)"; exit 1; fi; \
		echo "SKIP go: '$(GO)' not found (apt-get install golang-go, or make deps)"; exit 0; \
	fi; \
	for m in $(GO_MODULES); do \
		echo "go test ./... in $$m"; \
		log=$(abspath $(BUILD))/go-test-$$(echo $$m | tr / -).log; \
		(cd $$m && $(GO_ENV) $(GO) vet ./... && $(GO_ENV) $(GO) test -count=1 -v ./... > $$log 2>&1); \
		rc=$$?; grep -E '^(--- |ok |FAIL|panic)|SKIP' $$log; \
		[ $$rc -eq 0 ] || { tail -40 $$log; echo "go test in $$m failed (log: $$log)"; exit 1; }; \
	done

install-python:
	$(PYTHON) -m pip install --no-build-isolation $(PIP_FLAGS) bindings/python

check-unit: $(TEST_BIN) $(TEST_SOS) $(PROG_BINS) $(BUILD)/bench/manager
	SKV_TEST_BUILD_DIR=$(abspath $(BUILD)) SKV_TEST_SRC_DIR=$(CURDIR) \
		$(TEST_BIN)

# Every public header alone: C99 -pedantic and C++.
headertest tests/headertest: $(PUBLIC_HEADERS) include/sokovan.h
	@mkdir -p $(BUILD)/headertest
	@for h in $(PUBLIC_HEADERS:include/%=%) sokovan.h; do \
		printf '#include <%s>\n#include <%s>\nint skv_headertest_main(void);\nint skv_headertest_main(void) { return 0; }\n' $$h $$h \
			> $(BUILD)/headertest/t.c; \
		$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only \
			$(BUILD)/headertest/t.c || { echo "headertest: $$h fails as C99"; exit 1; }; \
		$(CXX) -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -Iinclude \
			-fsyntax-only $(BUILD)/headertest/t.c || { echo "headertest: $$h fails as C++"; exit 1; }; \
	done
	@echo "headertest: $(words $(PUBLIC_HEADERS)) headers + umbrella OK as C99 and C++"

# The shared object exports skv_* and nothing else.
abicheck: $(SHLIB)
	@bad=$$(nm -D --defined-only $(SHLIB) | awk '{print $$3}' | \
		grep -v '^SOKOVAN_' | grep -v '^skv_[a-z0-9]' ; \
		nm -D --defined-only $(SHLIB) | awk '{print $$3}' | grep '^skv__'); \
	if [ -n "$$bad" ]; then echo "abicheck: unexpected exports:"; echo "$$bad"; exit 1; fi
	@n=$$(nm -D --defined-only $(SHLIB) | grep -c ' skv_'); \
	echo "abicheck: $$n skv_* symbols exported, soname $$(objdump -p $(SHLIB) | awk '/SONAME/{print $$2}')"

# Build each example against an installed copy through pkg-config, then run it.
STAGE := $(abspath $(BUILD))/stage
check-example: lib
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) BUILD=$(BUILD) SANITIZE=$(SANITIZE)
	@mkdir -p $(BUILD)/examples
	@for ex in $(wildcard examples/*.c); do \
		out=$(BUILD)/examples/$$(basename $$ex .c); \
		$(CC) -std=c11 -Wall -Wextra -Werror $(SAN_FLAGS) -o $$out $$ex \
			$$(PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(PKG_CONFIG) --cflags --libs sokovan) \
			|| exit 1; \
		LD_LIBRARY_PATH=$(STAGE)/lib $$out > $$out.log 2>&1 \
			|| { cat $$out.log; echo "example $$ex failed"; exit 1; }; \
		echo "example $$ex: OK (linked against $(STAGE)/lib via pkg-config)"; \
	done

# ---- install -------------------------------------------------------------

$(BUILD)/sokovan.pc: pkgconfig/sokovan.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES_PRIVATE@|$(LIB_PKGS)|' -e 's|@LIBS_PRIVATE@|$(LIB_LIBS)|' \
		$< > $@

install: lib progs FORCE_PC
	install -d $(DESTDIR)$(INCLUDEDIR)/sokovan $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR)
	install -m 644 include/sokovan.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/sokovan/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libsokovan.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsokovan.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(BUILD)/sokovan.pc $(DESTDIR)$(LIBDIR)/pkgconfig/sokovan.pc
	$(if $(PROG_BINS),install -m 755 $(PROG_BINS) $(DESTDIR)$(BINDIR)/)

.PHONY: FORCE_PC
FORCE_PC:
	@rm -f $(BUILD)/sokovan.pc
	@$(MAKE) --no-print-directory $(BUILD)/sokovan.pc PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) BUILD=$(BUILD)

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/sokovan.h
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/sokovan/,$(notdir $(PUBLIC_HEADERS)))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/sokovan 2>/dev/null
	rm -f $(DESTDIR)$(LIBDIR)/libsokovan.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	rm -f $(DESTDIR)$(LIBDIR)/libsokovan.so $(DESTDIR)$(LIBDIR)/libsokovan.a
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/sokovan.pc
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGS))

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; \
	else echo "deps: installing$$missing"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The main job: a local cluster (manager + one agent) on the built-in
# defaults, a busybox image, and a demo session run through the CLI.
# SOKOVAN_DEMO_DIR=DIR (environment or `make demo SOKOVAN_DEMO_DIR=DIR`; make
# passes both to the script) keeps the whole cluster under DIR; demo-stop
# takes the same DIR (docs/cli.md, "The demo cluster").
SHARED := $(CURDIR)/../shared/data
demo: all
	bash examples/local-cluster.sh $(BUILD)

demo-stop:
	bash examples/local-cluster.sh stop $(BUILD)

# The library without daemons: the installed-library example, the node mapper
# on a real DGX-2 topology, and one FGD-experiment replay.
demo-library: all check-example
	@echo "== 1. slots example (installed library via pkg-config)"
	@cat $(BUILD)/examples/*.log
	@echo "== 2. node mapper: 2 GPUs + cores + memory on an NVIDIA DGX-2 topology"
	$(BUILD)/bin/sokovan-topo --xml $(SHARED)/topologies/nvidia-dgx2.xml --topo-gpus \
		--alloc "cuda.device=2,cpu=2,mem=32g" --policy prefer-single-node
	@echo "== 3. scheduler replay of the Alibaba openb trace (FGD experiment, one seed)"
	$(BUILD)/bin/sokovan-sim openb --nodes $(SHARED)/traces/openb/openb_node_list_gpu_node.csv \
		--pods $(SHARED)/traces/openb/openb_pod_list_default.csv --policy frag --seeds 42-42

# The interactive image (examples/interactive): Debian 12 with python3,
# Jupyter Notebook and sshd from the Debian registry (mmdebstrap), declaring
# its services and command in /etc/sokovan/image.json. Import it with
# `sokovan-agent --import-image interactive=$(BUILD)/images/interactive.tar`.
DEBIAN_MIRROR ?= http://deb.debian.org/debian
INTERACTIVE_TAR := $(BUILD)/images/interactive.tar
image-interactive: $(INTERACTIVE_TAR)
$(INTERACTIVE_TAR): $(wildcard examples/interactive/*)
	@mkdir -p $(dir $@)
	examples/interactive/build-image.sh $@ $(DEBIAN_MIRROR)
.PHONY: image-interactive

# Coverage-guided fuzzing of the wire-protocol decoders (clang + libFuzzer).
FUZZ_SECONDS ?= 60
fuzz:
	tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-san

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d)

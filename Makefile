# memspy: `make demo` builds everything and runs memspy on the bundled
# example; `make test` runs the whole test suite (what .ci/run calls).
GO      ?= go
BIN     := bin/memspy
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
BENCHDIR ?= /tmp/memspy-bench
SHARED  := ../shared/traces
PREFIX  ?= /usr/local

.PHONY: all build tool demo test vet fuzz bench bench-run bench-numa bench-where bench-stop bench-sample eval-sample install clean check-go check-valgrind check-corpus check-browser corpus echarts

all: build

check-go:
	@command -v $(GO) >/dev/null || { echo "memspy needs Go (https://go.dev/dl/) on PATH"; exit 1; }

build: check-go tool
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/memspy

# The Valgrind tool (tracer/valgrind/tool/ms_main.c), built against the installed
# Valgrind with Valgrind's own flags, into bin/valgrind/ beside links to the
# core's files: `memspy run` points VALGRIND_LIB there. It is rebuilt when
# the installed Valgrind changes (the tool must match its exact version).
VGINC   := /usr/include/valgrind
VGLIBA  := /usr/lib/x86_64-linux-gnu/valgrind
VGCORE  := /usr/libexec/valgrind
TOOLDIR := bin/valgrind
TOOL    := $(TOOLDIR)/memspy-amd64-linux
PRELOAD := $(TOOLDIR)/vgpreload_memspy-amd64-linux.so
# The preload without its symbols, so without wrappers: loaded by another
# Valgrind tool (LD_PRELOAD), it gives the program the same libraries,
# layout and start-up work as under memspy, for exact comparisons of counts
# (the tests, make corpus).
STANDIN := $(TOOLDIR)/vgpreload_nobody-amd64-linux.so
VGCFLAGS := -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 \
	-m64 -O2 -g -fno-stack-protector -fno-strict-aliasing -fno-builtin -fomit-frame-pointer -fno-pie -Wall
VGLDFLAGS := -m64 -static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
	-Wl,-Ttext-segment=0x58000000 -no-pie

check-valgrind:
	@if ! command -v valgrind >/dev/null || [ ! -f $(VGINC)/pub_tool_basics.h ] || [ ! -f $(VGLIBA)/libcoregrind-amd64-linux.a ]; then \
	  echo "installing valgrind (needs root and the Debian archive)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind gcc; \
	fi
	@mkdir -p $(TOOLDIR)
	@v=$$(valgrind --version); [ "$$(cat $(TOOLDIR)/.valgrind-version 2>/dev/null)" = "$$v" ] || { rm -f $(TOOL); echo "$$v" > $(TOOLDIR)/.valgrind-version; }

tool: check-valgrind $(TOOL)

$(TOOL): tracer/valgrind/tool/ms_main.c tracer/valgrind/tool/memspy.h tracer/valgrind/tool/ms_sync.h \
	  tracer/valgrind/tool/ms_l1.c tracer/valgrind/tool/ms_l1.h \
	  tracer/valgrind/tool/ms_intercepts.c $(TOOLDIR)/.valgrind-version
	gcc -c -o $(TOOLDIR)/ms_main.o $< -I$(VGINC) -Itracer/valgrind/tool $(VGCFLAGS)
	gcc -c -o $(TOOLDIR)/ms_l1.o tracer/valgrind/tool/ms_l1.c $(VGCFLAGS)
	gcc -o $@ $(TOOLDIR)/ms_main.o $(TOOLDIR)/ms_l1.o $(VGLDFLAGS) $(VGLIBA)/libcoregrind-amd64-linux.a $(VGLIBA)/libvex-amd64-linux.a -lgcc $(VGLIBA)/libgcc-sup-amd64-linux.a
	gcc -c -o $(TOOLDIR)/ms_intercepts.o tracer/valgrind/tool/ms_intercepts.c -I$(VGINC) -Itracer/valgrind/tool \
	  -m64 -O2 -g -fpic -fvisibility=hidden -fno-omit-frame-pointer -fno-strict-aliasing -fno-builtin -fno-stack-protector -Wall
	gcc -m64 -shared -nodefaultlibs -Wl,-z,interpose,-z,initfirst -Wl,-z,noexecstack \
	  -o $(PRELOAD) $(TOOLDIR)/ms_intercepts.o
	objcopy --strip-all $(PRELOAD) $(STANDIN)
	@for f in $(VGCORE)/*; do b=$$(basename $$f); [ -e $(TOOLDIR)/$$b ] || ln -s $$f $(TOOLDIR)/$$b; done

# The bundled example: the reference trace of a 96×96 double matrix multiply,
# naive and blocked, on a modern x86 hierarchy with 3C classification.
demo: build
	@mkdir -p bin
	$(GO) run ./examples/matmul -n 96 > bin/matmul-naive.xdin
	$(GO) run ./examples/matmul -n 96 -block 16 > bin/matmul-blocked.xdin
	@echo "== naive i-j-k matrix multiply =="
	$(BIN) sim bin/matmul-naive.xdin --machine x86-modern --classify 3c
	@echo
	@echo "== blocked (16×16) =="
	$(BIN) sim bin/matmul-blocked.xdin --machine x86-modern --classify 3c
	@echo
	@echo "== the same trace as .mst, memspy's compact binary format =="
	$(BIN) convert bin/matmul-blocked.xdin -o bin/matmul-blocked.mst
	@ls -l bin/matmul-blocked.xdin bin/matmul-blocked.mst
	$(BIN) sim bin/matmul-blocked.mst --cache 'L1D:size=32k,assoc=8,line=64' --stats
	@echo
	@echo "== memspy run: an unmodified C program (examples/c/matmul.c, 128x128, blocked 16) under Valgrind =="
	gcc -O2 -g -o bin/matmul examples/c/matmul.c
	$(BIN) run --machine x86-modern -- bin/matmul 128 16
	@echo
	@echo "== memspy run, a partial trace: only while kernel() runs, in a program that marks itself with memspy.h =="
	gcc -O1 -g -Itracer/valgrind/tool -o bin/markers examples/c/markers.c
	$(BIN) run --cache 'L1D:size=4k,assoc=2,line=64,holds=data' --trace-fn kernel -- bin/markers 3
	@echo
	@echo "== where and why: a blocked matrix multiply whose matrix B interferes with itself (examples/where/selfint.c) =="
	gcc -O1 -g -o bin/selfint examples/where/selfint.c
	$(BIN) run --where --profile bin/selfint.memspy --cache 'L1D:size=8K,assoc=1,line=32,holds=d' -- bin/selfint
	@echo "== the saved profile, one view: the references with the most misses and whose fills evicted their lines =="
	$(BIN) report bin/selfint.memspy refs --top 3 --evictors

vet: check-go
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# The tests that run programs under the tool fail (not skip) when it is
# missing, and so does the web UI's test in a headless Chromium (package web).
test: vet build check-corpus check-browser
	MEMSPY_VALGRIND_LIB=$(abspath $(TOOLDIR)) MEMSPY_REQUIRE_TOOL=1 MEMSPY_REQUIRE_BROWSER=1 $(GO) test -count=1 ./...

# Debian's Chromium, which the web UI's browser test drives (chromedp).
check-browser:
	@command -v chromium >/dev/null || { \
	  echo "installing chromium for the web UI's browser test (needs root and the Debian archive)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	}

# Apache ECharts, vendored from npm into web/assets/echarts/ (committed; the
# script checks the version and sha256 it names): run to update it.
echarts:
	./scripts/fetch-echarts.sh

# The corpus of real programs (corpus/, issue 25): check-corpus installs
# what its test runs when missing (COMMAND:PACKAGE); `make corpus` runs it
# with bigger inputs (about a second each natively), one program at a
# time, and prints a table of each mode's outcome, memspy's counts against
# cachegrind's, wall time against cachegrind and valgrind --tool=none, and
# peak memory (1 h 40 min on the project's 2-core machine).
CORPUS_NEEDS := sqlite3:sqlite3 g++:g++ /usr/bin/python3:python3 perl:perl git:git xz:xz-utils gzip:gzip
check-corpus:
	@missing=; for p in $(CORPUS_NEEDS); do command -v $${p%%:*} >/dev/null || missing="$$missing $${p#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing for the corpus test (needs root and the Debian archive)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

corpus: build check-corpus
	MEMSPY_VALGRIND_LIB=$(abspath $(TOOLDIR)) MEMSPY_REQUIRE_TOOL=1 MEMSPY_CORPUS=big $(GO) test -count=1 -timeout 0 -run '^TestCorpus$$' -v ./corpus

# A short run of every fuzz target of every package (the seed corpora also
# run in `make test`).
FUZZTIME ?= 15s
fuzz: check-go
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg || exit 1; \
	  done; \
	done

# References per second on mat_20M (text din and .mst; split L1 + L2, with
# and without 3C) on one core, and peak memory.
bench: build
	BIN=$(BIN) SHARED=$(SHARED) BENCHDIR=$(BENCHDIR) ./scripts/bench.sh

# memspy run against cachegrind, the tracer against --tool=none (issue 3).
bench-run: build
	BIN=$(BIN) ./scripts/bench-run.sh

# Protocol (FlashPoint) against full monitoring of NUMA misses (issue 5).
bench-numa: build
	BIN=$(BIN) ./scripts/bench-numa.sh

# memspy run in full against time and timestep sampling (issue 6).
bench-sample: build
	BIN=$(BIN) ./scripts/bench-sample.sh

# The accuracy of 10% time sampling on the examples (issue 6).
eval-sample: build
	BIN=$(BIN) ./scripts/eval-sample.sh

# The cost of --where and of --where --miss-only on memspy run.
bench-where: build
	BIN=$(BIN) ./scripts/bench-where.sh

# How promptly memspy run stops after Ctrl-C (issue 25).
bench-stop: build
	BIN=$(BIN) ./scripts/bench-stop.sh

# memspy, its Valgrind tool (found from the binary as ../libexec/memspy/valgrind)
# and memspy.h for programs that mark themselves.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/memspy/valgrind $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/memspy
	install -m 755 $(TOOL) $(PRELOAD) $(DESTDIR)$(PREFIX)/libexec/memspy/valgrind/
	@for f in $(VGCORE)/*; do ln -sf $$f $(DESTDIR)$(PREFIX)/libexec/memspy/valgrind/; done
	install -m 644 tracer/valgrind/tool/memspy.h $(DESTDIR)$(PREFIX)/include/memspy.h

clean:
	rm -rf bin

# linerate: see README.md. Every build is static (CGO_ENABLED=0); the race detector in
# `make test` is the one place cgo is used, as the Go toolchain requires.

export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 0
export GOFLAGS := -buildvcs=false

VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# The command line, reports, tuning and device-tree code runs once per command: it is
# built without inlining, which keeps the arm binary in its budget (about 110 KB less
# text); the data paths (netperf/rawsock, frames, iperf3), whose speed is
# benchmarked, keep the compiler's inlining. The last pattern a package matches wins.
MOD := github.com/zynqnet/linerate
GCFLAGS := -gcflags=$(MOD)/...=-l -gcflags=$(MOD)/netperf/...= -gcflags=$(MOD)/netperf/iperf3/command=-l -gcflags=$(MOD)/netperf/engine=-l -gcflags=$(MOD)/netperf/rfc2544=-l
GOBUILD := go build -trimpath -ldflags '$(LDFLAGS)' $(GCFLAGS)
BIN := bin

.PHONY: all build build-arm build-arm64 build-amd64 release check-static check-size size deps test unit lint fuzz bench bench-show bench-iperf3 bench-gen bench-reflect kernels image demo clean

all: build

build:
	$(GOBUILD) -o $(BIN)/linerate ./cmd/linerate

build-arm:
	GOOS=linux GOARCH=arm GOARM=7 $(GOBUILD) -o $(BIN)/linerate-linux-arm ./cmd/linerate

build-arm64:
	GOOS=linux GOARCH=arm64 $(GOBUILD) -o $(BIN)/linerate-linux-arm64 ./cmd/linerate

build-amd64:
	GOOS=linux GOARCH=amd64 $(GOBUILD) -o $(BIN)/linerate-linux-amd64 ./cmd/linerate

release: build-arm build-arm64 build-amd64

# Every release binary must be statically linked: the tester image has no libc.
check-static: release
	@for f in $(BIN)/linerate-linux-arm $(BIN)/linerate-linux-arm64 $(BIN)/linerate-linux-amd64; do \
		desc=$$(file -b $$f); echo "$$f: $$desc"; \
		case "$$desc" in *"statically linked"*) ;; *) echo "$$f is not statically linked" >&2; exit 1;; esac; \
	done

# The board's footprint: a ZC702 boots from 16 MB of QSPI holding FSBL, bitstream and
# U-Boot (~4.7 MB), the kernel (2.5 MB) and the tester image. Goals: the stripped
# linux/arm binary <= 8 MB, the ZC702 image <= 6.5 MB gzipped.
ARM_MAX := 8000000
IMAGE_MAX := 6500000
check-size: build-arm
	@n=$$(stat -c %s $(BIN)/linerate-linux-arm); echo "$(BIN)/linerate-linux-arm: $$n bytes (goal <= $(ARM_MAX))"; \
		[ $$n -le $(ARM_MAX) ] || { echo "the arm binary is over its budget" >&2; exit 1; }

size: check-size deps
	@out=$$(scripts/build-image zc702 2>&1) || { echo "$$out" >&2; exit 1; }
	@n=$$(stat -c %s out/linerate-zc702.cpio.gz); echo "out/linerate-zc702.cpio.gz: $$n bytes gzipped (goal <= $(IMAGE_MAX))"; \
		[ $$n -le $(IMAGE_MAX) ] || { echo "the image is over its budget" >&2; exit 1; }

# Installs what the tests need: Debian packages with apt-get, Go modules through the proxy.
deps:
	scripts/install-deps

lint:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './bin/*' -not -path './out/*')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	GOOS=linux GOARCH=arm GOARM=7 go vet ./...
	GOOS=darwin GOARCH=arm64 go vet ./...

# The one test command (README, .ci/run): lint, static release builds, the kernels of the
# emulated boards (built or fetched once, cached), then every test under the race
# detector: kernel integration tests in network namespaces (root) and the end-to-end
# boots of the emulated ZC702 and ZCU102 included. One package at a time (-p 1): on two
# cores, QEMU emulating a board beside a namespace test of exact frame counts or rates
# starves the sender and the test measures the machine, not linerate.
test: deps lint check-static check-size kernels
	CGO_ENABLED=1 go test -race -count=1 -p 1 -timeout 45m ./...

# The kernels of the emulated boards, cached under /var/cache/linerate.
kernels: deps
	scripts/build-kernel-zc702 >/dev/null
	scripts/fetch-kernel-zcu102 >/dev/null

# The tester image: out/linerate-$(BOARD).cpio.gz and .uInitrd.
BOARD ?= zc702
image: deps
	scripts/build-image $(BOARD)

# The main job: boot the tester image on the emulated ZC702 against the line station in a
# network namespace and validate it with the qemu-zc702 plan; the verdict line decides.
demo: deps build
	scripts/build-kernel-zc702 >/dev/null
	scripts/build-image zc702
	BOARD_UP_STDIN=/dev/null scripts/board-up zc702 --job validate --plan qemu-zc702 --peer station --timeout 600 --log out/serial-zc702.log
	@grep -a '^LINERATE \(PASS\|FAIL\) ' out/serial-zc702.log | tail -1
	@grep -aq '^LINERATE PASS ' out/serial-zc702.log

unit:
	CGO_ENABLED=1 go test -race -count=1 -short ./...

# Every fuzz target of every package (go test -list finds them), each for FUZZTIME; a
# crasher is minimised for at most FUZZMINTIME, so the time goes to fuzzing.
FUZZTIME ?= 30s
FUZZMINTIME ?= 5s
fuzz:
	@for pkg in $$(go list ./...); do \
		for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; \
			go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) $$pkg || exit 1; \
		done; \
	done

bench: bench-show bench-iperf3 bench-gen bench-reflect

bench-show: build
	scripts/bench-show

bench-iperf3: build
	scripts/bench-iperf3

bench-reflect: build
	scripts/install-deps >/dev/null
	scripts/bench-reflect

bench-gen: build
	scripts/install-deps >/dev/null
	scripts/bench-gen

clean:
	rm -rf $(BIN) out

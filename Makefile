# linerate: see README.md. Every build is static (CGO_ENABLED=0); the race detector in
# `make test` is the one place cgo is used, as the Go toolchain requires.

export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 0
export GOFLAGS := -buildvcs=false

VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GOBUILD := go build -trimpath -ldflags '$(LDFLAGS)'
BIN := bin

.PHONY: all build build-arm build-arm64 build-amd64 release check-static check-deps size deps test unit lint fuzz bench bench-show bench-iperf3 bench-gen bench-reflect bench-pace kernels image demo sdcard man docs clean

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

# The board's footprint is the image it boots, not a binary: a ZC702 boots from 16 MB of
# QSPI holding FSBL, bitstream and U-Boot (~4.7 MB), the kernel (2.5 MB) and the tester
# image. Each board's cpio.gz (u-root's busybox of the image's commands and linerate,
# built as scripts/build-image builds it) must stay within IMAGE_MAX bytes; the e2e test
# holds the same bound. What only the station needs stays out of the boards' binaries.
IMAGE_MAX := 6500000
BOARD_NOT := github.com/jackc/pgx|go.etcd.io/bbolt|github.com/prometheus/client_golang|github.com/cilium/ebpf
check-deps:
	@for a in arm arm64; do \
		bad=$$(GOOS=linux GOARCH=$$a GOARM=7 go list -deps ./cmd/linerate | grep -E '^($(BOARD_NOT))' | sort -u); \
		if [ -n "$$bad" ]; then echo "the $$a build of linerate takes in what only the station needs:" >&2; echo "$$bad" >&2; exit 1; fi; \
		echo "linux/$$a linerate: no PostgreSQL, bbolt, Prometheus or BPF loader code"; \
	done

size: deps check-deps
	@scripts/build-kernel-zc702 >/dev/null; scripts/fetch-kernel-zcu102 >/dev/null
	@for b in zc702 zcu102; do \
		out=$$(scripts/build-image $$b 2>&1) || { echo "$$out" >&2; exit 1; }; \
		n=$$(stat -c %s out/linerate-$$b.cpio.gz); echo "out/linerate-$$b.cpio.gz: $$n bytes gzipped (budget $(IMAGE_MAX), $$(( ($(IMAGE_MAX) - n) / 1024 )) KiB left)"; \
		[ $$n -le $(IMAGE_MAX) ] || { echo "the $$b image is over its budget" >&2; exit 1; }; \
	done

# The manual pages, made from the commands' descriptions and flags: man -l out/man/linerate.1
man: build
	$(BIN)/linerate help --man out/man

# The pages made from the code: docs/plans.md from the step kinds' field descriptions.
docs:
	go run ./cmd/linerate help plan --markdown > docs/plans.md

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
test: deps lint check-static check-deps kernels
	CGO_ENABLED=1 go test -race -count=1 -p 1 -timeout 45m ./...

# The kernels of the emulated boards, cached under /var/cache/linerate.
kernels: deps
	scripts/build-kernel-zc702 >/dev/null
	scripts/fetch-kernel-zcu102 >/dev/null

# The tester image: out/linerate-$(BOARD).cpio.gz and .uInitrd.
BOARD ?= zc702
image: deps
	scripts/build-image $(BOARD)

# The main job: boot the tester image on the emulated board (BOARD, default zc702) with
# PORTS of its GEMs (default 1) against the line station in a network namespace, and
# validate it with the plan qemu-BOARD (qemu-BOARD-Nport for several ports); the verdict
# line decides. make demo BOARD=zcu102 PORTS=4 tests all four GEMs of the ZCU102 at once.
# make demo NETBOOT=1 boots as a line does: QEMU gets only U-Boot (built from Debian's
# source once, cached), which netboots the tester image from the station (BOARD=zc702 or zcu102).
PORTS ?= 1
NETBOOT ?=
DEMO_PLAN = $(if $(filter 1,$(PORTS)),qemu-$(BOARD),qemu-$(BOARD)-$(PORTS)port)
demo: deps build
	@case $(BOARD) in zc702) scripts/build-kernel-zc702 >/dev/null ;; zcu102) scripts/fetch-kernel-zcu102 >/dev/null ;; \
		*) echo "make demo: BOARD=$(BOARD): the emulated boards are zc702 and zcu102" >&2; exit 2 ;; esac
	scripts/build-image $(BOARD)
	BOARD_UP_STDIN=/dev/null scripts/board-up $(BOARD) --job validate --plan $(DEMO_PLAN) --peer station --ports $(PORTS) $(if $(NETBOOT),--netboot) --timeout 600 --log out/serial-$(BOARD).log
	@grep -a '^LINERATE \(PASS\|FAIL\) ' out/serial-$(BOARD).log | tail -1
	@grep -aq '^LINERATE PASS ' out/serial-$(BOARD).log

# The SD card that stays in a fixture: out/linerate-$(BOARD)-sd.img (BOOT.BIN, u-boot.img,
# a boot script that netboots from the station, else the card's tester image).
sdcard: deps
	scripts/build-image $(BOARD)
	scripts/build-sdcard $(BOARD) $(DEMO_PLAN)

unit:
	CGO_ENABLED=1 go test -race -count=1 -short ./...

# Every fuzz target of every package, each for FUZZTIME, a crasher minimised for at
# most FUZZMINTIME (scripts/fuzz: it also tells Go 1.26's end-of-fuzztime race from a
# failure).
FUZZTIME ?= 30s
FUZZMINTIME ?= 5s
PKGS ?= ./...
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZMINTIME=$(FUZZMINTIME) PKGS='$(PKGS)' bash scripts/fuzz

bench: bench-show bench-iperf3 bench-gen bench-reflect bench-pace

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

bench-pace: build
	scripts/install-deps >/dev/null
	scripts/bench-pace

clean:
	rm -rf $(BIN) out

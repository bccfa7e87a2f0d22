# Vigia: `make run` starts everything in one process; `make test` installs what
# the tests need (when missing) and runs them all.

GO            ?= go
VIGIA_TOOLS   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vigia/tools
export VIGIA_TOOLS

MINIO_VERSION       := v0.0.0-20260212201848-7aac2a2c5b7c
STATICCHECK_VERSION := v0.7.0
APT_PACKAGES        := pkg-config libavcodec-dev libswscale-dev libswresample-dev libavutil-dev ffmpeg chromium postgresql curl jq openssl \
                       python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
                       gstreamer1.0-nice gir1.2-gst-plugins-bad-1.0 gstreamer1.0-libav onvif-tools firefox-esr
SUDO                := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# MediaMTX, a peer of the interop matrix (e2e.TestInteropMatrix), from
# ../shared/peers when it is there: unpacked into VIGIA_TOOLS once. Without
# it (and without VIGIA_MEDIAMTX) the matrix's MediaMTX cells do not run,
# and make test says so.
PEERS_DIR ?= ../shared/peers
ifneq ($(wildcard $(PEERS_DIR)/mediamtx.xz),)
ifeq ($(origin VIGIA_MEDIAMTX),undefined)
VIGIA_MEDIAMTX := $(VIGIA_TOOLS)/mediamtx
MEDIAMTX_DEP   := $(VIGIA_MEDIAMTX)
endif
endif
export VIGIA_MEDIAMTX

TEST_TIMEOUT ?= 25m
# How many tests marked t.Parallel run at once in one package (go test's
# -parallel, which defaults to the number of cores). The end-to-end tests
# spend most of their time waiting for segments, outages and reconnections,
# not computing, so four run at once even on two cores.
TEST_PARALLEL ?= 4
# Packages whose goroutines, locks and timers make test runs under the race
# detector (only there: the race pass runs every test of theirs).
RACE_PKGS    := ./onvif/... ./stream ./cluster ./recorder ./audio/... ./live ./metrics ./segmenter ./ingest/... ./bus ./thumbs/... ./motion ./retention ./storage/fs ./connlimit ./sign ./integrity
# End-to-end tests that hold frames to the wall clock, measure latency or
# lip sync, or watch this process's heap: make test runs them after the
# others, and the other tests without them. First, alone, lip sync in
# Chromium (SYNC: beside the RTMP attack or the matrix, Chromium's jitter
# buffer stretched and squeezed beeps and audio never came within BT.1359
# on a loaded machine). Then two processes side by side: A1, the timestamp
# faults; B, at nice 10 so that A1's measures come first, the RTMP attack,
# then the interop matrix (58 cameras, most of the machine). A2, the two
# latency tests in Chromium: after A1 or B, whichever ends first
# (test-alone-a, test-alone-b).
E2E_SYNC     := ^TestWebRTCAudioInChromium$$
E2E_ALONE_A1 := ^TestTimestampFaults$$
E2E_ALONE_A2 := ^(TestH265TranscodedLatencyInChromium|TestLiveLatencyInChromium)$$
E2E_ALONE_B  := ^TestRTMPAttack$$
E2E_MATRIX   := ^TestInteropMatrix$$
E2E_ALONE    := ^(TestRTMPAttack|TestWebRTCAudioInChromium|TestLiveLatencyInChromium|TestH265TranscodedLatencyInChromium|TestInteropMatrix|TestTimestampFaults)$$
RUN_ARGS     ?= --synth.cameras 3 --recording.segment_duration 10s --ingest.allow_private_networks=true

.PHONY: all build run test test-phases test-go test-first race-beside lint-idle test-alone test-alone-sync test-alone-a test-alone-b test-alone-a2 test-race lint deps deps-apt deps-tools deps-npm deps-npm-onvif deps-npm-firefox bench soak soak-e2e soak-bench clean fuzz cluster

all: build

build: deps-npm
	$(GO) build -o bin/vigia ./cmd/vigia

## run: build and start vigia serve (embedded NATS, fs storage, synthetic cameras)
run: deps-apt build
	./bin/vigia serve $(RUN_ARGS)

## test: install what is missing, then the tests in two phases, with lint
## beside them throughout:
##  1. side by side: every package not in RACE_PKGS, the e2e package first
##     and without E2E_ALONE (test-first); the race pass over RACE_PKGS,
##     compiled at nice 10, run at the normal priority as soon as it
##     is built (race-beside);
##  2. the E2E_ALONE tests: lip sync alone (test-alone-sync), then two
##     processes (test-alone-a, the timestamp faults; test-alone-b, its
##     attack and matrix at nice 10 so that the measures of A come first),
##     the latency tests after whichever ends first;
## lint (go vet, staticcheck) in the idle scheduling class across both
## phases (lint-idle): only CPU no test and no compilation wants.
## Every package's tests run once: RACE_PKGS only under the race detector.
## go test's own vet pass is off: lint runs go vet's full set. Each part
## alone: make test-go (every package), make test-race, make lint,
## make test-alone. README, Time of make test's tests.
test: deps
	@$(MAKE) --no-print-directory -j2 test-phases lint-idle

test-phases:
	@$(MAKE) --no-print-directory -j2 test-first race-beside
	@$(MAKE) --no-print-directory test-alone-sync
	@d=$$(mktemp -u); $(MAKE) --no-print-directory -j2 test-alone-a test-alone-b A2_CLAIM=$$d; \
	rc=$$?; rm -rf $$d; exit $$rc

# The packages test-first runs: ./e2e first (go test builds and starts it
# first), then all but RACE_PKGS.
FIRST_PKGS = ./e2e $(filter-out $(shell $(GO) list $(RACE_PKGS) ./e2e),$(shell $(GO) list ./...))

test-first:
	@$(MAKE) --no-print-directory test-go PKGS='$(FIRST_PKGS)' TEST_SKIP='$(E2E_ALONE)'

# The packages the race pass's test binaries are built from, but for the
# packages under test themselves (compiled again with their tests).
RACE_DEPS = $(shell $(GO) list -deps -test $(RACE_PKGS) | grep -v -e '\.test$$' -e ' \[')

# The race pass's compilation runs at nice 10: about a tenth of the CPU
# while test-first wants it all, more as soon as it waits, so that the race
# tests (which wait more than they compute) start while test-first still
# runs instead of after it; at nice 19 they could start 170 s after the e2e
# tests ended. The tests then run at the normal priority. go build compiles
# without linking: test-race links each test binary once. A build error
# shows in test-race's output.
race-beside:
	@nice -n 10 $(GO) build -race $(RACE_DEPS) >/dev/null 2>&1 || true
	@$(MAKE) --no-print-directory test-race

# SCHED_IDLE: below even nice 19, so the race pass's compilation comes
# first; a waking test preempts it at once.
lint-idle:
	@chrt --idle 0 $(MAKE) --no-print-directory lint

# PKGS: the packages test-go runs; TEST_SKIP: tests it leaves out.
PKGS ?= ./...
TEST_SKIP ?=
test-go:
	@[ -n "$(VIGIA_MEDIAMTX)" ] || echo "MediaMTX cells of the interop matrix will not run: no $(PEERS_DIR)/mediamtx.xz and VIGIA_MEDIAMTX unset"
	$(GO) test -count=1 -vet=off -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(if $(TEST_SKIP),-skip '$(TEST_SKIP)') $(PKGS)

# The E2E_ALONE tests, in two test processes side by side (each test
# watches its own process's heap); test-alone runs them one by one.
test-alone:
	$(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_ALONE)' ./e2e

test-alone-sync:
	$(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_SYNC)' ./e2e

# A1 measures timing all along (the timestamp faults), at the normal
# priority; B's attack and matrix at nice 10. The two latency tests (A2) run
# after A1 or after B, whichever ends first: test-phases names a directory
# (A2_CLAIM), and the first to create it runs them (mkdir is atomic). A1
# (about 70 s) has ended first in the runs measured, so A2 runs beside B's
# matrix. Without A2_CLAIM, test-alone-a runs them.
A2_CLAIM ?=
test-alone-a:
	$(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_ALONE_A1)' ./e2e
	@if [ -z "$(A2_CLAIM)" ] || mkdir "$(A2_CLAIM)" 2>/dev/null; then $(MAKE) --no-print-directory test-alone-a2; fi

test-alone-b:
	nice -n 10 $(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_ALONE_B)' ./e2e
	nice -n 10 $(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_MATRIX)' ./e2e
	@if [ -n "$(A2_CLAIM)" ] && mkdir "$(A2_CLAIM)" 2>/dev/null; then $(MAKE) --no-print-directory test-alone-a2; fi

test-alone-a2:
	$(GO) test -count=1 -vet=off -timeout $(TEST_TIMEOUT) -run '$(E2E_ALONE_A2)' ./e2e

test-race:
	$(GO) test -race -count=1 -vet=off -p 3 -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

lint: deps-tools
	$(GO) vet ./...
	$(VIGIA_TOOLS)/staticcheck ./...

## deps: Debian packages and tools, each only when missing
deps: deps-apt deps-tools deps-npm deps-npm-onvif deps-npm-firefox

## deps-npm: hls.js for the player (pinned in player/package-lock.json), npm ci
## only when the bundle is missing or the lock changed; embedded at build time
HLS_BUNDLE := player/assets/hls.min.js
deps-npm: $(HLS_BUNDLE)

## deps-npm-onvif: the npm onvif client (pinned in
## onvif/onviftest/js/package-lock.json), a peer of the fake ONVIF camera's
## interop test (onviftest.TestNPMClient); tests only, never in the binary
ONVIF_NPM := onvif/onviftest/js/node_modules/onvif/package.json
deps-npm-onvif: $(ONVIF_NPM)

$(ONVIF_NPM): onvif/onviftest/js/package.json onvif/onviftest/js/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q npm; }
	cd onvif/onviftest/js && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

## deps-npm-firefox: puppeteer-core (pinned in
## e2e/testdata/firefox/package-lock.json), which drives Debian's firefox-esr
## over WebDriver BiDi in the e2e Firefox tests (e2e.TestFirefox*); installed
## into VIGIA_TOOLS/firefox, tests only, never in the binary
FIREFOX_NPM := $(VIGIA_TOOLS)/firefox/node_modules/puppeteer-core/package.json
deps-npm-firefox: $(FIREFOX_NPM)

$(FIREFOX_NPM): e2e/testdata/firefox/package.json e2e/testdata/firefox/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q npm; }
	mkdir -p $(VIGIA_TOOLS)/firefox
	cp e2e/testdata/firefox/package.json e2e/testdata/firefox/package-lock.json $(VIGIA_TOOLS)/firefox/
	cd $(VIGIA_TOOLS)/firefox && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

$(HLS_BUNDLE): player/package.json player/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q npm; }
	cd player && npm ci --ignore-scripts --no-audit --no-fund
	cp player/node_modules/hls.js/dist/hls.min.js $@

deps-apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

deps-tools: $(VIGIA_TOOLS)/minio $(VIGIA_TOOLS)/staticcheck $(MEDIAMTX_DEP)

$(VIGIA_TOOLS)/minio:
	@echo "building MinIO $(MINIO_VERSION) into $(VIGIA_TOOLS) (once; a few minutes)"
	mkdir -p $(VIGIA_TOOLS)
	GOBIN=$(VIGIA_TOOLS) GOFLAGS=-mod=mod $(GO) install github.com/minio/minio@$(MINIO_VERSION)

$(VIGIA_TOOLS)/mediamtx: $(PEERS_DIR)/mediamtx.xz
	mkdir -p $(VIGIA_TOOLS)
	xz -dc $< > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

$(VIGIA_TOOLS)/staticcheck:
	mkdir -p $(VIGIA_TOOLS)
	GOBIN=$(VIGIA_TOOLS) GOFLAGS=-mod=mod $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## cluster: MinIO, NATS, the API, 3 recorders and 20 synthetic cameras as
## processes (the topology of deploy/compose.yaml); Ctrl-C stops it
cluster: deps-apt deps-tools build
	VIGIA_BIN=bin/vigia deploy/cluster/run.sh

## bench: 100 synthetic cameras through a recorder for 60 s
bench: deps build
	./bin/vigia bench --cameras 100 --duration 60s

## soak: the long reliability tests (hundreds of cameras, a node killed,
## outages of a minute: VIGIA_LONG=1), then 100 synthetic cameras, 10 % of them
## flapping, through a recorder for SOAK_DURATION (default 1h), sampling RSS,
## goroutines and open files every 20 s after a SOAK_WARMUP warm-up (default
## 30m: the Go heap's free space and the buffer pools settle in the first 15 to
## 20 minutes); fails when any of them grows faster than 1 % per hour. The two
## halves run alone as soak-e2e and soak-bench. See docs/reliability.md
SOAK_DURATION ?= 1h
SOAK_WARMUP ?= 30m
soak: soak-e2e soak-bench

soak-e2e: deps
	VIGIA_LONG=1 $(GO) test -count=1 -timeout 60m ./e2e -run 'TestStorageOutage|TestNATSOutageStatic|TestReconnectStorm|TestNodeKilledWith50Cameras|TestCameraKilledLongReconnects|TestClusterEditsChurn|TestNATSClusterFaults|TestTakeover150Cameras|TestStart300Cameras'

soak-bench: deps build
	./bin/vigia bench --cameras 100 --duration $(SOAK_DURATION) --warmup $(SOAK_WARMUP) --sample-every 20s --flap 0.1 --discard --nats-process --ffmpeg-sample 0 --max-growth 1 $(SOAK_ARGS)

## fuzz: run each fuzz target for a short while (FUZZTIME each, default 30s)
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./ingest/rtsp -run '^$$' -fuzz '^FuzzReadLoop$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtsp -run '^$$' -fuzz '^FuzzDepacketize$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtsp -run '^$$' -fuzz '^FuzzValidUnit$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtsp -run '^$$' -fuzz '^FuzzDescribe$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtsp -run '^$$' -fuzz '^FuzzFrameAudio$$' -fuzztime $(FUZZTIME)
	$(GO) test ./audio -run '^$$' -fuzz '^FuzzOpusSamples$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzClock$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp/wire -run '^$$' -fuzz '^FuzzChunkReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp/wire -run '^$$' -fuzz '^FuzzAMF0$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp/wire -run '^$$' -fuzz '^FuzzVideoTag$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp/wire -run '^$$' -fuzz '^FuzzAudioTag$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp/wire -run '^$$' -fuzz '^FuzzAggregate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/rtmp -run '^$$' -fuzz '^FuzzDemux$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ingest/p2p -run '^$$' -fuzz '^FuzzParseLookupResponse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./segmenter -run '^$$' -fuzz '^FuzzRecoverSpoolFile$$' -fuzztime $(FUZZTIME)
	$(GO) test ./player -run '^$$' -fuzz '^FuzzPlaylist$$' -fuzztime $(FUZZTIME)
	$(GO) test ./export -run '^$$' -fuzz '^FuzzParseInit$$' -fuzztime $(FUZZTIME)
	$(GO) test ./api/lpr -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs -run '^$$' -fuzz '^FuzzBoxOffset$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs/decoder -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs/decodeproc -run '^$$' -fuzz '^FuzzParseRequest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs/decodeproc -run '^$$' -fuzz '^FuzzParseResult$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs/decodeproc -run '^$$' -fuzz '^FuzzReadFrames$$' -fuzztime $(FUZZTIME)
	$(GO) test ./thumbs/decodeproc -run '^$$' -fuzz '^FuzzServe$$' -fuzztime $(FUZZTIME)
	$(GO) test ./api -run '^$$' -fuzz '^FuzzReadInput$$' -fuzztime $(FUZZTIME)
	$(GO) test ./camera -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME)
	$(GO) test ./config -run '^$$' -fuzz '^FuzzLoadYAML$$' -fuzztime $(FUZZTIME)
	$(GO) test ./config -run '^$$' -fuzz '^FuzzParseSize$$' -fuzztime $(FUZZTIME)
	$(GO) test ./storage -run '^$$' -fuzz '^FuzzParseSegmentKey$$' -fuzztime $(FUZZTIME)
	$(GO) test ./storage -run '^$$' -fuzz '^FuzzParseRecordingKey$$' -fuzztime $(FUZZTIME)
	$(GO) test ./logging -run '^$$' -fuzz '^FuzzRedactURL$$' -fuzztime $(FUZZTIME)
	$(GO) test ./player -run '^$$' -fuzz '^FuzzParseTimelineRanges$$' -fuzztime $(FUZZTIME)
	$(GO) test ./player -run '^$$' -fuzz '^FuzzParseColor$$' -fuzztime $(FUZZTIME)
	$(GO) test ./synth -run '^$$' -fuzz '^FuzzParseClip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./synth -run '^$$' -fuzz '^FuzzOggPackets$$' -fuzztime $(FUZZTIME)
	$(GO) test ./bench -run '^$$' -fuzz '^FuzzParseParts$$' -fuzztime $(FUZZTIME)
	$(GO) test ./bench -run '^$$' -fuzz '^FuzzParseStatCPU$$' -fuzztime $(FUZZTIME)
	$(GO) test ./bench -run '^$$' -fuzz '^FuzzParseSample$$' -fuzztime $(FUZZTIME)
	$(GO) test ./bench -run '^$$' -fuzz '^FuzzParseProcStatBusy$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onvif -run '^$$' -fuzz '^FuzzParseEnvelope$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onvif -run '^$$' -fuzz '^FuzzParseNotification$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onvif -run '^$$' -fuzz '^FuzzParsePullMessages$$' -fuzztime $(FUZZTIME)
	$(GO) test ./onvif -run '^$$' -fuzz '^FuzzParseChallenge$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin data

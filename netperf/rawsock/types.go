package rawsock

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// GenOptions bound and pace a run of Gen. A run ends at Count frames or after Duration,
// whichever comes first; at least one of them must be set. FPS and Count are for all
// the senders together.
type GenOptions struct {
	FPS        float64 // frames per second; 0 sends as fast as the rings drain
	Count      uint64
	Duration   time.Duration
	EndMarkers bool                                // tell the sink how many frames were sent
	Progress   func(sent uint64, el time.Duration) // about once a second
	// HW, when set, takes the NIC's TX stamps of the frames it samples, read back from
	// rings the caller set up with StampHW.
	HW *frames.HWBook
}

// RXRing is the shape of a receive ring.
type RXRing struct {
	// PerFrame: TPACKET_V2 frames, each handed over as it arrives (OpenRXFrames: the
	// reflector's, where what a block would hold back adds to the round trip); else
	// TPACKET_V3 blocks.
	PerFrame bool
	// BlockSize and Blocks shape a block ring; 0: the line-rate ring's (32 blocks of
	// 1 MiB, which hold 170 ms of 64-byte frames at 1 Gb/s).
	BlockSize, Blocks int
}

// PacedRing is the block ring of trials paced at up to fps frames of up to frameLen
// bytes (a frames step's, a PHY loopback's). The kernel hands a block over when it is
// full or when its 2 ms timer retires it, so at a paced rate every block leaves with the
// frames of a few milliseconds: a block holds twice what comes in 2 ms (and a whole
// frame), from 8 KiB to 64 KiB; there are at least 128 of them, 256 ms the reader may
// fall behind (the line-rate ring's 32 are 64 ms at such a rate), and enough to hold a
// quarter of a second of the frames. The emulated ZC702's PHY loopback (5874 512-byte
// frames a second) gets 2 MiB (128 blocks of 16 KiB) rather than 32: a slow board takes
// a tenth of a second to clear and map 8 MiB, and as long to free it, on every step. A rate or frame that
// needs more gets the line-rate ring's size at most, in more blocks.
func PacedRing(fps float64, frameLen int) RXRing {
	slot := (tp3Hdr + 32 + frameLen + 15) &^ 15 // header, sockaddr_ll and the frame, aligned
	if fps <= 0 || slot > maxPacedBlock-64 {
		return RXRing{}
	}
	block := max(minPacedBlock, os.Getpagesize()) // a block is whole pages
	for block < maxPacedBlock && (block < slot+64 || block < 2*int(fps*0.002)*slot+64) {
		block *= 2
	}
	perBlock := (block - 64) / slot
	n := int(fps/4)/perBlock + 1
	return RXRing{BlockSize: block, Blocks: min(max(n, 128), (32<<20)/block)}
}

// A paced ring's blocks: 8 KiB (two pages: twice 2 ms of 512-byte frames at up to 3500
// a second) to 64 KiB (a jumbo frame and more).
const (
	minPacedBlock = 8 << 10
	maxPacedBlock = 64 << 10
)

// PacedTXFrames is the TX ring of trials paced at up to fps frames a second: four times
// the pacer's burst (10 ms of frames), at least 256 frames; 0 for an unknown rate (a
// throughput search): the line-rate ring's.
func PacedTXFrames(fps float64) int {
	if fps <= 0 {
		return 0
	}
	return max(256, int(fps*0.040))
}

// tp3Hdr is struct tpacket3_hdr's length.
const tp3Hdr = 48

// Sender is one of a run's senders: a TX ring, the frames it sends (its own stream) and
// the CPU its thread is pinned to (-1: not pinned).
type Sender struct {
	TX  *TX
	B   *frames.Builder
	CPU int
}

// GenStats is what Gen sent, all senders together and each.
type GenStats struct {
	Sent  uint64
	Bytes uint64 // with FCS
	// Unsent is the frames still queued in the rings when the run ended that the port
	// never took (its link down): not in Sent.
	Unsent  uint64
	Elapsed time.Duration
	// CPU is the CPU time of the senders' threads (user and system, RUSAGE_THREAD).
	CPU     time.Duration
	Senders []ThreadStats
}

// ThreadStats is one sender's or receive ring's share of a run.
type ThreadStats struct {
	CPU     int           `json:"cpu"` // the CPU it was pinned to; -1: not pinned
	Frames  uint64        `json:"frames"`
	CPUTime time.Duration `json:"cpu_ns"`
}

// NsPerFrame is CPU time per frame: what a core spends on each, so a board's limit can
// be estimated from its clock. 0 when no frame was handled.
func NsPerFrame(cpu time.Duration, frames uint64) float64 {
	if frames == 0 {
		return 0
	}
	return float64(cpu.Nanoseconds()) / float64(frames)
}

// SinkOptions bound a run of Sink: it ends at Duration, at Count frames of the streams,
// after every stream's end marker (plus Grace for late frames), or when ctx ends.
type SinkOptions struct {
	Duration time.Duration
	Count    uint64
	Grace    time.Duration
	Progress func(p SinkProgress, el time.Duration)
	// Stop, when set, ends the run as soon as it reads true (the same-process sender
	// is done and its frames had time to arrive).
	Stop *atomic.Bool
	// Seen, when set, is kept at the count of the streams' frames received, for
	// another goroutine to watch.
	Seen *atomic.Uint64
	// HW, when set, takes the NIC's RX stamps of the frames it samples (rings set up
	// with StampHW).
	HW *frames.HWBook
}

// SinkProgress is a sink's count while it runs.
type SinkProgress struct {
	Received, Corrupted, Foreign uint64
	// Streams is how many streams have come (every one counted from the start).
	Streams int
}

// SinkStats is what the sink's rings and threads did.
type SinkStats struct {
	Elapsed time.Duration
	// Handled is every frame the rings handed over, test frames or not.
	Handled uint64
	CPU     time.Duration
	Rings   []ThreadStats
	// Drops is the frames the kernel dropped because a ring was full: the sink was too
	// slow, not loss on the path.
	Drops uint64
}

// ReflectStats is what a reflector did.
type ReflectStats struct {
	Reflected uint64 `json:"reflected"`
	Foreign   uint64 `json:"foreign"`
	Dropped   uint64 `json:"dropped"`      // test frames the TX ring had no room for
	Reports   uint64 `json:"drop_reports"` // drop reports sent back to the senders
	// CPUTime is the reflecting threads' CPU time; NsPerFrame per frame handled.
	CPUTime    time.Duration `json:"cpu_ns"`
	NsPerFrame float64       `json:"cpu_ns_per_frame"`
	Rings      []ThreadStats `json:"rings,omitempty"`
	// Realtime says how the threads ran: real-time, memory locked, busy polling, or why
	// not (empty: as any thread, not asked for).
	Realtime string `json:"realtime,omitempty"`
}

func (s *ReflectStats) add(o ReflectStats) {
	s.Reflected += o.Reflected
	s.Foreign += o.Foreign
	s.Dropped += o.Dropped
	s.Reports += o.Reports
}

// Fanout is how a group of receive rings shares a port's frames (PACKET_FANOUT's modes,
// include/uapi/linux/if_packet.h).
type Fanout int

const (
	// FanoutHash hands each flow (the frame's flow hash: addresses and ports) to one
	// ring, so a flow's order is whole in its ring (PACKET_FANOUT_HASH).
	FanoutHash Fanout = 0
	// FanoutCPU hands each frame to the ring of the CPU that received it (with RSS or
	// RPS, again a flow per ring) (PACKET_FANOUT_CPU).
	FanoutCPU Fanout = 2
)

// ParseFanout reads a fanout mode by name: hash or cpu.
func ParseFanout(s string) (Fanout, error) {
	switch s {
	case "hash":
		return FanoutHash, nil
	case "cpu":
		return FanoutCPU, nil
	}
	return 0, fmt.Errorf("fanout %q: want hash or cpu", s)
}

// Realtime is how a reflector's threads run. The zero value runs them as any thread.
type Realtime struct {
	// On runs each reflecting thread SCHED_FIFO at RTPriority and locks the process's
	// memory (mlockall): a frame wakes the thread ahead of everything else on its CPU
	// that is not itself real-time, and no page of it is swapped out or faulted in on the
	// way. It needs root or CAP_SYS_NICE (and CAP_IPC_LOCK, or a large enough
	// RLIMIT_MEMLOCK); where it is refused the reflector runs as any thread and says so.
	On bool `json:"on"`
	// Busy makes each thread spin on its receive ring instead of sleeping in poll(): no
	// wake-up between a frame's arrival and its answer. Only for threads pinned each to
	// a CPU nothing else needs. A spinning thread stays SCHED_OTHER, as poll-mode
	// drivers' threads do: the kernel throttles a real-time thread that never sleeps
	// (sched_rt_runtime_us: 50 ms of every second by default), which would hold frames
	// 50 ms; on its own CPU it has no one to wait for anyway.
	Busy bool `json:"busy_poll,omitempty"`
}

// RTPriority is the reflecting threads' SCHED_FIFO priority: above every ordinary task,
// below the threaded interrupt handlers (50 on PREEMPT_RT kernels) that bring it the
// frames, which it must never keep from running.
const RTPriority = 10

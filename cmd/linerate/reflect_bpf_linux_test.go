//go:build linux && !arm && !arm64

package main

import (
	"strings"
	"testing"
)

// TestReflectInKernel: reflect --bpf answers rfc2544's throughput and latency trials in
// the kernel (no loss at 10 Mbit/s of 256-byte frames, a round trip measured), says so
// on its first line and in its result, and counts what it sent back. It takes no thread
// flags.
func TestReflectInKernel(t *testing.T) {
	o, refl := throughReflector(t, []string{"--bpf", "--duration", "8s"}, "--sizes", "256", "--trial", "1s", "--tests", "throughput,latency", "--link-mbps", "10")
	r := decode[struct {
		Results []struct {
			Throughput struct{ Percent float64 }
			Latency    *struct {
				Kind string
				NS   struct{ P50, P99 int64 } `json:"latency_ns"`
			}
		}
	}](t, "rfc2544 --peer", o)
	rf := decode[struct {
		InKernel  bool `json:"in_kernel"`
		Reflected uint64
		Realtime  string
	}](t, "reflect --bpf", refl)
	if len(r.Results) != 1 || r.Results[0].Throughput.Percent != 100 || r.Results[0].Latency == nil || r.Results[0].Latency.Kind != "round-trip" || r.Results[0].Latency.NS.P50 <= 0 {
		t.Fatalf("rfc2544 through the in-kernel reflector: %+v\n%s", r, o.stderr)
	}
	if !rf.InKernel || rf.Reflected == 0 || !strings.HasPrefix(rf.Realtime, "in the kernel") || !strings.Contains(refl.stderr, "; in the kernel: a BPF program") {
		t.Errorf("reflect --bpf: %+v\n%s", rf, refl.stderr)
	}
	l := r.Results[0].Latency.NS
	t.Logf("round trip through the in-kernel reflector: p50 %.1f µs, p99 %.1f µs; %d reflected", float64(l.P50)/1e3, float64(l.P99)/1e3, rf.Reflected)

	for _, args := range [][]string{{"--cpus", "2"}, {"--realtime", "on"}} {
		_, errOut, code := runCLI(t, append([]string{"reflect", "b0", "--bpf", "--duration", "1s"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--bpf answers in the kernel's receive path: no threads for --cpus or --realtime") {
			t.Errorf("reflect --bpf %v: exit %d\n%s", args, code, errOut)
		}
	}
}

//go:build !linux

package rawsock

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

var errOS = fmt.Errorf("raw sockets: AF_PACKET rings exist only on Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)

// TX is a transmit ring (Linux only).
type TX struct{}

// RX is a receive ring (Linux only).
type RX struct{}

func OpenTX(string, int, int, bool) (*TX, error)                           { return nil, errOS }
func OpenTXRings(string, int, int, int, bool, func() error) ([]*TX, error) { return nil, errOS }
func OpenRX(string) (*RX, error)                                           { return nil, errOS }
func OpenRXFrames(string) (*RX, error)                                     { return nil, errOS }
func OpenRXRings(string, int, RXRing, Fanout) ([]*RX, error)               { return nil, errOS }
func CPUs(int) ([]int, error)                                              { return nil, errOS }
func KeepCPUs(int, int) ([]int, error)                                     { return nil, errOS }
func KeepOff([]int) error                                                  { return errOS }
func (*TX) Close() error                                                   { return nil }
func (*RX) Close() error                                                   { return nil }
func (*RX) Drops() uint64                                                  { return 0 }

func Gen(context.Context, []Sender, GenOptions) (GenStats, error) {
	return GenStats{}, errOS
}

func Sink(context.Context, []*RX, []int, uint16, int, SinkOptions) (*frames.Streams, SinkStats, error) {
	return nil, SinkStats{}, errOS
}

func Reflect(context.Context, []*RX, []*TX, []int, Realtime, net.HardwareAddr, time.Duration, func(ReflectStats, time.Duration)) (ReflectStats, error) {
	return ReflectStats{}, errOS
}

func Trial(context.Context, []*TX, []*RX, []int, frames.Spec, GenOptions, time.Duration) (frames.Result, GenStats, error) {
	return frames.Result{}, GenStats{}, errOS
}

// NoHWStamps is the answer of a port that cannot stamp every frame in hardware.
type NoHWStamps struct{ Why string }

func (e *NoHWStamps) Error() string { return e.Why }

func EnableHWStamps(iface string) (func() error, error) {
	return nil, &NoHWStamps{fmt.Sprintf("%s: hardware timestamps need Linux, not %s/%s", iface, runtime.GOOS, runtime.GOARCH)}
}

func (*TX) StampHW() error { return errOS }
func (*RX) StampHW() error { return errOS }

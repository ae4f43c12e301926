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

func OpenTX(string, int, bool) (*TX, error) { return nil, errOS }
func OpenRX(string) (*RX, error)            { return nil, errOS }
func OpenRXFrames(string) (*RX, error)      { return nil, errOS }
func (*TX) Close() error                    { return nil }
func (*RX) Close() error                    { return nil }
func (*RX) Drops() uint64                   { return 0 }

func Gen(context.Context, *TX, *frames.Builder, GenOptions) (GenStats, error) {
	return GenStats{}, errOS
}

func Sink(context.Context, *RX, *frames.Counter, SinkOptions) (time.Duration, error) {
	return 0, errOS
}

func Reflect(context.Context, *RX, *TX, net.HardwareAddr, time.Duration, func(ReflectStats, time.Duration)) (ReflectStats, error) {
	return ReflectStats{}, errOS
}

func Trial(context.Context, *TX, *RX, frames.Spec, GenOptions, time.Duration) (frames.Result, GenStats, error) {
	return frames.Result{}, GenStats{}, errOS
}

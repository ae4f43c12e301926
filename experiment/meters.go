package experiment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// TCPMeter measures TCP throughput and the sender's retransmits against an iperf3 server
// (stock iperf3, or the station's), in-process. A server still closing its last test
// answers busy: that is retried for a few seconds.
type TCPMeter struct {
	Client iperf3.Client // Host, Port, Params (Time, Reverse, Parallel), ConnectTimeout
}

// Columns: tcp_mbps as the receiving side counted it, tcp_retransmits of the sender.
func (m *TCPMeter) Columns() []Column {
	return []Column{{Key: "tcp_mbps", Unit: "Mbit/s"}, {Key: "tcp_retransmits", Unit: "segments", Lower: true}}
}

// Measure runs one iperf3 test.
func (m *TCPMeter) Measure(ctx context.Context) (map[string]float64, error) {
	c := m.Client
	for try := 0; ; try++ {
		rep, err := c.Run(ctx)
		var se *iperf3.ServerError
		if errors.As(err, &se) && se.State == iperf3.AccessDenied && try < 20 && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("iperf3 to %s: %w", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), err)
		}
		sum := rep.End.SumReceived
		if sum.Bytes == 0 && rep.End.Sum != nil {
			sum = *rep.End.Sum
		}
		f := map[string]float64{"tcp_mbps": sum.BitsPerSecond / 1e6}
		if rep.End.SumSent.Retransmits != nil {
			f["tcp_retransmits"] = float64(*rep.End.SumSent.Retransmits)
		}
		return f, nil
	}
}

// FramesMeter sends test frames through a reflector at a rate, a trial per frame size:
// the loss on the path and the round trip's p50, p99 and p99.9. Its rings are opened for
// each measurement (a knob that bounces the link has just been applied).
type FramesMeter struct {
	Root, Iface string
	Reflector   net.HardwareAddr
	Sizes       []int
	Rate        frames.Rate
	Duration    time.Duration
	CPUs        int
}

// Columns: loss_pct_SIZE, p50_us_SIZE, p99_us_SIZE, p999_us_SIZE for each size.
func (m *FramesMeter) Columns() []Column {
	var cs []Column
	for _, s := range m.Sizes {
		n := strconv.Itoa(s)
		cs = append(cs, Column{Key: "loss_pct_" + n, Unit: "%", Lower: true}, Column{Key: "p50_us_" + n, Unit: "us", Lower: true},
			Column{Key: "p99_us_" + n, Unit: "us", Lower: true}, Column{Key: "p999_us_" + n, Unit: "us", Lower: true})
	}
	return cs
}

// Measure runs one trial per size.
func (m *FramesMeter) Measure(ctx context.Context) (map[string]float64, error) {
	p, err := engine.LookupPort(m.Root, m.Iface, 0)
	if err != nil {
		return nil, err
	}
	if err := p.CheckSizes(m.Sizes, false); err != nil {
		return nil, err
	}
	maxLen := 0
	for _, s := range m.Sizes {
		maxLen = max(maxLen, s-frames.FCS)
	}
	e, err := engine.OpenTrialer(engine.TrialerConfig{Root: m.Root, Port: p, Dst: m.Reflector, RXPort: p.Name, MaxLen: maxLen, CPUs: m.CPUs, Kind: "round-trip"})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	f := map[string]float64{}
	for _, s := range m.Sizes {
		fps, err := m.Rate.FPS(p.LinkMbps, float64(s))
		if err != nil {
			return nil, err
		}
		r, err := e.Trial(ctx, s, fps, m.Duration, 0)
		if err != nil {
			return nil, err
		}
		n := strconv.Itoa(s)
		r.SenderDrops = 0 // the port's own driver refusing frames is the port's loss
		f["loss_pct_"+n] = r.PathLossPct()
		if r.Latency != nil {
			f["p50_us_"+n] = float64(r.Latency.P50) / 1e3
			f["p99_us_"+n] = float64(r.Latency.P99) / 1e3
			f["p999_us_"+n] = float64(r.Latency.P999) / 1e3
		}
	}
	return f, nil
}

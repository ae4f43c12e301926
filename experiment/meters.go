package experiment

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// MeterSpec is what to measure, as a command line gives it.
type MeterSpec struct {
	Iperf3    string // HOST[:PORT] of an iperf3 server ("": no TCP)
	Direction string // up (the port sends) or down
	Reflector string // the reflector's MAC ("": no frames)
	Sizes     string // frame sizes with FCS, comma-separated
	Rate      string // the frames' rate (frames.ParseRate)
	CPUs      string // senders and rings (engine.ParseCPUs)
	Duration  time.Duration
	Repeat    int    // measurements of each point, 1..100
	Version   string // linerate's, for iperf3's cookie and banner
}

// Meters checks the spec and builds its meters on root's iface; an error names the
// flag and what it takes.
func (m MeterSpec) Meters(root, iface string) ([]Meter, error) {
	if m.Iperf3 == "" && m.Reflector == "" {
		return nil, badinput.Errorf("give --iperf3 HOST[:PORT], --reflector MAC, or both: what to measure")
	}
	if m.Duration < time.Second || m.Duration > time.Hour {
		return nil, badinput.Errorf("--duration %v: want 1s..1h", m.Duration)
	}
	if m.Direction != "up" && m.Direction != "down" {
		return nil, badinput.Errorf("--direction %q: want up or down", m.Direction)
	}
	if m.Repeat < 1 || m.Repeat > 100 {
		return nil, badinput.Errorf("--repeat %d: want 1..100", m.Repeat)
	}
	var ms []Meter
	if m.Iperf3 != "" {
		host, port := m.Iperf3, 5201
		if h, p, err := net.SplitHostPort(m.Iperf3); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return nil, badinput.Errorf("--iperf3 %q: the port is 1..65535", m.Iperf3)
			}
			host, port = h, n
		}
		if host == "" {
			return nil, badinput.Errorf("--iperf3 %q: no host", m.Iperf3)
		}
		ms = append(ms, NewTCPMeter(host, port, m.Version, m.Duration, m.Direction == "down"))
	}
	if m.Reflector != "" {
		mac, err := engine.ParseMAC("--reflector", m.Reflector)
		if err != nil {
			return nil, err
		}
		rate, err := frames.ParseRate(m.Rate)
		if err != nil {
			return nil, badinput.Errorf("--%v", err)
		}
		cpus, err := engine.ParseCPUs("cpus", m.CPUs)
		if err != nil {
			return nil, err
		}
		var sizes []int
		for _, s := range strings.Split(m.Sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < frames.MinSize || n > frames.MaxSize {
				return nil, badinput.Errorf("--size %q: want frame sizes %d..%d (with FCS), comma-separated", m.Sizes, frames.MinSize, frames.MaxSize)
			}
			sizes = append(sizes, n)
		}
		ms = append(ms, &FramesMeter{Root: root, Iface: iface, Reflector: mac, Sizes: sizes, Rate: rate, Duration: m.Duration, CPUs: cpus})
	}
	return ms, nil
}

// NewTCPMeter measures TCP against the iperf3 server at host:port for d, the port
// sending (up) or receiving (down).
func NewTCPMeter(host string, port int, version string, d time.Duration, down bool) *TCPMeter {
	return &TCPMeter{Client: iperf3.Client{Host: host, Port: port, Version: version, ConnectTimeout: 5 * time.Second,
		Params: iperf3.Params{Time: int(d.Seconds()), Reverse: down}}}
}

// TCPMeter measures TCP throughput and the sender's retransmits against an iperf3 server
// (stock iperf3, or the station's), in-process. A server still closing its last test
// answers busy: that is retried for a few seconds.
type TCPMeter struct {
	Client iperf3.Client // Host, Port, Params (Time, Reverse, Parallel), ConnectTimeout
}

// Columns: tcp_mbps as the receiving side counted it, tcp_retransmits of the sender.
func (m *TCPMeter) Columns() []curve.Column {
	return []curve.Column{{Key: "tcp_mbps", Unit: "Mbit/s"}, {Key: "tcp_retransmits", Unit: "segments", Lower: true}}
}

// Measure runs one iperf3 test.
func (m *TCPMeter) Measure(ctx context.Context) (map[string]float64, error) {
	c := m.Client
	rep, err := c.RunWhenFree(ctx)
	if err != nil {
		return nil, fmt.Errorf("iperf3 to %s: %w", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), err)
	}
	f := map[string]float64{"tcp_mbps": rep.End.Received().BitsPerSecond / 1e6}
	if rep.End.SumSent.Retransmits != nil {
		f["tcp_retransmits"] = float64(*rep.End.SumSent.Retransmits)
	}
	return f, nil
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
func (m *FramesMeter) Columns() []curve.Column {
	var cs []curve.Column
	for _, s := range m.Sizes {
		n := strconv.Itoa(s)
		cs = append(cs, curve.Column{Key: "loss_pct_" + n, Unit: "%", Lower: true}, curve.Column{Key: "p50_us_" + n, Unit: "us", Lower: true},
			curve.Column{Key: "p99_us_" + n, Unit: "us", Lower: true}, curve.Column{Key: "p999_us_" + n, Unit: "us", Lower: true})
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

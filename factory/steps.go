package factory

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
	"github.com/zynqnet/linerate/validate"
)

// Each step measures through the domain packages, then judges (judge.go). A step's
// error (the station vanished, the port went away) fails it with that reason.

func (r *run) sysfs(name string) string {
	s, _ := nic.ReadFile(r.Root, filepath.Join("sys/class/net", r.Plan.Interface, name))
	return s
}

func (r *run) link(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	start := time.Now()
	deadline := start.Add(s.CarrierWithin.D())
	for r.sysfs("carrier") != "1" {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return JudgeLink(s, LinkMeasurement{After: time.Since(start), Operstate: r.sysfs("operstate")}), nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	speed, _ := strconv.Atoi(r.sysfs("speed"))
	return JudgeLink(s, LinkMeasurement{Carrier: true, After: time.Since(start), SpeedMbps: speed, Duplex: r.sysfs("duplex"), Operstate: r.sysfs("operstate")}), nil
}

func (r *run) doctorStep(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	const interval = 2 * time.Second
	before, after, err := nic.SampleLive(ctx, r.API, interval, []string{r.Plan.Interface}, nil)
	if err != nil {
		return validate.Outcome{}, err
	}
	rep, err := doctor.Diagnose(doctor.Input{Before: before, After: after, Interval: interval, Board: r.board})
	if err != nil {
		return validate.Outcome{}, err
	}
	if b, err := json.Marshal(rep); err == nil {
		r.doctor = b
	}
	return JudgeDoctor(s, r.Plan.Interface, rep), nil
}

// tune applies the step's profile as one transaction; unless the step keeps it, the run
// reverts it at the end (after the last step, also when a step failed).
func (r *run) tune(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	iface := r.Plan.Interface
	plan, err := r.applyProfile(ctx, s.Profile)
	o := JudgeTune(s, plan, err)
	if o.Pass && !s.Keep && len(plan.Changes) > 0 {
		r.cleanup = append(r.cleanup, func() {
			if err := r.revert(); err != nil {
				fmt.Fprintf(r.Console, "linerate validate: revert %s: %v\n", iface, err)
			}
		})
	}
	return o, nil
}

func (r *run) applyProfile(ctx context.Context, name string) (*tune.Plan, error) {
	p, err := tune.LoadProfile(name)
	if err != nil {
		return nil, err
	}
	store := tune.StoreAt(r.StateDir)
	lock, err := store.Acquire(r.Plan.Interface, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	sys, rd, closeFn, err := tune.Open("", r.API, 15*time.Second)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	plan, err := tune.ReadState(sys, rd, r.Plan.Interface, p)
	if err != nil {
		return nil, err
	}
	return plan, tune.Apply(ctx, sys, store, plan)
}

// revert gives the port back what it had before the tune step, whatever ctx the run had
// left: a revert is never cut short.
func (r *run) revert() error {
	store := tune.StoreAt(r.StateDir)
	lock, err := store.Acquire(r.Plan.Interface, 30*time.Second)
	if err != nil {
		return err
	}
	defer lock.Release()
	sys, _, closeFn, err := tune.Open("", r.API, 15*time.Second)
	if err != nil {
		return err
	}
	defer closeFn()
	_, err = tune.Revert(context.Background(), sys, store, r.Plan.Interface)
	return err
}

// iperf3 measures against the station's iperf3 server in-process. The server takes one
// test at a time and may still be closing the last one: a busy answer is retried for a
// few seconds, as an operator would.
func (r *run) iperf3(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	st := r.Plan.Station
	c := &iperf3.Client{Host: st.Address, Port: st.Port, Version: r.Version, ConnectTimeout: 5 * time.Second,
		Params: iperf3.Params{Time: int(s.Duration.D().Seconds()), Parallel: s.Streams, Reverse: s.Direction == "down"}}
	if s.Protocol == "udp" {
		bw, err := iperf3.ParseSize(s.Bandwidth, 1000)
		if err != nil {
			return validate.Outcome{}, fmt.Errorf("bandwidth %q: %w", s.Bandwidth, err)
		}
		c.Params.UDP, c.Params.Bandwidth = true, bw
	}
	rep, err := c.RunWhenFree(ctx)
	if err != nil {
		return validate.Outcome{}, fmt.Errorf("iperf3 to the station %s:%d: %w", st.Address, st.Port, err)
	}
	return JudgeIperf3(s, rep), nil
}

// frames sends test frames through the station's reflector: at the step's rate (loss,
// latency), or an RFC 2544 throughput search.
func (r *run) frames(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	peer, err := r.reflectorMAC(ctx)
	if err != nil {
		return validate.Outcome{}, err
	}
	p, err := engine.LookupPort(r.Root, r.Plan.Interface, 0)
	if err != nil {
		return validate.Outcome{}, err
	}
	if err := p.CheckSizes([]int{s.Size}, false); err != nil {
		return validate.Outcome{}, err
	}
	cpus, err := engine.ParseCPUs("cpus", s.CPUs)
	if err != nil {
		return validate.Outcome{}, err
	}
	e, err := engine.OpenTrialer(engine.TrialerConfig{Root: r.Root, Port: p, Dst: peer, RXPort: p.Name, MaxLen: s.Size - frames.FCS, CPUs: cpus, Kind: "round-trip", HWStamps: s.HWTimestamps})
	if err != nil {
		return validate.Outcome{}, err
	}
	defer e.Close()
	if s.MinThroughputPct != nil {
		rs, err := rfc2544.Run(ctx, e, rfc2544.Config{Sizes: []int{s.Size}, Trial: s.Duration.D(), Res: 1, Tests: []string{"throughput"}, LinkMbps: p.LinkMbps})
		if err != nil {
			return validate.Outcome{}, err
		}
		return JudgeThroughput(s, rs[0]), nil
	}
	rate, err := frames.ParseRate(s.Rate)
	if err != nil {
		return validate.Outcome{}, err
	}
	fps, err := rate.FPS(p.LinkMbps, float64(s.Size))
	if err != nil {
		return validate.Outcome{}, err
	}
	res, err := e.Trial(ctx, s.Size, fps, s.Duration.D(), 0)
	if err != nil {
		return validate.Outcome{}, err
	}
	return JudgeFrames(s, res), nil
}

// sweep measures the port at each value of the step's knob against the station (iperf3
// and/or frames through its reflector) and gives the knob back its value at the end.
func (r *run) sweep(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	st, iface := r.Plan.Station, r.Plan.Interface
	var ms []experiment.Meter
	for _, m := range s.Measure {
		switch m {
		case "tcp":
			ms = append(ms, experiment.NewTCPMeter(st.Address, st.Port, r.Version, s.Duration.D(), s.Direction == "down"))
		case "frames":
			peer, err := r.reflectorMAC(ctx)
			if err != nil {
				return validate.Outcome{}, err
			}
			rate, err := frames.ParseRate(s.Rate)
			if err != nil {
				return validate.Outcome{}, err
			}
			cpus, err := engine.ParseCPUs("cpus", s.CPUs)
			if err != nil {
				return validate.Outcome{}, err
			}
			ms = append(ms, &experiment.FramesMeter{Root: r.Root, Iface: iface, Reflector: peer, Sizes: []int{s.Size}, Rate: rate, Duration: s.Duration.D(), CPUs: cpus})
		}
	}
	t, err := experiment.OpenTuner(iface, r.StateDir, r.API, 15*time.Second)
	if err != nil {
		return validate.Outcome{}, err
	}
	defer t.Close()
	sw := &experiment.Sweep{Iface: iface, Knob: s.Knob, Values: s.SweepValues(), Repeat: s.Repeat, Meters: ms, Setter: t}
	head := &experiment.Result{Knob: s.Knob, Columns: sw.Columns()}
	sw.Progress = func(p experiment.Point) { fmt.Fprintln(r.Console, "  "+head.PointLine(p)) }
	res, err := sw.Run(ctx)
	if err != nil {
		return validate.Outcome{}, err
	}
	return JudgeSweep(s, res), nil
}

// reflectorMAC is the plan's reflector MAC, or the station's from the neighbour table
// (a datagram to its discard port makes the kernel ARP for it).
func (r *run) reflectorMAC(ctx context.Context) (net.HardwareAddr, error) {
	st := r.Plan.Station
	if st.ReflectorMAC != "auto" {
		m, err := net.ParseMAC(st.ReflectorMAC)
		if err != nil || len(m) != 6 {
			return nil, fmt.Errorf("station.reflector_mac %q is not a MAC", st.ReflectorMAC)
		}
		return m, nil
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if c, err := net.Dial("udp4", net.JoinHostPort(st.Address, "9")); err == nil {
			c.Write([]byte{0})
			c.Close()
		}
		if m := arpLookup(r.Root, st.Address, r.Plan.Interface); m != nil {
			return m, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("the station %s does not answer ARP on %s: no reflector to send frames to", st.Address, r.Plan.Interface)
}

// arpLookup finds ip's MAC on iface in root's /proc/net/arp.
func arpLookup(root, ip, iface string) net.HardwareAddr {
	b, _ := os.ReadFile(filepath.Join(root, "proc/net/arp"))
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == ip && f[5] == iface && f[3] != "00:00:00:00:00:00" {
			if m, err := net.ParseMAC(f[3]); err == nil {
				return m
			}
		}
	}
	return nil
}

func (r *run) errorCounters() (map[string]uint64, error) {
	rd, closeFn, err := nic.Open(liveOrRoot(r.Root), r.API)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	st, err := rd.LinkStats(r.Plan.Interface)
	if err != nil {
		return nil, err
	}
	return st.ErrorCounters(), nil
}

func (r *run) countersStep(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	now, err := r.errorCounters()
	if err != nil {
		return validate.Outcome{}, fmt.Errorf("no statistics for %s: %w", r.Plan.Interface, err)
	}
	return JudgeCounters(s, r.counters, now), nil
}

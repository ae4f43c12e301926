package validate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/plan"
)

// Iperf3 measures TCP or UDP throughput against the station's iperf3 server, with
// linerate's own client (stock iperf3 or linerate's server is the peer).
type Iperf3 struct {
	Protocol            string        `yaml:"protocol" json:"protocol,omitempty" doc:"tcp or udp" default:"tcp"`                    // tcp or udp
	Direction           string        `yaml:"direction" json:"direction,omitempty" doc:"up (the board sends) or down" default:"up"` // up (board sends) or down
	Duration            plan.Duration `yaml:"duration" json:"duration,omitempty" doc:"how long the test runs" default:"5s"`
	Streams             int           `yaml:"streams" json:"streams,omitempty" doc:"parallel streams, 1..128" default:"1"`
	Bandwidth           string        `yaml:"bandwidth" json:"bandwidth,omitempty" doc:"the rate as iperf3's -b takes it: UDP's (required for UDP), a pace for TCP" unit:"bit/s"` // UDP's rate, TCP's pace: iperf3's -b
	MinMbps             *float64      `yaml:"min_mbps" json:"min_mbps,omitempty" doc:"the least throughput that passes (required)" unit:"Mbit/s"`
	MaxRetransmits      *int          `yaml:"max_retransmits" json:"max_retransmits,omitempty" doc:"the most TCP retransmits that pass" unit:"segments"`
	MarginalMbps        *float64      `yaml:"marginal_mbps" json:"marginal_mbps,omitempty" doc:"the edge of min_mbps's marginal band: from min_mbps up to it passes as marginal" unit:"Mbit/s"`
	MarginalRetransmits *int          `yaml:"marginal_retransmits" json:"marginal_retransmits,omitempty" doc:"the edge of max_retransmits's marginal band: from it up to max_retransmits passes as marginal" unit:"segments"`
	MarginalLossPct     *float64      `yaml:"marginal_loss_pct" json:"marginal_loss_pct,omitempty" doc:"the edge of max_loss_pct's marginal band: from it up to max_loss_pct passes as marginal" unit:"%"`
	MaxLossPct          *float64      `yaml:"max_loss_pct" json:"max_loss_pct,omitempty" doc:"the most UDP loss that passes (required for UDP)" unit:"%"`

	bandwidth uint64 // bit/s
}

// Check defaults TCP, up, 5 s and one stream, and needs min_mbps (UDP also bandwidth and
// max_loss_pct).
func (s *Iperf3) Check(p *plan.Plan) error {
	if err := needStation(p); err != nil {
		return err
	}
	if s.Protocol == "" {
		s.Protocol = "tcp"
	}
	if s.Protocol != "tcp" && s.Protocol != "udp" {
		return fmt.Errorf("protocol %q: want tcp or udp", s.Protocol)
	}
	if err := checkDirection(&s.Direction); err != nil {
		return err
	}
	if err := checkDuration(&s.Duration, 5*time.Second, 0); err != nil {
		return err
	}
	if s.Streams == 0 {
		s.Streams = 1
	}
	if s.Streams < 0 || s.Streams > 128 {
		return fmt.Errorf("streams %d: want 1..128", s.Streams)
	}
	if s.MinMbps == nil {
		return fmt.Errorf("iperf3 step needs a threshold: min_mbps")
	}
	if s.Protocol == "udp" {
		if s.Bandwidth == "" {
			return fmt.Errorf("iperf3 step needs bandwidth (the UDP rate, 100M)")
		}
		if s.MaxLossPct == nil {
			return fmt.Errorf("iperf3 step needs a threshold: max_loss_pct")
		}
	}
	if s.Bandwidth != "" {
		// UDP's rate; for TCP a pace, as iperf3's -b.
		bw, err := iperf3.ParseSize(s.Bandwidth, 1000)
		if err != nil || bw == 0 || bw > 400e9 {
			return fmt.Errorf("bandwidth %q: want a rate in bit/s above 0 and up to 400G, as iperf3's -b (100M)", s.Bandwidth)
		}
		s.bandwidth = bw
	}
	if s.MaxRetransmits != nil && *s.MaxRetransmits < 0 {
		return fmt.Errorf("max_retransmits %d: want 0 or more", *s.MaxRetransmits)
	}
	if err := checkThresholds(map[string]*float64{"min_mbps": s.MinMbps, "max_loss_pct": s.MaxLossPct, "marginal_mbps": s.MarginalMbps, "marginal_loss_pct": s.MarginalLossPct}); err != nil {
		return err
	}
	return checkBands(s.Limits(), map[string]bool{"marginal_retransmits": s.MarginalRetransmits != nil && s.MaxRetransmits == nil,
		"marginal_mbps": s.MarginalMbps != nil && s.MinMbps == nil, "marginal_loss_pct": s.MarginalLossPct != nil && (s.MaxLossPct == nil || s.Protocol != "udp")})
}

// Timeout: the test, its connection and settling.
func (s *Iperf3) Timeout() time.Duration { return s.Duration.D() + 30*time.Second }

// Run measures against the station's iperf3 server in-process. The server takes one test
// at a time and may still be closing the last one: a busy answer is retried for a few
// seconds, as an operator would.
func (s *Iperf3) Run(ctx context.Context, e Env) (Outcome, error) {
	st := e.Station
	c := &iperf3.Client{Host: st.Address, Port: st.Port, Version: e.Version, ConnectTimeout: 5 * time.Second,
		Params: iperf3.Params{Time: int(s.Duration.D().Seconds()), Parallel: s.Streams, Reverse: s.Direction == "down"}}
	c.Params.UDP, c.Params.Bandwidth = s.Protocol == "udp", s.bandwidth
	rep, err := c.RunWhenFree(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("iperf3 to the station %s:%d: %w", st.Address, st.Port, err)
	}
	o := s.Judge(e.ID, rep)
	// The test's own seconds, as its sender counted them: the rest (connecting, the
	// streams' set-up, the results' exchange) is overhead.
	secs := max(rep.End.SumSent.Seconds, rep.End.Received().Seconds)
	if secs <= 0 {
		secs = s.Duration.D().Seconds()
	}
	o.Window = time.Duration(min(secs, s.Duration.D().Seconds()) * float64(time.Second))
	return o, nil
}

// Judge: the throughput the receiving side counted against min_mbps; for TCP the
// sender's retransmits against max_retransmits, for UDP the loss against max_loss_pct.
func (s *Iperf3) Judge(id string, r *iperf3.Report) Outcome {
	mbps := r.End.Received().BitsPerSecond / 1e6
	o := Outcome{Pass: true, Measured: map[string]float64{"mbps": mbps}, Figures: map[string]float64{id + "_mbps": mbps}, Detail: r.End}
	o.Summary = fmt.Sprintf("%s %s %.1f Mbit/s (want >= %g)", strings.ToUpper(s.Protocol), s.Direction, mbps, deref(s.MinMbps))
	if s.MinMbps != nil && mbps < *s.MinMbps {
		o.Pass, o.Reason = false, fmt.Sprintf("%.1f Mbit/s is below %g", mbps, *s.MinMbps)
	}
	if s.Protocol == "tcp" && r.End.SumSent.Retransmits != nil {
		rt := *r.End.SumSent.Retransmits
		o.Measured["retransmits"] = float64(rt)
		if s.MaxRetransmits != nil {
			o.Summary += fmt.Sprintf(", %d retransmits (want <= %d)", rt, *s.MaxRetransmits)
			if rt > int64(*s.MaxRetransmits) {
				o.Pass, o.Reason = false, fmt.Sprintf("%d retransmits, above %d", rt, *s.MaxRetransmits)
			}
		}
	}
	if s.Protocol == "udp" {
		var loss float64
		for _, si := range []*iperf3.StreamInterval{r.End.Sum, &r.End.SumReceived} {
			if si != nil && si.LostPercent != nil {
				loss = *si.LostPercent
				break
			}
		}
		o.Measured["loss_pct"] = loss
		o.Figures[id+"_loss_pct"] = loss
		o.Summary += fmt.Sprintf(", loss %.3f%% (want <= %g%%)", loss, deref(s.MaxLossPct))
		if s.MaxLossPct != nil && loss > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("UDP loss %.3f%% above %g%%", loss, *s.MaxLossPct)
		}
	}
	return o
}

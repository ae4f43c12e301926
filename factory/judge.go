package factory

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
	"github.com/zynqnet/linerate/validate"
)

// The judgements: each is a pure function of a step (its thresholds) and what its
// measurement found, so how a line judges a board is table-tested without a board.

// LinkMeasurement is what the link step read.
type LinkMeasurement struct {
	Carrier   bool
	After     time.Duration // until carrier, or how long it waited for none
	SpeedMbps int
	Duplex    string
	Operstate string
}

// JudgeLink: carrier within the step's time, at its speed and duplex.
func JudgeLink(s *validate.Step, m LinkMeasurement) validate.Outcome {
	if !m.Carrier {
		return validate.Outcome{Summary: fmt.Sprintf("no carrier within %v (operstate %s)", s.CarrierWithin.D(), orDash(m.Operstate)),
			Reason: "no link: check the cable and the switch port"}
	}
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"carrier_s": m.After.Seconds(), "speed_mbps": float64(m.SpeedMbps)},
		Figures: map[string]float64{"speed_mbps": float64(m.SpeedMbps)}}
	o.Summary = fmt.Sprintf("carrier after %.1fs, %d Mbit/s %s", m.After.Seconds(), m.SpeedMbps, orDash(m.Duplex))
	var want []string
	if s.SpeedMbps > 0 {
		want = append(want, fmt.Sprintf("%d Mbit/s", s.SpeedMbps))
		if m.SpeedMbps != s.SpeedMbps {
			o.Pass, o.Reason = false, fmt.Sprintf("link at %d Mbit/s, want %d (cable, PHY or autonegotiation)", m.SpeedMbps, s.SpeedMbps)
		}
	}
	if s.Duplex != "" {
		want = append(want, s.Duplex)
		if m.Duplex != s.Duplex {
			o.Pass, o.Reason = false, fmt.Sprintf("%s duplex, want %s", orDash(m.Duplex), s.Duplex)
		}
	}
	if len(want) > 0 {
		o.Summary += " (want " + strings.Join(want, " ") + ")"
	}
	return o
}

// JudgeDoctor: no finding of severity fail, or none of the step's fail_on ids.
func JudgeDoctor(s *validate.Step, iface string, rep *doctor.Report) validate.Outcome {
	var failing, all []string
	for _, i := range rep.Interfaces {
		for _, f := range i.Findings {
			all = append(all, f.ID)
			if (len(s.FailOn) == 0 && f.Severity == doctor.Fail) || slices.Contains(s.FailOn, f.ID) {
				failing = append(failing, f.ID)
			}
		}
	}
	o := validate.Outcome{Pass: len(failing) == 0, Measured: map[string]float64{"findings": float64(len(all)), "failing": float64(len(failing))}}
	o.Summary = fmt.Sprintf("%d findings (%s), %d failing", len(all), orDash(strings.Join(all, " ")), len(failing))
	if !o.Pass {
		o.Reason = "doctor: " + strings.Join(failing, ", ") + " (linerate doctor " + iface + " says why and how to fix)"
	}
	return o
}

// JudgeTune: the profile's transaction went through (applyErr nil), or it did not and
// every setting stayed as it was.
func JudgeTune(s *validate.Step, plan *tune.Plan, applyErr error) validate.Outcome {
	if applyErr != nil || plan == nil {
		reason := "no plan"
		if applyErr != nil {
			reason = applyErr.Error()
		}
		return validate.Outcome{Summary: "profile " + s.Profile + " not applied (every setting kept as it was)", Reason: reason}
	}
	keep := "reverted at the end"
	if s.Keep {
		keep = "kept"
	}
	return validate.Outcome{Pass: true, Summary: fmt.Sprintf("profile %s applied: %d changes, %d skipped (%s)", s.Profile, len(plan.Changes), len(plan.Skipped), keep),
		Measured: map[string]float64{"changes": float64(len(plan.Changes)), "skipped": float64(len(plan.Skipped))}}
}

// JudgeIperf3: the throughput the receiving side counted against min_mbps; for TCP the
// sender's retransmits against max_retransmits, for UDP the loss against max_loss_pct.
func JudgeIperf3(s *validate.Step, r *iperf3.Report) validate.Outcome {
	mbps := r.End.Received().BitsPerSecond / 1e6
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"mbps": mbps}, Figures: map[string]float64{s.ID + "_mbps": mbps}, Detail: r.End}
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
		o.Figures[s.ID+"_loss_pct"] = loss
		o.Summary += fmt.Sprintf(", loss %.3f%% (want <= %g%%)", loss, deref(s.MaxLossPct))
		if s.MaxLossPct != nil && loss > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("UDP loss %.3f%% above %g%%", loss, *s.MaxLossPct)
		}
	}
	return o
}

// JudgeThroughput: an RFC 2544 throughput search's result against min_throughput_pct.
func JudgeThroughput(s *validate.Step, r rfc2544.SizeResult) validate.Outcome {
	var pct, fps float64
	if r.Throughput != nil {
		pct, fps = r.Throughput.Percent, r.Throughput.FPS
	}
	o := validate.Outcome{Pass: pct >= deref(s.MinThroughputPct), Measured: map[string]float64{"throughput_pct": pct, "throughput_fps": fps},
		Figures: map[string]float64{s.ID + "_throughput_pct": pct}, Detail: r}
	o.Summary = fmt.Sprintf("RFC 2544 throughput at %d bytes: %.2f%% of line rate, %.0f fps (want >= %g%%)", s.Size, pct, fps, deref(s.MinThroughputPct))
	if !o.Pass {
		o.Reason = fmt.Sprintf("throughput %.2f%% below %g%%", pct, deref(s.MinThroughputPct))
	}
	return o
}

// JudgeFrames: frames through the reflector, loss against max_loss_pct and the
// round-trip p99 against max_p99_us.
//
// Frames the station's reflector dropped itself (its drop reports) are the station's,
// not the board's: they are reported, and left out of the loss judged.
func JudgeFrames(s *validate.Step, r frames.Result) validate.Outcome {
	board := r
	board.SenderDrops = 0 // the board's own driver refusing frames is the board's loss
	loss := board.PathLossPct()
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"sent": float64(r.Sent), "received": float64(r.Received), "loss_pct": loss, "pps": r.PPS,
		"reflector_drops": float64(r.ReflectorDrops), "sender_drops": float64(r.SenderDrops)},
		Figures: map[string]float64{s.ID + "_loss_pct": loss}, Detail: r}
	o.Summary = fmt.Sprintf("%d-byte frames at %s through the reflector: %d of %d back, loss %.3f%%", s.Size, s.Rate, r.Received, r.Sent, loss)
	if r.ReflectorDrops > 0 {
		o.Summary += fmt.Sprintf(" (%d more dropped by the station's reflector, not counted)", r.ReflectorDrops)
	}
	if s.MaxLossPct != nil {
		o.Summary += fmt.Sprintf(" (want <= %g%%)", *s.MaxLossPct)
		if loss > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("loss %.3f%% above %g%%", loss, *s.MaxLossPct)
		}
	}
	if s.MaxP99US != nil {
		if r.Latency == nil {
			o.Pass, o.Reason = false, "no frame came back: no latency"
			return o
		}
		p99 := float64(r.Latency.P99) / 1e3
		o.Measured["p99_us"] = p99
		o.Figures[s.ID+"_p99_us"] = p99
		o.Summary += fmt.Sprintf(", p99 %.0fus round trip (want <= %g)", p99, *s.MaxP99US)
		if r.LatencyClock == "hardware" {
			o.Summary += ", hardware stamps"
		}
		if p99 > *s.MaxP99US {
			o.Pass, o.Reason = false, fmt.Sprintf("p99 latency %.0fus above %gus", p99, *s.MaxP99US)
		}
	}
	if r.HWNote != "" {
		o.Summary += "; hardware timestamps: " + r.HWNote
	}
	return o
}

// JudgeCounters: no error counter rose between before and after, but those the step
// ignores. A counter that went backwards (the driver was reloaded) counts as no rise.
func JudgeCounters(s *validate.Step, before, after map[string]uint64) validate.Outcome {
	var rose []string
	measured := map[string]float64{}
	for _, c := range nic.ErrorCounterNames {
		var d uint64
		if after[c] > before[c] {
			d = after[c] - before[c]
		}
		measured[c] = float64(d)
		if d > 0 && !slices.Contains(s.Ignore, c) {
			rose = append(rose, fmt.Sprintf("%s +%d", c, d))
		}
	}
	o := validate.Outcome{Pass: len(rose) == 0, Measured: measured}
	if o.Pass {
		o.Summary = fmt.Sprintf("no error counter rose during the run (%d watched)", len(after))
	} else {
		o.Summary = "error counters rose: " + strings.Join(rose, ", ")
		o.Reason = o.Summary
	}
	return o
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// JudgeSweep: the sweep passes when every value was applied (tune reads each write back)
// and measured, and the knob was given back its value; the curve itself is the report's
// (Detail), for the station's chart.
func JudgeSweep(s *validate.Step, r *experiment.Result) validate.Outcome {
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"points": float64(len(r.Points))}, Detail: r}
	var bad []string
	for _, p := range r.Points {
		if p.Error != "" {
			bad = append(bad, p.Value+": "+p.Error)
		}
	}
	want := len(s.SweepValues())
	o.Summary = fmt.Sprintf("%s over %d values: %d measured", s.Knob, want, len(r.Points)-len(bad))
	if best, _, err := (experiment.Objective{Goal: "throughput"}).Pick(r); err == nil && len(best.Median) > 0 {
		o.Summary += "; most throughput at " + best.Value
		if v, ok := best.Median["tcp_mbps"]; ok {
			o.Summary += fmt.Sprintf(" (%.1f Mbit/s)", v)
		}
	}
	switch {
	case len(bad) > 0:
		o.Pass, o.Reason = false, strings.Join(bad, "; ")
	case r.Interrupted || len(r.Points) < want:
		o.Pass, o.Reason = false, fmt.Sprintf("cut short: %d of %d values measured", len(r.Points), want)
	case !r.Restored:
		o.Pass, o.Reason = false, "the knob was not given back its value"
	}
	return o
}

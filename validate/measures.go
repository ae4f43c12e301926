package validate

import (
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// What each step kind measures, with its unit ("" a count): what a plan's limits: may
// bound (plan.Measurer); and the kinds' own thresholds as limits with their marginal
// bands (plan.Limiter), judged with the plan's by the runner. Each kind's pair is here
// beside the others so that a measurement's unit is written once.

func lowLimit(m, unit string, low, marginal *float64) []plan.Limit {
	if low == nil {
		return nil
	}
	return []plan.Limit{{Measurement: m, Unit: unit, Low: low, MarginalLow: marginal}}
}

func highLimit(m, unit string, high, marginal *float64) []plan.Limit {
	if high == nil {
		return nil
	}
	return []plan.Limit{{Measurement: m, Unit: unit, High: high, MarginalHigh: marginal}}
}

// Measures: TCP's throughput and retransmits, UDP's throughput and loss.
func (s *Iperf3) Measures() map[string]string {
	switch s.Protocol {
	case "udp":
		return map[string]string{"mbps": "Mbit/s", "loss_pct": "%"}
	case "tcp":
		return map[string]string{"mbps": "Mbit/s", "retransmits": ""}
	}
	return map[string]string{"mbps": "Mbit/s", "retransmits": "", "loss_pct": "%"} // either, before Check

}

// Limits: min_mbps (marginal_mbps), max_retransmits (marginal_retransmits),
// max_loss_pct (marginal_loss_pct).
func (s *Iperf3) Limits() []plan.Limit {
	var retr, mretr *float64
	if s.MaxRetransmits != nil {
		retr = new(float64(*s.MaxRetransmits))
	}
	if s.MarginalRetransmits != nil {
		mretr = new(float64(*s.MarginalRetransmits))
	}
	out := lowLimit("mbps", "Mbit/s", s.MinMbps, s.MarginalMbps)
	if s.Protocol == "udp" {
		return append(out, highLimit("loss_pct", "%", s.MaxLossPct, s.MarginalLossPct)...)
	}
	return append(out, highLimit("retransmits", "", retr, mretr)...)
}

// Measures: at a rate, what came back and the round trip; in a search, the throughput.
func (s *Frames) Measures() map[string]string {
	if s.MinThroughputPct != nil {
		return map[string]string{"throughput_pct": "%", "throughput_fps": "frames/s"}
	}
	return map[string]string{"sent": "", "received": "", "loss_pct": "%", "pps": "packets/s", "reflector_drops": "", "sender_drops": "", "p99_us": "µs"}
}

// Limits: max_loss_pct, max_p99_us and min_throughput_pct, each with its band.
func (s *Frames) Limits() []plan.Limit {
	if s.MinThroughputPct != nil {
		return lowLimit("throughput_pct", "%", s.MinThroughputPct, s.MarginalThroughputPct)
	}
	return append(highLimit("loss_pct", "%", s.MaxLossPct, s.MarginalLossPct), highLimit("p99_us", "µs", s.MaxP99US, s.MarginalP99US)...)
}

// Measures: the wait for carrier and the speed.
func (s *Link) Measures() map[string]string {
	return map[string]string{"carrier_s": "s", "speed_mbps": "Mbit/s"}
}

// Measures: the carrier's losses, its time down and the events.
func (s *Stability) Measures() map[string]string {
	return map[string]string{"carrier_downs": "", "down_s": "s", "events": ""}
}

// Measures: the findings and those that fail.
func (s *Doctor) Measures() map[string]string {
	return map[string]string{"findings": "", "failing": ""}
}

// Measures: each error counter's rise.
func (s *Counters) Measures() map[string]string {
	out := map[string]string{}
	for _, c := range nic.ErrorCounterNames {
		out[c] = ""
	}
	return out
}

// Measures: the profile's changes and skips.
func (s *Tune) Measures() map[string]string { return map[string]string{"changes": "", "skipped": ""} }

// Measures: the points measured.
func (s *Sweep) Measures() map[string]string { return map[string]string{"points": ""} }

// Measures: the loopback's frames.
func (s *PHY) Measures() map[string]string {
	return map[string]string{"loopback_sent": "", "loopback_received": "", "loopback_corrupted": ""}
}

// Package validate is linerate's factory validation: a board's plan (YAML), the runner
// that takes its steps in order under timeouts and a budget, the verdict, the JSON and
// JUnit reports, and their delivery to the station with a spool that loses nothing.
package validate

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/internal/srcerr"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/tune"
	"go.yaml.in/yaml/v3"
)

//go:embed plans/*.yaml
var builtin embed.FS

// Step types, in the order a plan usually takes them.
var StepTypes = []string{"link", "doctor", "tune", "iperf3", "frames", "counters", "sweep"}

// Duration is a time.Duration written as "10s" in a plan.
type Duration time.Duration

// D is the duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes it as text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// UnmarshalJSON reads it back ("10s"), or nanoseconds as a number.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if s, err := strconv.Unquote(string(b)); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %v", s, err)
		}
		*d = Duration(v)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("duration %s: want \"10s\" or nanoseconds", b)
	}
	*d = Duration(n)
	return nil
}

// Plan is a board's factory plan.
type Plan struct {
	Name      string   `yaml:"name" json:"name"`
	Board     string   `yaml:"board" json:"board"`         // a board profile, or auto (from the device tree)
	Interface string   `yaml:"interface" json:"interface"` // the port under test
	Station   Station  `yaml:"station" json:"station"`
	Budget    Duration `yaml:"budget" json:"budget"` // the whole plan's time
	Steps     []Step   `yaml:"steps" json:"steps"`
	Source    string   `yaml:"-" json:"source"`
}

// Station is where the board measures against and reports to.
type Station struct {
	Address      string `yaml:"address" json:"address"`             // its iperf3 server (and reflector's IP)
	Port         int    `yaml:"port" json:"port"`                   // iperf3 port, default 5201
	ReportURL    string `yaml:"report_url" json:"report_url"`       // where the JSON report is POSTed
	ReflectorMAC string `yaml:"reflector_mac" json:"reflector_mac"` // the reflector's MAC, or auto (ARP for Address)
	// Token is where the station's bearer token is: FILE, or @NAME for an environment
	// variable (validate --station-token overrides it). Never the token itself: the plan
	// goes into the report.
	Token string `yaml:"token" json:"token,omitempty"`
}

// Step is one step; which fields apply depends on Type.
type Step struct {
	ID      string   `yaml:"id" json:"id"`
	Type    string   `yaml:"type" json:"type"`
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`

	// link
	CarrierWithin Duration `yaml:"carrier_within" json:"carrier_within,omitempty"`
	SpeedMbps     int      `yaml:"speed_mbps" json:"speed_mbps,omitempty"`
	Duplex        string   `yaml:"duplex" json:"duplex,omitempty"`
	// doctor: fail on these finding ids; empty means any finding of severity fail
	FailOn []string `yaml:"fail_on" json:"fail_on,omitempty"`
	// tune: a profile applied before measuring, reverted at the end unless keep
	Profile string `yaml:"profile" json:"profile,omitempty"`
	Keep    bool   `yaml:"keep" json:"keep,omitempty"`
	// iperf3
	Protocol       string   `yaml:"protocol" json:"protocol,omitempty"`   // tcp or udp
	Direction      string   `yaml:"direction" json:"direction,omitempty"` // up (board sends) or down
	Duration       Duration `yaml:"duration" json:"duration,omitempty"`
	Streams        int      `yaml:"streams" json:"streams,omitempty"`
	Bandwidth      string   `yaml:"bandwidth" json:"bandwidth,omitempty"` // UDP target, iperf3's -b
	MinMbps        *float64 `yaml:"min_mbps" json:"min_mbps,omitempty"`
	MaxRetransmits *int     `yaml:"max_retransmits" json:"max_retransmits,omitempty"`
	MaxLossPct     *float64 `yaml:"max_loss_pct" json:"max_loss_pct,omitempty"`
	// frames: through the station's reflector
	Size             int      `yaml:"size" json:"size,omitempty"`
	Rate             string   `yaml:"rate" json:"rate,omitempty"`
	MaxP99US         *float64 `yaml:"max_p99_us" json:"max_p99_us,omitempty"`
	MinThroughputPct *float64 `yaml:"min_throughput_pct" json:"min_throughput_pct,omitempty"` // RFC 2544 throughput instead
	// CPUs: senders and receive rings, as gen's --cpus (a count or all); empty: one
	CPUs string `yaml:"cpus" json:"cpus,omitempty"`
	// HWTimestamps: latency from the NIC's hardware stamps where the port has them
	HWTimestamps bool `yaml:"hw_timestamps" json:"hw_timestamps,omitempty"`
	// counters: error counters that may rise
	Ignore []string `yaml:"ignore" json:"ignore,omitempty"`
	// sweep: a tune knob over values (as linerate sweep's --values), each point measured
	// by tcp (iperf3 to the station, in Direction) and/or frames (through its reflector,
	// at Size and Rate), Repeat times; Duration is a measurement's length
	Knob    string   `yaml:"knob" json:"knob,omitempty"`
	Values  string   `yaml:"values" json:"values,omitempty"`
	Measure []string `yaml:"measure" json:"measure,omitempty"`
	Repeat  int      `yaml:"repeat" json:"repeat,omitempty"`

	Line int `yaml:"-" json:"-"`
}

// PlanError is a bad plan: the file, the line and what is wrong.
type PlanError = srcerr.Error

// BuiltinNames lists the plans shipped in the binary.
func BuiltinNames() []string {
	ents, _ := builtin.ReadDir("plans")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// Load reads a plan: a built-in name (qemu-zc702, zc702, ...) or a YAML file.
func Load(arg string) (*Plan, error) {
	if b, err := builtin.ReadFile("plans/" + arg + ".yaml"); err == nil {
		return Parse(b, "built-in plan "+arg)
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &PlanError{Source: arg, Msg: fmt.Sprintf("no such file, and not a built-in plan (%s)", strings.Join(BuiltinNames(), ", "))}
		}
		return nil, &PlanError{Source: arg, Msg: err.Error()}
	}
	return Parse(b, arg)
}

const maxPlanBytes = 1 << 20

// Parse reads and checks a plan; every problem names its line.
func Parse(data []byte, source string) (*Plan, error) {
	if len(data) > maxPlanBytes {
		return nil, &PlanError{Source: source, Msg: fmt.Sprintf("%d bytes: a plan is at most %d", len(data), maxPlanBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &PlanError{Source: source, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &PlanError{Source: source, Line: 1, Msg: "want a mapping with board, interface, station and steps"}
	}
	p := &Plan{Source: source}
	doc := root.Content[0]
	dec := func(n *yaml.Node, v any) error {
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		if err := enc.Encode(n); err != nil {
			return err
		}
		d := yaml.NewDecoder(&b)
		d.KnownFields(true)
		return d.Decode(v)
	}
	bad := func(n *yaml.Node, format string, a ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &PlanError{Source: source, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	var stepsNode *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		switch k.Value {
		case "name", "board", "interface":
			if v.Kind != yaml.ScalarNode {
				return nil, bad(v, "%s: want a text value", k.Value)
			}
			*map[string]*string{"name": &p.Name, "board": &p.Board, "interface": &p.Interface}[k.Value] = v.Value
		case "budget":
			d, err := parseDuration(v)
			if err != nil {
				return nil, bad(v, "budget: %v", err)
			}
			p.Budget = d
		case "station":
			if err := dec(v, &p.Station); err != nil {
				return nil, bad(v, "station: %s", yamlMsg(err))
			}
		case "steps":
			stepsNode = v
		default:
			return nil, bad(k, "unknown key %q (have name, board, interface, station, budget, steps)", k.Value)
		}
	}
	if stepsNode == nil || stepsNode.Kind != yaml.SequenceNode || len(stepsNode.Content) == 0 {
		return nil, bad(stepsNode, "steps: want a list of at least one step")
	}
	ids := map[string]bool{}
	for _, sn := range stepsNode.Content {
		if sn.Kind != yaml.MappingNode {
			return nil, bad(sn, "a step must be a mapping with id and type")
		}
		var s Step
		// Durations are checked here, with their line, and set after the struct decode.
		durs := map[string]Duration{}
		for i := 0; i+1 < len(sn.Content); i += 2 {
			k, v := sn.Content[i], sn.Content[i+1]
			switch k.Value {
			case "timeout", "carrier_within", "duration":
				d, err := parseDuration(v)
				if err != nil {
					return nil, bad(v, "%s: %v", k.Value, err)
				}
				durs[k.Value] = d
				v.Value, v.Tag = "0", "!!int"
			}
		}
		if err := dec(sn, &s); err != nil {
			return nil, bad(sn, "%s", yamlMsg(err))
		}
		s.Line = sn.Line
		s.Timeout, s.CarrierWithin, s.Duration = durs["timeout"], durs["carrier_within"], durs["duration"]
		if err := s.check(); err != nil {
			return nil, bad(sn, "step %q: %v", s.ID, err)
		}
		if ids[s.ID] {
			return nil, bad(sn, "step id %q is used twice", s.ID)
		}
		ids[s.ID] = true
		p.Steps = append(p.Steps, s)
	}
	if p.Board == "" {
		p.Board = "auto"
	}
	if p.Interface == "" {
		p.Interface = "eth0"
	}
	if p.Station.Port == 0 {
		p.Station.Port = 5201
	}
	if p.Station.Port < 1 || p.Station.Port > 65535 {
		return nil, bad(doc, "station.port %d: want 1..65535", p.Station.Port)
	}
	if m := p.Station.ReflectorMAC; m != "" && m != "auto" {
		if hw, err := net.ParseMAC(m); err != nil || len(hw) != 6 {
			return nil, bad(doc, "station.reflector_mac %q: want an Ethernet address (02:00:00:00:00:0b) or auto", m)
		}
	}
	if p.Station.ReflectorMAC == "" {
		p.Station.ReflectorMAC = "auto"
	}
	if p.Budget == 0 {
		p.Budget = Duration(10 * time.Minute)
	}
	if p.Budget.D() < 0 || p.Budget.D() > 24*time.Hour {
		return nil, bad(doc, "budget %v: want up to 24h", p.Budget.D())
	}
	if p.Station.ReportURL != "" {
		if u, err := url.Parse(p.Station.ReportURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, bad(doc, "station.report_url %q: want an http:// or https:// URL", p.Station.ReportURL)
		}
	}
	for _, s := range p.Steps {
		if (s.Type == "iperf3" || s.Type == "frames" || s.Type == "sweep") && p.Station.Address == "" {
			return nil, bad(doc, "step %q measures against the station: give station.address", s.ID)
		}
	}
	return p, nil
}

func yamlMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	s = strings.TrimSpace(s)
	// "line 3: field x not found in type validate.Step": say it in the plan's words.
	if i := strings.Index(s, " not found in type"); i >= 0 {
		s = s[:i] + " is not a key of this part of the plan"
	}
	return strings.ReplaceAll(s, "cannot unmarshal !!str", "want a number, not the text")
}

func parseDuration(v *yaml.Node) (Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, errors.New("want a duration such as 10s or 2m")
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration with its unit, such as 10s or 2m", v.Value)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration", v.Value)
	}
	return Duration(d), nil
}

// check validates a step's fields for its type: what it needs, nothing it cannot use.
func (s *Step) check() error {
	if s.ID == "" {
		return errors.New("no id")
	}
	if strings.Trim(s.ID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" || len(s.ID) > 128 || s.ID == "." || s.ID == ".." {
		return fmt.Errorf("id %q: use letters, digits, '.', '_' and '-' (the station takes no other)", s.ID)
	}
	if !slices.Contains(StepTypes, s.Type) {
		return fmt.Errorf("unknown type %q (have %s)", s.Type, strings.Join(StepTypes, ", "))
	}
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s step needs %s", s.Type, what)
		}
		return nil
	}
	switch s.Type {
	case "link":
		if s.CarrierWithin == 0 {
			s.CarrierWithin = Duration(10 * time.Second)
		}
		if s.Duplex != "" && s.Duplex != "full" && s.Duplex != "half" {
			return fmt.Errorf("duplex %q: want full or half", s.Duplex)
		}
		if s.SpeedMbps < 0 {
			return fmt.Errorf("speed_mbps %d: want a positive speed", s.SpeedMbps)
		}
	case "tune":
		if err := need(s.Profile != "", "a profile"); err != nil {
			return err
		}
	case "iperf3":
		if s.Protocol == "" {
			s.Protocol = "tcp"
		}
		if s.Protocol != "tcp" && s.Protocol != "udp" {
			return fmt.Errorf("protocol %q: want tcp or udp", s.Protocol)
		}
		if err := s.checkDirection(); err != nil {
			return err
		}
		if s.Duration == 0 {
			s.Duration = Duration(5 * time.Second)
		}
		if s.Streams == 0 {
			s.Streams = 1
		}
		if s.Streams < 0 || s.Streams > 128 {
			return fmt.Errorf("streams %d: want 1..128", s.Streams)
		}
		if err := need(s.MinMbps != nil, "a threshold: min_mbps"); err != nil {
			return err
		}
		if s.Protocol == "udp" {
			if err := need(s.Bandwidth != "", "bandwidth (the UDP rate, 100M)"); err != nil {
				return err
			}
			if err := need(s.MaxLossPct != nil, "a threshold: max_loss_pct"); err != nil {
				return err
			}
		}
	case "frames":
		if s.Size == 0 {
			s.Size = 512
		}
		if s.Duration == 0 {
			s.Duration = Duration(5 * time.Second)
		}
		if s.MinThroughputPct == nil {
			if err := need(s.Rate != "", "a rate (10%, 50Mbit, 5000pps), or min_throughput_pct for an RFC 2544 search"); err != nil {
				return err
			}
			if err := need(s.MaxLossPct != nil || s.MaxP99US != nil, "a threshold: max_loss_pct and/or max_p99_us"); err != nil {
				return err
			}
		}
	case "sweep":
		if err := s.checkSweep(); err != nil {
			return err
		}
	}
	if err := s.checkRanges(); err != nil {
		return err
	}
	if s.Timeout == 0 {
		s.Timeout = Duration(s.defaultTimeout())
	}
	return nil
}

// thresholdRanges are the thresholds' ranges: a threshold outside (NaN and infinities
// included) would make a step that can never pass, or never fail.
var thresholdRanges = []struct {
	name     string
	get      func(*Step) *float64
	min, max float64
	unit     string
}{
	{"min_mbps", func(s *Step) *float64 { return s.MinMbps }, 0, 1e6, "Mbit/s"},
	{"max_loss_pct", func(s *Step) *float64 { return s.MaxLossPct }, 0, 100, "%"},
	{"max_p99_us", func(s *Step) *float64 { return s.MaxP99US }, 0, 60e6, "µs"},
	{"min_throughput_pct", func(s *Step) *float64 { return s.MinThroughputPct }, 0, 100, "%"},
}

// checkRanges refuses every number of the step that is not finite or not within what
// its step can measure.
func (s *Step) checkRanges() error {
	for _, r := range thresholdRanges {
		if v := r.get(s); v != nil && (math.IsNaN(*v) || *v < r.min || *v > r.max) {
			return fmt.Errorf("%s %v: out of range, want %g..%g %s", r.name, *v, r.min, r.max, r.unit)
		}
	}
	if s.MaxRetransmits != nil && *s.MaxRetransmits < 0 {
		return fmt.Errorf("max_retransmits %d: want 0 or more", *s.MaxRetransmits)
	}
	if s.SpeedMbps < 0 || s.SpeedMbps > 400000 {
		return fmt.Errorf("speed_mbps %d: want a link speed up to 400000", s.SpeedMbps)
	}
	for name, d := range map[string]struct{ v, max time.Duration }{
		"duration": {s.Duration.D(), time.Hour}, "carrier_within": {s.CarrierWithin.D(), 10 * time.Minute}, "timeout": {s.Timeout.D(), 24 * time.Hour},
	} {
		if d.v > d.max {
			return fmt.Errorf("%s %v: want at most %v", name, d.v, d.max)
		}
	}
	switch s.Type {
	case "iperf3":
		if s.Protocol == "udp" {
			bw, err := iperf3.ParseSize(s.Bandwidth, 1000)
			if err != nil || bw == 0 || bw > 400e9 {
				return fmt.Errorf("bandwidth %q: want a UDP rate in bit/s above 0 and up to 400G, as iperf3's -b (100M)", s.Bandwidth)
			}
		}
	case "frames", "sweep":
		if s.Type == "sweep" && !slices.Contains(s.Measure, "frames") {
			break
		}
		if s.Size < frames.MinSize || s.Size > frames.MaxSize {
			return fmt.Errorf("size %d: want a frame size of %d..%d bytes with FCS", s.Size, frames.MinSize, frames.MaxSize)
		}
		if s.Rate != "" {
			if _, err := frames.ParseRate(s.Rate); err != nil {
				return err
			}
		}
		if _, err := engine.ParseCPUs("cpus", s.CPUs); err != nil {
			return err
		}
	}
	return nil
}

// checkSweep fills a sweep step's defaults and checks the knob, every value and what
// it measures.
func (s *Step) checkSweep() error {
	if s.Knob == "" || s.Values == "" {
		return fmt.Errorf("sweep step needs knob and values (64..8192, or V1,V2,...)")
	}
	vs, err := experiment.ParseValues(s.Values)
	if err != nil {
		return fmt.Errorf("values: %v", strings.TrimPrefix(err.Error(), "--values "))
	}
	for _, v := range vs {
		if _, err := tune.CheckSetting(s.Knob, v); err != nil {
			return err
		}
	}
	if len(s.Measure) == 0 {
		s.Measure = []string{"tcp"}
	}
	for _, m := range s.Measure {
		if m != "tcp" && m != "frames" {
			return fmt.Errorf("measure %q: want tcp and/or frames", m)
		}
	}
	if err := s.checkDirection(); err != nil {
		return err
	}
	if s.Duration == 0 {
		s.Duration = Duration(3 * time.Second)
	}
	if s.Duration.D() < time.Second {
		return fmt.Errorf("duration %v: a measurement takes at least 1s", s.Duration.D())
	}
	if s.Repeat == 0 {
		s.Repeat = 1
	}
	if s.Repeat < 1 || s.Repeat > 100 {
		return fmt.Errorf("repeat %d: want 1..100", s.Repeat)
	}
	if slices.Contains(s.Measure, "frames") { // checked with a frames step's, in checkRanges
		if s.Size == 0 {
			s.Size = 512
		}
		if s.Rate == "" {
			s.Rate = "1000pps"
		}
	}
	return nil
}

// checkDirection defaults a step's direction to up and refuses any but up and down.
func (s *Step) checkDirection() error {
	if s.Direction == "" {
		s.Direction = "up"
	}
	if s.Direction != "up" && s.Direction != "down" {
		return fmt.Errorf("direction %q: want up (the board sends) or down", s.Direction)
	}
	return nil
}

// SweepValues are a sweep step's values (checked by Parse).
func (s *Step) SweepValues() []string {
	vs, _ := experiment.ParseValues(s.Values)
	return vs
}

func (s *Step) defaultTimeout() time.Duration {
	switch s.Type {
	case "sweep":
		// Each point: a knob that may bounce the link, then each measurement with its
		// settling; the port given back at the end.
		per := time.Duration(len(s.Measure))*(s.Duration.D()+2*time.Second) + 20*time.Second
		return time.Duration(len(s.SweepValues())*s.Repeat)*per + 60*time.Second
	case "link":
		return s.CarrierWithin.D() + 5*time.Second
	case "doctor":
		return 30 * time.Second
	case "tune":
		return 60 * time.Second
	case "iperf3":
		return s.Duration.D() + 30*time.Second
	case "frames":
		if s.MinThroughputPct != nil {
			return 20*s.Duration.D() + 30*time.Second
		}
		return s.Duration.D() + 30*time.Second
	}
	return 10 * time.Second
}

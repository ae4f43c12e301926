// Package plan is what a board's factory plan and its report are: the types, the plan
// parsed and checked once into typed values, the report's verdict line and JUnit form.
//
// It is a leaf: it imports no other linerate package but internal/* leaves, so the
// station (which reads reports) and the board (which writes them) share it without the
// station taking in the board's measuring code. A step's own fields are the step kind's:
// the kinds (package validate) hand Parse a constructor per type, and each kind checks
// and defaults its fields itself.
package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/srcerr"
	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "10s" in a plan and in its JSON.
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

// UnmarshalYAML reads "10s" or "2m": a positive duration with its unit.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("want a duration such as 10s or 2m")
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("%q: want a duration with its unit, such as 10s or 2m", n.Value)
	}
	if v <= 0 {
		return fmt.Errorf("%q: want a positive duration", n.Value)
	}
	*d = Duration(v)
	return nil
}

// Window is a Duration that may be 0s: a measurement window a step can go without.
type Window struct{ Duration }

// UnmarshalYAML reads "10s", "2m" or "0s".
func (w *Window) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if v, err := time.ParseDuration(n.Value); err == nil && v == 0 {
			w.Duration = 0
			return nil
		}
	}
	if err := w.Duration.UnmarshalYAML(n); err != nil {
		return errors.New(strings.Replace(err.Error(), "a positive duration", "a duration of 0s or more", 1))
	}
	return nil
}

// Plan is a board's factory plan.
type Plan struct {
	Name      string   `yaml:"name" json:"name"`
	Board     string   `yaml:"board" json:"board"`         // a board profile, or auto (from the device tree)
	Interface string   `yaml:"interface" json:"interface"` // the port under test
	Station   Station  `yaml:"station" json:"station"`
	Budget    Duration `yaml:"budget" json:"budget"` // the whole plan's time
	// Fixture names the test fixture (the station's port and cable the board is on);
	// validate --fixture and linerate.fixture= override it, the station's port is the
	// default.
	Fixture string `yaml:"fixture" json:"fixture,omitempty"`
	// Operator is who runs the line's tests, when the plan says (the console prompt,
	// validate --operator and linerate.operator= come first).
	Operator string `yaml:"operator" json:"operator,omitempty"`
	// Ports are the board's ports under test, each with its station (the plan's, with
	// what the port gives of its own over it): from ports:, or the one interface:.
	// Steps run on every port; those that move traffic on all at once.
	Ports  []Port `yaml:"-" json:"ports,omitempty"`
	Steps  []Step `yaml:"steps" json:"steps"`
	Source string `yaml:"-" json:"source"`
	// SHA256 is the hash of the plan's text as it was read (hex), Text that text: what
	// ties a report to the limits that judged it.
	SHA256 string `yaml:"-" json:"sha256,omitempty"`
	Text   string `yaml:"-" json:"text,omitempty"`
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
	// MAC is the reflector's MAC, parsed (nil for auto).
	MAC net.HardwareAddr `yaml:"-" json:"-"`
}

// Port is one port of the board under test, with the station it measures against.
type Port struct {
	Interface string  `json:"interface"`
	Station   Station `json:"station"`
}

// MaxPorts bounds a plan's ports (a ZynqMP has four GEMs; boards with switches more).
const MaxPorts = 16

// Multi says the plan tests more than one port: step ids and figures then name the port.
func (p *Plan) Multi() bool { return len(p.Ports) > 1 }

// Params are a step kind's own fields, decoded from the step's YAML mapping (every key
// but id, type and timeout) and then checked once: Check fills the kind's defaults and
// refuses what the kind cannot run, turning text into typed values as it goes, so the
// code that runs the step never parses a string again.
type Params interface {
	// Check defaults and checks the fields; the plan is there for what a step needs of
	// it (the station's address). An error says which field and why.
	Check(p *Plan) error
	// Timeout is the step's timeout when the plan gives none.
	Timeout() time.Duration
}

// Measurer is a step kind that says what it measures, each measurement with its unit
// ("" for a count): what a plan's limits: may bound.
type Measurer interface {
	Measures() map[string]string
}

// Limiter is a step kind whose own thresholds are limits (min_mbps with marginal_mbps):
// judged, and shown, as the plan's are.
type Limiter interface {
	Limits() []Limit
}

// Limits are every limit of the step: its kind's thresholds, then the plan's limits:.
func (s *Step) AllLimits() []Limit {
	var out []Limit
	if l, ok := s.Params.(Limiter); ok {
		out = append(out, l.Limits()...)
	}
	return append(out, s.Limits...)
}

// checkLimits holds the plan's limits of a step to what its kind measures and in which
// unit.
func (s *Step) checkLimits() error {
	if len(s.Limits) == 0 {
		return nil
	}
	m, ok := s.Params.(Measurer)
	if !ok {
		return fmt.Errorf("limits: a step of type %s has no measurements to bound", s.Type)
	}
	have := m.Measures()
	for i := range s.Limits {
		unit, ok := have[s.Limits[i].Measurement]
		if !ok {
			names := make([]string, 0, len(have))
			for k := range have {
				names = append(names, k)
			}
			sort.Strings(names)
			return fmt.Errorf("limits: a step of type %s measures no %q (it measures %s)", s.Type, s.Limits[i].Measurement, strings.Join(names, ", "))
		}
		if err := s.Limits[i].Check(unit); err != nil {
			return fmt.Errorf("limits: %v", err)
		}
	}
	return nil
}

// Kinds makes a step type's Params: nil for a type it does not know. Names lists the
// types, for the error that names an unknown one.
type Kinds struct {
	Names []string
	New   func(typ string) Params
}

// Step is one step: the fields every step has, and its kind's Params.
type Step struct {
	ID      string
	Type    string
	Timeout Duration
	// Retry is how many times a failed step is run again (0: once only); the report
	// keeps every attempt.
	Retry int
	// Sequential runs the step on one port after the other (concurrent: false); by
	// default a step runs on every port at once, so the board is loaded as in service.
	Sequential bool
	// Limits are the plan's own limits of the step's measurements (limits:); Limits()
	// adds the kind's thresholds.
	Limits []Limit
	Params Params
	// Raw is the step as a report carries it, when it was read from JSON (the station
	// has no kinds: it reads what it needs of a step with Decode).
	Raw  json.RawMessage
	Line int
}

// header is what every step has, as JSON writes it.
type header struct {
	ID         string   `json:"id"`
	Type       string   `json:"type"`
	Timeout    Duration `json:"timeout,omitempty"`
	Retry      int      `json:"retry,omitempty"`
	Concurrent *bool    `json:"concurrent,omitempty"`
	Limits     []Limit  `json:"limits,omitempty"`
}

// MarshalJSON writes the step as one object: id, type, timeout, then its kind's fields.
func (s Step) MarshalJSON() ([]byte, error) {
	if s.Params == nil && len(s.Raw) > 0 {
		return s.Raw, nil
	}
	var conc *bool
	if s.Sequential {
		conc = new(bool)
	}
	h, err := json.Marshal(header{s.ID, s.Type, s.Timeout, s.Retry, conc, s.Limits})
	if err != nil || s.Params == nil {
		return h, err
	}
	p, err := json.Marshal(s.Params)
	if err != nil {
		return nil, err
	}
	if len(p) < 2 || p[0] != '{' {
		return nil, fmt.Errorf("step %s: its fields are not a JSON object", s.ID)
	}
	if string(p) == "{}" {
		return h, nil
	}
	return append(append(h[:len(h)-1], ','), p[1:]...), nil
}

// UnmarshalJSON reads the common fields and keeps the whole object in Raw.
func (s *Step) UnmarshalJSON(b []byte) error {
	var h header
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	s.ID, s.Type, s.Timeout, s.Retry, s.Limits = h.ID, h.Type, h.Timeout, h.Retry, h.Limits
	s.Sequential = h.Concurrent != nil && !*h.Concurrent
	s.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Decode reads the step's fields into v (a struct of the fields wanted).
func (s Step) Decode(v any) error {
	b, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Error is a bad plan: the file, the line and what is wrong.
type Error = srcerr.Error

// MaxBytes bounds a plan file.
const MaxBytes = 1 << 20

// Parse reads and checks a plan; every problem names its line. The step kinds come from
// kinds; each step's fields are decoded into its kind's Params and checked by it.
func Parse(data []byte, source string, kinds Kinds) (*Plan, error) {
	ps := &parser{source: source, kinds: kinds}
	if len(data) > MaxBytes {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("%d bytes: a plan is at most %d", len(data), MaxBytes)}
	}
	doc, err := ps.document(data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	p := &Plan{Source: source, SHA256: hex.EncodeToString(sum[:]), Text: string(data)}
	steps, err := ps.top(doc, p)
	if err != nil {
		return nil, err
	}
	if err := ps.defaults(doc, p); err != nil {
		return nil, err
	}
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		return nil, ps.bad(steps, "steps: want a list of at least one step")
	}
	ids := map[string]bool{}
	for _, sn := range steps.Content {
		s, err := ps.step(sn, p)
		if err != nil {
			return nil, err
		}
		if ids[s.ID] {
			return nil, ps.bad(sn, "step id %q is used twice", s.ID)
		}
		ids[s.ID] = true
		p.Steps = append(p.Steps, s)
	}
	return p, nil
}

type parser struct {
	source string
	kinds  Kinds
	ports  *yaml.Node // the plan's ports:, read once the station is known
}

func (ps *parser) bad(n *yaml.Node, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Source: ps.source, Line: line, Msg: fmt.Sprintf(format, a...)}
}

// document is the plan's one YAML document, a mapping. A second document, or a key given
// twice, is refused: a plan means one thing.
func (ps *parser) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if err.Error() == "EOF" {
			msg = "empty: want a mapping with board, interface, station and steps"
		}
		return nil, &Error{Source: ps.source, Msg: msg}
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, ps.bad(&more, "a second YAML document: a plan is one document")
	}
	top, err := expand(&root)
	if err != nil {
		err.(*Error).Source = ps.source
		return nil, err
	}
	if top.Kind != yaml.DocumentNode || len(top.Content) == 0 || top.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{Source: ps.source, Line: 1, Msg: "want a mapping with board, interface, station and steps"}
	}
	return top.Content[0], nil
}

// top reads the plan's own keys and returns the steps' node.
func (ps *parser) top(doc *yaml.Node, p *Plan) (*yaml.Node, error) {
	var steps *yaml.Node
	ps.ports = nil
	seen := map[string]bool{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if seen[k.Value] {
			return nil, ps.bad(k, "%q is given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name", "board", "interface", "fixture", "operator":
			if v.Kind != yaml.ScalarNode {
				return nil, ps.bad(v, "%s: want a text value", k.Value)
			}
			*map[string]*string{"name": &p.Name, "board": &p.Board, "interface": &p.Interface, "fixture": &p.Fixture, "operator": &p.Operator}[k.Value] = v.Value
		case "budget":
			if err := v.Decode(&p.Budget); err != nil {
				return nil, ps.bad(v, "budget: %v", err)
			}
		case "station":
			if err := decodeStrict(v, &p.Station); err != nil {
				return nil, ps.bad(v, "station: %s", yamlMsg(err))
			}
		case "steps":
			steps = v
		case "ports":
			ps.ports = v
		default:
			return nil, ps.bad(k, "unknown key %q (have name, board, interface, ports, fixture, operator, station, budget, steps)", k.Value)
		}
	}
	return steps, nil
}

// defaults fills and checks the plan's own values.
func (ps *parser) defaults(doc *yaml.Node, p *Plan) error {
	if p.Board == "" {
		p.Board = "auto"
	}
	st := &p.Station
	if st.Port == 0 {
		st.Port = 5201
	}
	if st.Port < 1 || st.Port > 65535 {
		return ps.bad(doc, "station.port %d: want 1..65535", st.Port)
	}
	if m := st.ReflectorMAC; m != "" && m != "auto" {
		hw, err := net.ParseMAC(m)
		if err != nil || len(hw) != 6 {
			return ps.bad(doc, "station.reflector_mac %q: want an Ethernet address (02:00:00:00:00:0b) or auto", m)
		}
		st.MAC = hw
	}
	if st.ReflectorMAC == "" {
		st.ReflectorMAC = "auto"
	}
	if p.Budget == 0 {
		p.Budget = Duration(10 * time.Minute)
	}
	if p.Budget.D() > 24*time.Hour {
		return ps.bad(doc, "budget %v: want up to 24h", p.Budget.D())
	}
	if err := ps.portsOf(doc, p); err != nil {
		return err
	}
	if p.Fixture != "" {
		if err := CheckName(p.Fixture); err != nil {
			return ps.bad(doc, "fixture %q: %v", p.Fixture, err)
		}
	}
	if p.Operator != "" {
		if err := CheckName(p.Operator); err != nil {
			return ps.bad(doc, "operator %q: %v", p.Operator, err)
		}
	}
	if st.ReportURL != "" {
		if u, err := url.Parse(st.ReportURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ps.bad(doc, "station.report_url %q: want an http:// or https:// URL", st.ReportURL)
		}
	}
	return nil
}

// portsOf makes the plan's ports: its ports: (each an interface name, or a mapping of
// interface and the station fields it gives of its own over the plan's), else its one
// interface: (eth0 by default).
func (ps *parser) portsOf(doc *yaml.Node, p *Plan) error {
	if ps.ports == nil {
		if p.Interface == "" {
			p.Interface = "eth0"
		}
		if err := checkIface(p.Interface); err != nil {
			return ps.bad(doc, "interface %q: %v", p.Interface, err)
		}
		p.Ports = []Port{{Interface: p.Interface, Station: p.Station}}
		return nil
	}
	if p.Interface != "" {
		return ps.bad(ps.ports, "give interface: (one port) or ports:, not both")
	}
	if ps.ports.Kind != yaml.SequenceNode || len(ps.ports.Content) == 0 || len(ps.ports.Content) > MaxPorts {
		return ps.bad(ps.ports, "ports: want a list of 1..%d ports (an interface name, or interface: and station:)", MaxPorts)
	}
	seen := map[string]bool{}
	for _, n := range ps.ports.Content {
		port := Port{Station: p.Station}
		switch n.Kind {
		case yaml.ScalarNode:
			port.Interface = n.Value
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				switch k.Value {
				case "interface":
					port.Interface = v.Value
				case "station":
					// The port's own station fields over the plan's.
					if err := decodeStrict(v, &port.Station); err != nil {
						return ps.bad(v, "ports: station: %s", yamlMsg(err))
					}
				default:
					return ps.bad(k, "ports: unknown key %q (have interface, station)", k.Value)
				}
			}
		default:
			return ps.bad(n, "ports: want an interface name, or interface: and station:")
		}
		if err := checkIface(port.Interface); err != nil {
			return ps.bad(n, "ports: interface %q: %v", port.Interface, err)
		}
		if seen[port.Interface] {
			return ps.bad(n, "ports: %s is given twice", port.Interface)
		}
		seen[port.Interface] = true
		st := &port.Station
		if st.Port < 1 || st.Port > 65535 {
			return ps.bad(n, "ports: %s: station.port %d: want 1..65535", port.Interface, st.Port)
		}
		st.MAC = nil
		if m := st.ReflectorMAC; m != "" && m != "auto" {
			hw, err := net.ParseMAC(m)
			if err != nil || len(hw) != 6 {
				return ps.bad(n, "ports: %s: station.reflector_mac %q: want an Ethernet address or auto", port.Interface, m)
			}
			st.MAC = hw
		}
		p.Ports = append(p.Ports, port)
	}
	p.Interface = p.Ports[0].Interface
	return nil
}

// checkIface checks an interface name: what the kernel takes (IFNAMSIZ) and what a step
// id, a figure name and a verdict line field take.
func checkIface(s string) error {
	if s == "" || len(s) > 15 || s == "." || s == ".." || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		return errors.New("want an interface name: 1 to 15 letters, digits, '.', '_' or '-'")
	}
	return nil
}

// step reads one step: id, type and timeout here, the rest into its kind's Params, key
// by key so that an error names its key and line; then the kind checks the whole.
func (ps *parser) step(sn *yaml.Node, p *Plan) (Step, error) {
	var s Step
	if sn.Kind != yaml.MappingNode {
		return s, ps.bad(sn, "a step must be a mapping with id and type")
	}
	s.Line = sn.Line
	var rest []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(sn.Content); i += 2 {
		k, v := sn.Content[i], sn.Content[i+1]
		if seen[k.Value] {
			return s, ps.bad(k, "%q is given twice in a step", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "id", "type":
			if v.Kind != yaml.ScalarNode {
				return s, ps.bad(v, "%s: want a text value", k.Value)
			}
			*map[string]*string{"id": &s.ID, "type": &s.Type}[k.Value] = v.Value
		case "timeout":
			if err := v.Decode(&s.Timeout); err != nil {
				return s, ps.bad(v, "timeout: %v", err)
			}
		case "concurrent":
			var c bool
			if err := v.Decode(&c); err != nil {
				return s, ps.bad(v, "concurrent: %q: want true (every port at once, the default) or false (one port after the other)", v.Value)
			}
			s.Sequential = !c
		case "retry":
			if err := v.Decode(&s.Retry); err != nil || s.Retry < 0 || s.Retry > 10 {
				return s, ps.bad(v, "retry: %q: want how many times a failed step runs again, 0..10", v.Value)
			}
		case "limits":
			if v.Kind != yaml.SequenceNode {
				return s, ps.bad(v, "limits: want a list of {measurement, unit, low, high, marginal_low, marginal_high}")
			}
			for _, ln := range v.Content {
				var l Limit
				if err := decodeStrict(ln, &l); err != nil {
					return s, ps.bad(ln, "limits: %s", yamlMsg(err))
				}
				s.Limits = append(s.Limits, l)
			}
		default:
			rest = append(rest, k, v)
		}
	}
	if err := checkID(s.ID); err != nil {
		return s, ps.bad(sn, "step %q: %v", s.ID, err)
	}
	if s.Params = ps.kinds.New(s.Type); s.Params == nil {
		return s, ps.bad(sn, "step %q: unknown type %q (have %s)", s.ID, s.Type, strings.Join(ps.kinds.Names, ", "))
	}
	for i := 0; i+1 < len(rest); i += 2 {
		k, v := rest[i], rest[i+1]
		one := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}
		if err := decodeStrict(one, s.Params); err != nil {
			return s, ps.bad(v, "%s", keyed(s.ID, k.Value, err))
		}
	}
	if err := s.Params.Check(p); err != nil {
		return s, ps.bad(sn, "step %q: %v", s.ID, err)
	}
	if err := s.checkLimits(); err != nil {
		return s, ps.bad(sn, "step %q: %v", s.ID, err)
	}
	if s.Timeout == 0 {
		s.Timeout = Duration(s.Params.Timeout())
	}
	if s.Timeout.D() > 24*time.Hour {
		return s, ps.bad(sn, "step %q: timeout %v: want at most 24h0m0s", s.ID, s.Timeout.D())
	}
	return s, nil
}

// keyed is a field's decoding error in the plan's words: the step and YAML's complaint,
// or the field's name and its own (a duration's).
func keyed(id, key string, err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		if msg := yamlMsg(err); !strings.Contains(msg, " is not a key") {
			return fmt.Sprintf("step %q: %s: %s", id, key, msg)
		}
		return fmt.Sprintf("step %q: %s", id, yamlMsg(err))
	}
	return key + ": " + err.Error()
}

// CheckName checks a name that goes into ids, URLs, labels and log lines (a fixture, a
// serial): 1..64 of letters, digits, '.', '_' and '-'.
func CheckName(s string) error {
	if s == "" || len(s) > 64 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		return errors.New("want 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return nil
}

// checkID: ids name files, URL segments and log fields at the station.
func checkID(id string) error {
	if id == "" {
		return errors.New("no id")
	}
	if strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" || len(id) > 128 || id == "." || id == ".." {
		return fmt.Errorf("id %q: use letters, digits, '.', '_' and '-' (the station takes no other)", id)
	}
	return nil
}

// decodeStrict decodes n into v, refusing keys v has no field for.
func decodeStrict(n *yaml.Node, v any) error {
	var b bytes.Buffer
	if err := yaml.NewEncoder(&b).Encode(n); err != nil {
		return err
	}
	d := yaml.NewDecoder(&b)
	d.KnownFields(true)
	return d.Decode(v)
}

func yamlMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	s = strings.TrimSpace(s)
	// "line 3: field x not found in type validate.Step": say it in the plan's words.
	if i := strings.Index(s, " not found in type"); i >= 0 {
		s = s[:i] + " is not a key of this part of the plan"
	}
	if strings.HasPrefix(s, "line ") {
		if _, rest, ok := strings.Cut(s, ": "); ok {
			s = rest // the line is the plan's, given in front
		}
	}
	if m := unmarshalRe.FindStringSubmatch(s); m != nil {
		what := "a number"
		switch {
		case m[3] == "bool":
			what = "true or false"
		case strings.HasPrefix(m[3], "[]"):
			what = "a list ([a, b])"
		case strings.HasPrefix(m[3], "map"):
			what = "a mapping"
		case m[3] == "string":
			what = "a text"
		}
		if m[1] == "str" {
			return fmt.Sprintf("want %s, not the text %s", what, m[2])
		}
		return fmt.Sprintf("want %s, not %s", what, m[2])
	}
	return s
}

// unmarshalRe is YAML's type error: "cannot unmarshal !!str `fast` into int".
var unmarshalRe = regexp.MustCompile("cannot unmarshal !!(\\w+) (`.*`|[^ ]*) into (\\S+)")

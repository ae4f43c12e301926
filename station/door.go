package station

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/zynqnet/linerate/plan"
)

// What a report may hold: far above any plan's (a board's plan has under 20 steps and
// figures), far below what would slow the page or blow up the metrics.
const (
	MaxSteps    = 256
	MaxFigures  = 256
	MaxMeasured = 64 // per step
	MaxIDLen    = 128
	MaxText     = 256 // board, serial, MAC, interface, a step's id
)

// RejectError is a report the station refuses, with the HTTP status that says why:
// 400 not a report at all, 413 too large, 422 a report that breaks the rules.
type RejectError struct {
	Status int
	Msg    string
}

func (e *RejectError) Error() string { return e.Msg }

func reject(status int, format string, a ...any) error {
	return &RejectError{Status: status, Msg: fmt.Sprintf(format, a...)}
}

// SafeID says whether an id is made of the characters a URL path segment, a file name
// and a log line take as they are: letters, digits, '.', '_' and '-', not "." or "..".
func SafeID(id string) bool {
	if id == "" || len(id) > MaxIDLen || id == "." || id == ".." {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// plain is text without control characters (a newline would forge a log line).
func plain(s string) bool {
	return !strings.ContainsFunc(s, plan.IsControl)
}

// MaxDetail bounds a step's detail (a sweep's curve, the PHY's events) and MaxDepth the
// nesting of a report's JSON.
const (
	MaxDetail = 1 << 20
	MaxDepth  = 32
)

// strictJSON holds a body to what encoding/json lets pass silently: invalid UTF-8 (it
// becomes U+FFFD), a key given twice in one object (the last one wins, so a reader of
// the stored body and the station can see two different reports), and nesting deeper
// than MaxDepth.
func strictJSON(body []byte) error {
	if !utf8.Valid(body) {
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("invalid UTF-8 at byte %d", i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	type level struct {
		keys  map[string]bool // nil: an array
		inKey bool            // an object's next token is a key
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return err // EOF included: an empty body is no report
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].keys != nil {
			if stack[top].inKey {
				if k, ok := tok.(string); ok {
					if stack[top].keys[k] {
						return fmt.Errorf("key %q given twice in one object (before byte %d)", k, dec.InputOffset())
					}
					stack[top].keys[k] = true
					stack[top].inKey = false
					continue
				}
			} else {
				stack[top].inKey = true
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= MaxDepth {
				return fmt.Errorf("nested deeper than %d levels", MaxDepth)
			}
			l := level{}
			if tok == json.Delim('{') {
				l = level{keys: map[string]bool{}, inKey: true}
			}
			stack = append(stack, l)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack) - 1; n >= 0 && stack[n].keys != nil {
				stack[n].inKey = true
			}
		}
		if len(stack) == 0 {
			return nil // the first document (what follows it is the decoder's to refuse)
		}
	}
}

// checkStepText holds a step's texts (and its earlier attempts') to the report's rules:
// a type and port of at most MaxText, a summary and reason of at most plan.MaxLongText,
// none with a control character; a detail of at most MaxDetail whose strings hold none
// but newline and tab (keys none at all).
func checkStepText(s *plan.StepResult) error {
	for name, v := range map[string]string{"type": s.Type, "port": s.Port} {
		if len(v) > MaxText || !plain(v) {
			return fmt.Errorf("step %s: %s: want at most %d characters without control characters", s.ID, name, MaxText)
		}
	}
	for name, v := range map[string]string{"summary": s.Summary, "reason": s.Reason} {
		if len(v) > plan.MaxLongText || !plain(v) {
			return fmt.Errorf("step %s: %s: want at most %d characters without control characters", s.ID, name, plan.MaxLongText)
		}
	}
	for k := range s.Measured {
		if len(k) > MaxText || !plain(k) {
			return fmt.Errorf("step %s: measurement name %.40q: want at most %d characters without control characters", s.ID, k, MaxText)
		}
	}
	if len(s.Detail) > MaxDetail {
		return fmt.Errorf("step %s: detail of %d bytes, at most %d", s.ID, len(s.Detail), MaxDetail)
	}
	if len(s.Detail) > 0 {
		var d any
		if err := json.Unmarshal(s.Detail, &d); err != nil {
			return fmt.Errorf("step %s: detail: %v", s.ID, err)
		}
		if err := checkDetail(d); err != nil {
			return fmt.Errorf("step %s: detail: %v", s.ID, err)
		}
	}
	for i := range s.Attempts {
		if err := checkStepText(&s.Attempts[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkDetail(v any) error {
	switch v := v.(type) {
	case string:
		if len(v) > plan.MaxLongText || strings.ContainsFunc(v, func(r rune) bool { return r != '\n' && r != '\t' && plan.IsControl(r) }) {
			return fmt.Errorf("a text %.40q: want at most %d characters without control characters", v, plan.MaxLongText)
		}
	case map[string]any:
		for k, x := range v {
			if len(k) > MaxText || !plain(k) {
				return fmt.Errorf("a key %.40q: want at most %d characters without control characters", k, MaxText)
			}
			if err := checkDetail(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkDetail(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeReport reads and checks a report body: one strict JSON document and nothing
// after it, a known schema, the fields the station needs, bounded sizes, safe ids and
// text, finite figures, and a verdict and failed list that are what its steps say.
func DecodeReport(body []byte) (*plan.Report, error) {
	if err := strictJSON(body); err != nil {
		return nil, reject(400, "not a report: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var r plan.Report
	if err := dec.Decode(&r); err != nil {
		return nil, reject(400, "not a report: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, reject(400, "not a report: data after the JSON document (at byte %d)", dec.InputOffset())
	}
	if err := r.Check(); err != nil {
		return nil, reject(422, "bad report: %v", err)
	}
	// The station adds these when it serves the report: a board does not give them.
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		for _, k := range stationKeys {
			if _, ok := top[k]; ok {
				return nil, reject(422, "bad report %s: %q is the station's to say", r.ID, k)
			}
		}
	}
	if err := checkReport(&r); err != nil {
		return nil, reject(422, "bad report %s: %v", r.ID, err)
	}
	return &r, nil
}

// stationKeys are the fields the station appends to a report it serves.
var stationKeys = []string{"attempt", "duplicate_mac", "station_port", "station_ports", "received", "station_version", "flags", "outliers"}

// MaxAttempts bounds a step's earlier attempts (a plan retries a step at most 10 times).
const MaxAttempts = 10

// checkReport is the door's own rules (ids, texts, sizes and numbers within their
// bounds), then plan's one verdict rule: a report whose stated verdict, failed list or
// ports' verdicts are not what its steps give is refused.
func checkReport(r *plan.Report) error {
	if err := checkHeader(r); err != nil {
		return err
	}
	if err := checkPorts(r.Ports); err != nil {
		return err
	}
	if len(r.Steps) > MaxSteps {
		return fmt.Errorf("%d steps: at most %d", len(r.Steps), MaxSteps)
	}
	if len(r.Figures) > MaxFigures {
		return fmt.Errorf("%d figures: at most %d", len(r.Figures), MaxFigures)
	}
	for k := range r.Figures {
		if len(k) > MaxText || !plain(k) {
			return fmt.Errorf("figure name %.40q: want at most %d characters without control characters", k, MaxText)
		}
	}
	if err := checkSteps(r.Steps); err != nil {
		return err
	}
	// Every number within its unit's range (plan.CheckNumbers): a step's seconds of
	// 1e39 became +Inf in the index and its duration buckets panicked.
	if err := r.CheckNumbers(); err != nil {
		return err
	}
	return r.CheckVerdict()
}

// checkHeader holds the report's id, fixture and one-line texts to the door's rules.
func checkHeader(r *plan.Report) error {
	if !SafeID(r.ID) {
		return fmt.Errorf("id: want 1..%d of A-Z a-z 0-9 . _ - (not . or ..)", MaxIDLen)
	}
	if r.Fixture != "" {
		if err := plan.CheckName(r.Fixture); err != nil {
			return fmt.Errorf("fixture %.40q: %v", r.Fixture, err)
		}
	}
	for name, v := range map[string]string{"board": r.Board, "serial": r.Serial, "mac": r.MAC, "interface": r.Interface, "model": r.Model, "linerate_version": r.Linerate} {
		if len(v) > MaxText || !plain(v) {
			return fmt.Errorf("%s: want at most %d characters without control characters", name, MaxText)
		}
	}
	for name, v := range r.Texts() {
		if len(v) > MaxText || !plain(v) {
			return fmt.Errorf("%s: want at most %d characters without control characters", name, MaxText)
		}
	}
	// Every MAC is one (the duplicate check compares them as plan.NormalizeMAC writes
	// them), and none is missing.
	for _, m := range append([]string{r.MAC}, portMACs(r)...) {
		if _, err := plan.NormalizeMAC(m); err != nil {
			return fmt.Errorf("mac: %v: every report names its ports' MACs", err)
		}
	}
	if r.Build != nil && r.Build.ID == "" {
		return fmt.Errorf("build: want its id")
	}
	if r.Operator != "" {
		if err := plan.CheckName(r.Operator); err != nil {
			return fmt.Errorf("operator %.40q: %v", r.Operator, err)
		}
	}
	// The plan's text is what its hash says: a report cannot name one plan and carry
	// another.
	if p := r.Plan; p != nil && p.Text != "" {
		sum := sha256.Sum256([]byte(p.Text))
		if h := hex.EncodeToString(sum[:]); h != r.PlanSHA256 || p.SHA256 != "" && p.SHA256 != h {
			return fmt.Errorf("plan_sha256 %.16s: the plan's text hashes to %.16s", r.PlanSHA256, h)
		}
	}
	return nil
}

// checkPorts holds a multi-port report's ports to the door's rules: an interface name
// and a MAC each, at most plan.MaxPorts, a doctor block within MaxDetail.
func checkPorts(ports []plan.PortReport) error {
	if len(ports) > plan.MaxPorts {
		return fmt.Errorf("%d ports: at most %d", len(ports), plan.MaxPorts)
	}
	for _, p := range ports {
		if len(p.Interface) > MaxText || !plain(p.Interface) || p.Interface == "" || len(p.MAC) > MaxText || !plain(p.MAC) || len(p.MACSource) > MaxText || !plain(p.MACSource) {
			return fmt.Errorf("port %.40q: want an interface name and a MAC without control characters", p.Interface)
		}
		if len(p.Failed) > MaxSteps || len(p.Figures) > MaxFigures {
			return fmt.Errorf("port %s: at most %d failed steps and %d figures", p.Interface, MaxSteps, MaxFigures)
		}
		if len(p.Doctor) > MaxDetail {
			return fmt.Errorf("port %s: doctor of %d bytes, at most %d", p.Interface, len(p.Doctor), MaxDetail)
		}
		for k, v := range p.Figures {
			if len(k) > MaxText || !plain(k) {
				return fmt.Errorf("port %s: figure name %.40q: want at most %d characters without control characters", p.Interface, k, MaxText)
			}
			if err := plan.CheckMeasure(k, v); err != nil {
				return fmt.Errorf("port %s: figure %w", p.Interface, err)
			}
		}
	}
	return nil
}

// checkSteps holds the steps to the door's rules: safe and distinct ids, their texts,
// at most MaxAttempts earlier attempts (each a failed run with none of its own) and
// MaxMeasured measurements.
func checkSteps(steps []plan.StepResult) error {
	seen := map[string]bool{}
	for _, s := range steps {
		if !SafeID(s.ID) {
			return fmt.Errorf("step id %.40q: want 1..%d of A-Z a-z 0-9 . _ -", s.ID, MaxIDLen)
		}
		if seen[s.ID] {
			return fmt.Errorf("step %s given twice", s.ID)
		}
		seen[s.ID] = true
		if err := checkStepText(&s); err != nil {
			return err
		}
		if len(s.Attempts) > MaxAttempts {
			return fmt.Errorf("step %s: %d earlier attempts, at most %d", s.ID, len(s.Attempts), MaxAttempts)
		}
		for _, a := range s.Attempts {
			if a.Pass || len(a.Attempts) > 0 || len(a.Measured) > MaxMeasured {
				return fmt.Errorf("step %s: an earlier attempt is a failed run of the step, with no attempts of its own", s.ID)
			}
		}
		if len(s.Measured) > MaxMeasured || len(s.Limits) > MaxMeasured {
			return fmt.Errorf("step %s: %d measurements and %d limits, at most %d each", s.ID, len(s.Measured), len(s.Limits), MaxMeasured)
		}
		for _, l := range s.Limits {
			if len(l.Measurement) > MaxText || !plain(l.Measurement) || len(l.Unit) > MaxText || !plain(l.Unit) {
				return fmt.Errorf("step %s: a limit's measurement and unit: want at most %d characters without control characters", s.ID, MaxText)
			}
		}
	}
	return nil
}

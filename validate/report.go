package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SchemaVersion of the JSON report; the station refuses newer ones.
const SchemaVersion = 1

// StepResult is one step's outcome.
type StepResult struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Pass     bool               `json:"pass"`
	Summary  string             `json:"summary"` // measured against threshold, one line
	Reason   string             `json:"reason,omitempty"`
	Measured map[string]float64 `json:"measured,omitempty"`
	Seconds  float64            `json:"seconds"`
	Detail   json.RawMessage    `json:"detail,omitempty"`
}

// Report is what a run produces.
type Report struct {
	Schema    int                `json:"schema_version"`
	ID        string             `json:"id"`
	Verdict   string             `json:"verdict"` // PASS or FAIL
	Board     string             `json:"board"`
	Model     string             `json:"model,omitempty"`
	Serial    string             `json:"serial"`
	MAC       string             `json:"mac"`
	Interface string             `json:"interface"`
	Linerate  string             `json:"linerate_version"`
	Started   time.Time          `json:"started"`
	Seconds   float64            `json:"seconds"`
	Failed    []string           `json:"failed"`
	Figures   map[string]float64 `json:"figures"`
	Plan      *Plan              `json:"plan"`
	Steps     []StepResult       `json:"steps"`
	Doctor    json.RawMessage    `json:"doctor,omitempty"`
	Show      json.RawMessage    `json:"show,omitempty"`
}

// Check is what the station verifies of a report before storing it.
func (r *Report) Check() error {
	switch {
	case r.Schema < 1 || r.Schema > SchemaVersion:
		return fmt.Errorf("schema_version %d: this station reads 1..%d", r.Schema, SchemaVersion)
	case r.ID == "" || len(r.ID) > 200 || strings.ContainsAny(r.ID, "/\\\x00"):
		return fmt.Errorf("id %q: want a non-empty name without slashes", r.ID)
	case r.Verdict != "PASS" && r.Verdict != "FAIL":
		return fmt.Errorf("verdict %q: want PASS or FAIL", r.Verdict)
	case r.Board == "":
		return fmt.Errorf("no board")
	case len(r.Steps) == 0:
		return fmt.Errorf("no steps")
	case r.Started.IsZero():
		return fmt.Errorf("no start time")
	}
	for _, s := range r.Steps {
		if s.ID == "" {
			return fmt.Errorf("a step without an id")
		}
	}
	return nil
}

// VerdictLine is the one line the serial console and the line read.
func (r *Report) VerdictLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "LINERATE %s board=%s serial=%s mac=%s", r.Verdict, r.Board, orDash(r.Serial), orDash(r.MAC))
	keys := make([]string, 0, len(r.Figures))
	for k := range r.Figures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, trimFloat(r.Figures[k]))
	}
	failed := "-"
	if len(r.Failed) > 0 {
		failed = strings.Join(r.Failed, ",")
	}
	fmt.Fprintf(&b, " failed=%s elapsed=%.1fs", failed, r.Seconds)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, " ", "_")
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// JUnit renders the report as JUnit XML: one testsuite, one testcase per step (the
// schema Jenkins and GitLab read), the board's serial in the suite's and every case's
// name, so the reports of several boards in one CI job do not collide. Written out here rather than with encoding/xml,
// whose reflection costs a board's binary about 40 KB for these few elements; the
// tests hold the bytes to encoding/xml's MarshalIndent of the same document.
func (r *Report) JUnit() ([]byte, error) {
	failures := 0
	for _, st := range r.Steps {
		if !st.Pass {
			failures++
		}
	}
	var b strings.Builder
	w := b.WriteString
	w("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=" + xmlAttr("linerate validate "+r.Board+" "+r.Serial) +
		" tests=\"" + strconv.Itoa(len(r.Steps)) + "\" failures=\"" + strconv.Itoa(failures) + "\" time=" + xmlAttr(strconv.FormatFloat(r.Seconds, 'f', 3, 64)) +
		" timestamp=" + xmlAttr(r.Started.UTC().Format("2006-01-02T15:04:05")) + " hostname=" + xmlAttr(r.Serial) + ">\n    <properties>\n")
	for _, p := range [][2]string{{"board", r.Board}, {"serial", r.Serial}, {"mac", r.MAC}, {"interface", r.Interface}, {"verdict", r.Verdict}, {"linerate", r.Linerate}} {
		w("      <property name=" + xmlAttr(p[0]) + " value=" + xmlAttr(p[1]) + "></property>\n")
	}
	w("    </properties>\n")
	for _, st := range r.Steps {
		w("    <testcase name=" + xmlAttr(st.ID+" ["+r.Serial+"]") + " classname=" + xmlAttr("linerate."+r.Board+"."+st.Type) + " time=" + xmlAttr(strconv.FormatFloat(st.Seconds, 'f', 3, 64)) + ">")
		if !st.Pass {
			msg := st.Summary
			if st.Reason != "" {
				msg = st.Reason
			}
			w("\n      <failure message=" + xmlAttr(msg) + " type=" + xmlAttr(st.Type) + ">" + xmlText(st.Summary) + "</failure>")
		}
		if st.Summary != "" {
			w("\n      <system-out>" + xmlText(st.Summary) + "</system-out>")
		}
		if !st.Pass || st.Summary != "" {
			w("\n    ")
		}
		w("</testcase>\n")
	}
	w("  </testsuite>\n</testsuites>\n")
	return []byte(b.String()), nil
}

// xmlText escapes s as encoding/xml's EscapeText does: the markup characters, quotes,
// tab, newline and carriage return as character references, and anything XML cannot
// carry as U+FFFD.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) || r == utf8.RuneError {
				r = '\uFFFD'
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlAttr is s as a quoted attribute value.
func xmlAttr(s string) string { return "\"" + xmlText(s) + "\"" }

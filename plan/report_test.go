package plan

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func sampleReport() *Report {
	return &Report{Schema: SchemaVersion, ID: "SN123-20261130T010203Z", Verdict: "FAIL", Board: "zc702", Serial: "SN123", MAC: "00:0a:35:00:01:22",
		Interface: "eth0", Started: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC), Seconds: 41.25, Failed: []string{"tcp-up"},
		Figures: map[string]float64{"tcp-up_mbps": 912.345, "frames_loss_pct": 0},
		Steps:   []StepResult{{ID: "link", Type: "link", Pass: true, Summary: "1000 Mbit/s full"}, {ID: "tcp-up", Type: "iperf3", Summary: "TCP up 912.3 Mbit/s (want >= 930)", Reason: "912.3 Mbit/s is below 930"}}}
}

func TestVerdictAndJUnit(t *testing.T) {
	r := sampleReport()
	if got, want := r.VerdictLine(), "LINERATE FAIL board=zc702 serial=SN123 mac=00:0a:35:00:01:22 frames_loss_pct=0 tcp-up_mbps=912.35 failed=tcp-up elapsed=41.2s windows=0.0s overhead=41.2s"; got != want {
		t.Errorf("verdict:\n got  %s\n want %s", got, want)
	}
	// A flap the run's link watch held against a step: the step and its time, and the
	// run's time split into windows and overhead.
	r2 := sampleReport()
	r2.WindowS, r2.Steps[1].Flap = 30.5, "01:02:10.125 eth0 carrier down"
	if got, want := r2.VerdictLine(), "LINERATE FAIL board=zc702 serial=SN123 mac=00:0a:35:00:01:22 frames_loss_pct=0 tcp-up_mbps=912.35 flaps=tcp-up@01:02:10.125 failed=tcp-up elapsed=41.2s windows=30.5s overhead=10.8s"; got != want {
		t.Errorf("verdict with a flap:\n got  %s\n want %s", got, want)
	}
	b, err := r.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuites
	if err := xml.Unmarshal(b, &js); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	s := js.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || s.Cases[1].Failure == nil || s.Cases[1].Failure.Message != "912.3 Mbit/s is below 930" || s.Cases[0].Failure != nil {
		t.Errorf("junit:\n%s", b)
	}
	if err := r.Check(); err != nil {
		t.Error(err)
	}
	for _, edit := range []func(*Report){
		func(r *Report) { r.Schema = 2 },
		func(r *Report) { r.ID = "../etc/passwd" },
		func(r *Report) { r.Verdict = "MAYBE" },
		func(r *Report) { r.Steps = nil },
		func(r *Report) { r.Board = "" },
	} {
		r := sampleReport()
		edit(r)
		if r.Check() == nil {
			t.Errorf("%+v passed Check", r)
		}
	}
}

// TestJUnitEscapes: markup, quotes, control characters and invalid UTF-8 in the texts a
// board reports come out as XML a CI server parses, with the text kept.
func TestJUnitEscapes(t *testing.T) {
	r := sampleReport()
	r.Steps[0].Summary = "a <b> & \"c\" 'd'\ttab\nline\rcr \x01 \xff end"
	r.Steps[1].Reason = "</failure><script>x</script>"
	r.Serial = "S\"N"
	b, err := r.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuites
	if err := xml.Unmarshal(b, &js); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	c := js.Suites[0].Cases
	if c[1].Failure.Message != r.Steps[1].Reason || !strings.HasPrefix(c[0].SystemOut, "a <b> & \"c\" 'd'") || js.Suites[0].Hostname != r.Serial {
		t.Errorf("texts not kept:\n%s", b)
	}
}

// FuzzJUnit: whatever a report's texts hold, its JUnit is well-formed XML with one case
// per step.
func FuzzJUnit(f *testing.F) {
	f.Add("a <b> & \"c\"\n\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		r := sampleReport()
		r.Steps[1].Summary, r.Steps[1].Reason, r.Board = s, s, s
		b, err := r.JUnit()
		if err != nil {
			t.Fatal(err)
		}
		var js junitSuites
		if err := xml.Unmarshal(b, &js); err != nil || len(js.Suites) != 1 || len(js.Suites[0].Cases) != 2 {
			t.Fatalf("%q: %v\n%s", s, err, b)
		}
	})
}

// TestStepJSON: a step is one flat object (id, type, timeout, its kind's fields), and a
// report read back keeps it, readable with Decode.
func TestStepJSON(t *testing.T) {
	type link struct {
		SpeedMbps int `json:"speed_mbps,omitempty"`
	}
	s := Step{ID: "link", Type: "link", Timeout: Duration(15 * time.Second), Params: &fakeParams{SpeedMbps: 1000}}
	b, err := json.Marshal(s)
	if err != nil || string(b) != `{"id":"link","type":"link","timeout":"15s","speed_mbps":1000}` {
		t.Fatalf("%s %v", b, err)
	}
	var back Step
	if err := json.Unmarshal(b, &back); err != nil || back.ID != "link" || back.Timeout.D() != 15*time.Second {
		t.Fatalf("%+v %v", back, err)
	}
	var l link
	if err := back.Decode(&l); err != nil || l.SpeedMbps != 1000 {
		t.Fatalf("decode %+v %v", l, err)
	}
	if again, _ := json.Marshal(back); string(again) != string(b) {
		t.Errorf("read back and written again: %s", again)
	}
	empty, _ := json.Marshal(Step{ID: "c", Type: "counters", Params: &fakeParams{}})
	if string(empty) != `{"id":"c","type":"counters"}` {
		t.Errorf("a step without fields: %s", empty)
	}
}

// TestTidy: what a board puts in a step's text is one line the station takes: control
// characters blanked, invalid UTF-8 replaced, cut at MaxLongText on a character.
func TestTidy(t *testing.T) {
	r := &Report{Steps: []StepResult{{ID: "a", Type: "tcp\r", Summary: "iperf3: error\nline 2\x1b[2J", Reason: "bad \xff byte\u2028",
		Attempts: []StepResult{{ID: "a", Summary: "\x07bell"}}}, {ID: "b", Summary: strings.Repeat("é", MaxLongText)}}}
	r.Tidy()
	s := r.Steps[0]
	if s.Type != "tcp " || s.Summary != "iperf3: error line 2 [2J" || s.Reason != "bad \uFFFD byte " || s.Attempts[0].Summary != " bell" {
		t.Errorf("tidied: %q %q %q %q", s.Type, s.Summary, s.Reason, s.Attempts[0].Summary)
	}
	if b := r.Steps[1].Summary; len(b) > MaxLongText || !utf8.ValidString(b) || len(b) < MaxLongText-1 {
		t.Errorf("cut: %d bytes, valid %v", len(b), utf8.ValidString(b))
	}
}

package validate

import (
	"encoding/xml"
	"fmt"
	"testing"
)

// The JUnit document as encoding/xml writes it, to hold the hand-written one to.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Hostname  string      `xml:"hostname,attr"`
	Props     []junitProp `xml:"properties>property"`
	Cases     []junitCase `xml:"testcase"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func junitByEncodingXML(r *Report) []byte {
	s := junitSuite{Name: "linerate validate " + r.Board + " " + r.Serial, Tests: len(r.Steps), Time: fmt.Sprintf("%.3f", r.Seconds),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"), Hostname: r.Serial,
		Props: []junitProp{{"board", r.Board}, {"serial", r.Serial}, {"mac", r.MAC}, {"interface", r.Interface}, {"verdict", r.Verdict}, {"linerate", r.Linerate}}}
	for _, st := range r.Steps {
		c := junitCase{Name: st.ID + " [" + r.Serial + "]", Classname: "linerate." + r.Board + "." + st.Type, Time: fmt.Sprintf("%.3f", st.Seconds), SystemOut: st.Summary}
		if !st.Pass {
			s.Failures++
			msg := st.Summary
			if st.Reason != "" {
				msg = st.Reason
			}
			c.Failure = &junitFailure{Message: msg, Type: st.Type, Text: st.Summary}
		}
		s.Cases = append(s.Cases, c)
	}
	b, _ := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	return append([]byte(xml.Header), append(b, '\n')...)
}

// TestJUnitAsEncodingXML: the hand-written JUnit is encoding/xml's, byte for byte,
// markup, quotes, control characters and invalid UTF-8 in the texts included.
func TestJUnitAsEncodingXML(t *testing.T) {
	for _, edit := range []func(*Report){
		func(*Report) {},
		func(r *Report) {
			r.Steps[0].Summary = "a <b> & \"c\" 'd'\ttab\nline\rcr \x01 \xff end"
			r.Steps[1].Reason = "<&>"
			r.Serial = "S\"N"
		},
		func(r *Report) { r.Steps[0].Summary = ""; r.Steps[1].Summary = "" },
	} {
		r := sampleReport()
		edit(r)
		got, _ := r.JUnit()
		if want := junitByEncodingXML(r); string(got) != string(want) {
			t.Errorf("JUnit differs from encoding/xml's:\n%s\nwant:\n%s", got, want)
		}
	}
}

func FuzzJUnitText(f *testing.F) {
	f.Add("a <b> & \"c\"\n\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		r := sampleReport()
		r.Steps[1].Summary, r.Steps[1].Reason, r.Board = s, s, s
		got, _ := r.JUnit()
		if want := junitByEncodingXML(r); string(got) != string(want) {
			t.Fatalf("%q: JUnit differs from encoding/xml's:\n%s\nwant:\n%s", s, got, want)
		}
	})
}

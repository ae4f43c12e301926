package station

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// What the station learns of a board from the reports before it, in the store's
// transaction, so that stations sharing a database decide alike: the attempt (a serial
// tested again is a retest; the same serial on a board with another MAC is a reused
// serial, not a retest), the other serials that reported any of its ports' MACs (two
// boards with one MAC collide on a customer's network: an EEPROM never programmed, a
// label printed twice), and the retest rules (a serial failed too often goes to repair;
// a retest after a failure must come from another fixture).

// MACUse is another board that reported a MAC: its serial, and its first report with it.
type MACUse struct {
	Board     string    `json:"board"`
	Serial    string    `json:"serial"`
	FirstSeen time.Time `json:"first_seen"`
	Report    string    `json:"report"`
	// MAC is which of the report's MACs it reported (every port's is checked).
	MAC string `json:"mac,omitempty"`
}

// Stored is what the store found of the board's history when it stored a report.
type Stored struct {
	// Attempt is 1 for a board's first report (per board type, serial and MAC), 2 for
	// its first retest, and so on.
	Attempt int `json:"attempt"`
	// DuplicateMAC are the other serials that reported one of this report's MACs before
	// it, the first MaxMACUses of them (an unprogrammed EEPROM's placeholder MAC comes on
	// thousands of boards).
	DuplicateMAC []MACUse `json:"duplicate_mac,omitempty"`
	// Failures is how many of the board's reports before this one failed.
	Failures int `json:"failures,omitempty"`
	// Flags are the line's rules this report broke, as the history shows them.
	Flags []ReportFlag `json:"-"`
}

// MaxMACUses is how many other serials of a MAC a report names.
const MaxMACUses = 16

// MACPolicy is what the station does with a report whose MAC another serial reported.
type MACPolicy int

const (
	// MACFlag stores it and flags it: on the report, the page, the list and the metrics.
	MACFlag MACPolicy = iota
	// MACReject refuses it (HTTP 409 with the reason): the board's run fails.
	MACReject
)

// ParseMACPolicy reads --mac-policy.
func ParseMACPolicy(s string) (MACPolicy, error) {
	switch s {
	case "flag", "":
		return MACFlag, nil
	case "reject":
		return MACReject, nil
	}
	return 0, fmt.Errorf("%q: want flag or reject", s)
}

// Rules are the line's rules a store applies in its transaction.
type Rules struct {
	MAC MACPolicy
	// MaxAttempts: a board whose reports failed this many times is for repair (0: no
	// limit); RetestElsewhere: a retest after a failure must come from another fixture.
	// Retest is what a report that breaks either gets.
	MaxAttempts     int
	RetestElsewhere bool
	Retest          Policy
}

// Flag kinds of the board's history.
const (
	FlagReusedSerial = "reused-serial"
	FlagRepair       = "repair"
	FlagSameFixture  = "same-fixture-retest"
)

// DuplicateMACError is a report refused under MACReject.
type DuplicateMACError struct {
	MAC  string
	Uses []MACUse
}

func (e *DuplicateMACError) Error() string {
	var who []string
	for _, u := range e.Uses {
		who = append(who, fmt.Sprintf("%s %s (first seen %s, report %s)", u.Board, u.Serial, u.FirstSeen.UTC().Format(time.RFC3339), u.Report))
	}
	return fmt.Sprintf("duplicate MAC %s: already reported by %s", e.MAC, strings.Join(who, ", "))
}

// macHistory is a board's reports: one serial on one MAC (its first port's).
type macHistory struct {
	N           int    `json:"n"`
	Fails       int    `json:"fails"`
	LastFixture string `json:"last_fixture,omitempty"`
	LastPass    bool   `json:"last_pass"`
}

// serialHistory is what a serial reported, by its boards' MACs ("" for reports whose
// MAC was no MAC).
type serialHistory map[string]*macHistory

// macKey is the MAC as the store indexes it: plan.NormalizeMAC's form, "" for none (or
// for no MAC at all, which the door refuses).
func macKey(mac string) string {
	m, err := plan.NormalizeMAC(mac)
	if err != nil {
		return ""
	}
	return m
}

// reportMACs are a report's MACs as the store indexes them: its port's, then each of
// its ports', each once.
func reportMACs(r *plan.Report) []string {
	var out []string
	for _, m := range append([]string{r.MAC}, portMACs(r)...) {
		if k := macKey(m); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func portMACs(r *plan.Report) []string {
	var out []string
	for _, p := range r.Ports {
		out = append(out, p.MAC)
	}
	return out
}

// serialKey is a board's identity for its attempts: board type and serial.
func serialKey(board, serial string) string { return board + "\x00" + serial }

// decide is what a report is, given the board's history (h, its serial's; uses, the other
// serials of each of its MACs) and the line's rules at fixture: its attempt, its
// duplicates and failures, and the flags it earns; an error for a report the rules
// refuse.
func decide(r *plan.Report, fixture string, h serialHistory, uses []MACUse, rules Rules) (Stored, error) {
	mac := macKey(r.MAC)
	st := Stored{Attempt: 1, DuplicateMAC: uses}
	if len(uses) > MaxMACUses {
		st.DuplicateMAC = uses[:MaxMACUses]
	}
	if rules.MAC == MACReject && len(st.DuplicateMAC) > 0 {
		return st, &DuplicateMACError{MAC: st.DuplicateMAC[0].MAC, Uses: st.DuplicateMAC}
	}
	mh := h[mac]
	if mh == nil {
		var others []string
		for m := range h {
			if m != "" {
				others = append(others, m)
			}
		}
		slices.Sort(others)
		if len(others) > 0 {
			st.Flags = append(st.Flags, ReportFlag{FlagReusedSerial, fmt.Sprintf("serial %s was reported before with MAC %s: a second board with one serial, not a retest", r.Serial, strings.Join(others, ", "))})
		}
		return st, nil
	}
	st.Attempt, st.Failures = mh.N+1, mh.Fails
	var broken []ReportFlag
	if rules.MaxAttempts > 0 && mh.Fails >= rules.MaxAttempts {
		broken = append(broken, ReportFlag{FlagRepair, fmt.Sprintf("serial %s failed %d times (--max-attempts %d): for repair, not for another test", r.Serial, mh.Fails, rules.MaxAttempts)})
	}
	if rules.RetestElsewhere && !mh.LastPass && fixture != "" && mh.LastFixture == fixture {
		broken = append(broken, ReportFlag{FlagSameFixture, fmt.Sprintf("serial %s failed on fixture %s last time: a retest must come from another fixture (--retest-elsewhere)", r.Serial, fixture)})
	}
	for _, f := range broken {
		if rules.Retest == Reject {
			return st, &PolicyError{Kind: f.Kind, Text: f.Text}
		}
		st.Flags = append(st.Flags, f)
	}
	return st, nil
}

// count adds a stored report (its MAC, verdict and fixture) to its serial's history.
func (h serialHistory) count(mac, verdict, fixture string) {
	mac = macKey(mac)
	mh := h[mac]
	if mh == nil {
		mh = &macHistory{}
		h[mac] = mh
	}
	mh.N++
	if verdict != "PASS" {
		mh.Fails++
	}
	mh.LastFixture, mh.LastPass = fixture, verdict == "PASS"
}

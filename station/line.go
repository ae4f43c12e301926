package station

import (
	"fmt"
	"strings"
	"time"
)

// What the station learns of a board from the reports before it: the attempt (a
// serial tested again is a retest), and the other serials that reported its MAC (two
// boards with one MAC collide on a customer's network: an EEPROM never programmed, a
// label printed twice).

// MACUse is another board that reported a MAC: its serial, and its first report with it.
type MACUse struct {
	Board     string    `json:"board"`
	Serial    string    `json:"serial"`
	FirstSeen time.Time `json:"first_seen"`
	Report    string    `json:"report"`
}

// Stored is what the store found of the board's history when it stored a report.
type Stored struct {
	// Attempt is 1 for a serial's first report (per board type), 2 for its first
	// retest, and so on.
	Attempt int `json:"attempt"`
	// DuplicateMAC are the other serials that reported this report's MAC before it,
	// the first MaxMACUses of them (an unprogrammed EEPROM's placeholder MAC comes on
	// thousands of boards).
	DuplicateMAC []MACUse `json:"duplicate_mac,omitempty"`
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

// macKey is the MAC as the store indexes it ("" when it takes part in no duplicate
// check: none given).
func macKey(mac string) string { return strings.ToLower(strings.TrimSpace(mac)) }

// serialKey is a board's identity for its attempts: board type and serial.
func serialKey(board, serial string) string { return board + "\x00" + serial }

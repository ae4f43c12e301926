package validate

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Who the board is, before any step: its profile, serial (and where from), MAC,
// fixture, the report's start time and id.

// header identifies the board and starts the report.
func (r *run) header(ctx context.Context, start time.Time) (*plan.Report, error) {
	p := r.Plan
	// A board without a real-time clock boots in 1970: the time of day comes from the
	// station's HTTP Date header, for the report only (the system clock is left alone),
	// asked now and waited for where the report's id is first needed (stamp), never by
	// the steps: a station slow to answer, or down, does not hold the board.
	if start.Year() < 2020 {
		r.clock = make(chan time.Time, 1)
		go func() {
			t, _ := stationTime(ctx, r.StationTLS, p.Station.ReportURL, r.StationURL)
			r.clock <- t
		}()
	}
	id := board.ReadIdentity(r.Root)
	if p.Board == "auto" {
		r.board = board.Detect(id.Compatible)
	} else if b, err := board.Lookup(p.Board); err == nil {
		r.board = b
	} else {
		return nil, &plan.Error{Source: p.Source, Msg: "board: " + err.Error()}
	}
	rep := &plan.Report{Schema: plan.SchemaVersion, Interface: p.Interface, Linerate: r.Version, Started: start.UTC(), Plan: p,
		Figures: map[string]float64{}, Failed: []string{}, Board: "unknown"}
	if r.board != nil {
		rep.Board, rep.Model = r.board.Name, r.board.Model
	}
	if id.Model != "" {
		rep.Model = id.Model
	}
	rep.MAC, _ = nic.ReadFile(r.Root, filepath.Join("sys/class/net", p.Interface, "address"))
	rep.Serial, rep.SerialSource = r.pickSerial(id, rep.MAC)
	rep.Operator = cmp.Or(r.Operator, id.Operator, p.Operator)
	if r.AskOperator {
		o, err := r.ask("your operator id", "an operator id", nil)
		if err != nil {
			return nil, err
		}
		rep.Operator = o
	}
	if r.AskSerial {
		s, err := r.ask("the board's serial", "a serial", r.serialPattern())
		if err != nil {
			return nil, err
		}
		rep.Serial, rep.SerialSource = s, board.SerialOperator
	}
	r.trace(rep)
	r.serial, r.serialSource = rep.Serial, rep.SerialSource
	rep.Fixture = cmp.Or(r.Fixture, id.Fixture, p.Fixture)
	fmt.Fprintf(r.Console, "linerate validate: plan %s (%s), board %s, serial %s, %s %s, %d steps, budget %v\n",
		p.Name, p.Source, rep.Board, rep.Serial, p.Interface, orDash(rep.MAC), len(p.Steps), p.Budget.D())
	if p.Multi() {
		var names []string
		for _, port := range p.Ports {
			names = append(names, port.Interface)
		}
		fmt.Fprintf(r.Console, "linerate validate: %d ports: %s\n", len(names), strings.Join(names, ", "))
	}
	return rep, nil
}

// stamp gives the report its id, once, and where the board has no clock its time of
// day: the station's, asked by the header. It waits for the station's answer (at most
// stationTime's timeout), so it runs where the id is first needed: on the live events'
// sender, or before the report is written. The console's line on the clock comes from
// the run's end (clockNote), not from whichever goroutine stamped first.
func (r *run) stamp(rep *plan.Report) string {
	r.stampOnce.Do(func() {
		if r.clock != nil {
			if t := <-r.clock; !t.IsZero() {
				r.clockNote = fmt.Sprintf("linerate validate: the board's clock says %s; the report uses the station's time, %s\n",
					rep.Started.Format(time.RFC3339), t.UTC().Format(time.RFC3339))
				rep.Started = t.UTC()
			}
		}
		// The milliseconds keep two runs of one board in one second apart, the boot id
		// two boots whose clocks both start at 1970.
		rep.ID = fmt.Sprintf("%s-%s-%s", serialID(rep.Serial), rep.Started.Format("20060102T150405.000Z"), sanitizeID(bootID(r.Root)))
	})
	return rep.ID
}

// serial is the board's serial and where it came from: the operator's (--serial, the
// console prompt), then the system's (kernel command line, device tree), the EEPROM's
// where the board has one, the SoC's, else one made of the MAC.
func (r *run) pickSerial(id board.Identity, mac string) (string, string) {
	switch {
	case r.Serial != "":
		return r.Serial, board.SerialOperator
	case id.Serial != "" && id.SerialSource != board.SerialSoC:
		return id.Serial, id.SerialSource
	}
	if r.board != nil && r.board.EEPROM != nil {
		if d, err := r.board.EEPROM.Read(r.Root); err == nil && d.Serial != "" {
			return d.Serial, board.SerialEEPROM
		}
	}
	switch {
	case id.Serial != "":
		return id.Serial, id.SerialSource
	case mac != "":
		return macSerial(mac), board.SerialMAC
	}
	return "unknown", ""
}

// serialPattern is the plan's identity step's serial_pattern (nil when none).
func (r *run) serialPattern() *regexp.Regexp {
	var pattern *regexp.Regexp
	for _, s := range r.Plan.Steps {
		if k, ok := s.Params.(interface{ serialPattern() *regexp.Regexp }); ok && k.serialPattern() != nil {
			pattern = k.serialPattern()
		}
	}
	return pattern
}

// ask asks the operator on the console for what (the board's serial, their operator
// id) until a line fits: a name a report can carry (a, for the error), matching pattern
// when one is given. One reader serves every question, so nothing typed ahead is lost.
func (r *run) ask(what, a string, pattern *regexp.Regexp) (string, error) {
	if r.Input == nil {
		return "", fmt.Errorf("asking for %s: no console to ask on", what)
	}
	if r.in == nil {
		r.in = bufio.NewScanner(r.Input)
		r.in.Buffer(make([]byte, 256), 256)
	}
	for {
		fmt.Fprintf(r.Console, "linerate validate: scan or type %s, then Enter: ", what)
		if !r.in.Scan() {
			if err := r.in.Err(); err != nil {
				return "", fmt.Errorf("reading %s: %w (a line of at most 256 characters)", what, err)
			}
			return "", fmt.Errorf("reading %s: the console closed", what)
		}
		s := strings.TrimSpace(strings.TrimPrefix(r.in.Text(), "\ufeff"))
		switch err := plan.CheckName(s); {
		case err != nil:
			fmt.Fprintf(r.Console, "linerate validate: %q is not %s: %v; again\n", s, a, err)
		case pattern != nil && !pattern.MatchString(s):
			fmt.Fprintf(r.Console, "linerate validate: %q does not match the plan's serial_pattern; again\n", s)
		default:
			return s, nil
		}
	}
}

// trace ties the report to what produced it: the plan's hash, the image's build, the
// kernel, the U-Boot that loaded it and the FPGA's state.
func (r *run) trace(rep *plan.Report) {
	t := board.ReadTrace(r.Root)
	rep.PlanSHA256, rep.Build, rep.Kernel, rep.UBoot, rep.FPGA = r.Plan.SHA256, t.Build, t.Kernel, t.UBoot, t.FPGA
	if t.Note != "" {
		fmt.Fprintf(r.Console, "linerate validate: %s (the report names no build)\n", t.Note)
	}
	if b := t.Build; b != nil && b.Linerate != "" && (rep.Linerate == "" || rep.Linerate == "dev") {
		// An image's linerate is built without a version stamp; the image knows the
		// source it was built from.
		rep.Linerate = b.Linerate
	}
	if b := t.Build; b != nil {
		fmt.Fprintf(r.Console, "linerate validate: image build %s (linerate %s, kernel %s), running kernel %s%s\n", b.ID, orDash(b.Linerate), orDash(b.Kernel), orDash(t.Kernel),
			map[bool]string{true: ", U-Boot " + t.UBoot}[t.UBoot != ""])
	}
}

// bootID is the first 8 characters of the kernel's boot id, else of a random number.
func bootID(root string) string {
	if b, err := readall.File(filepath.Join(root, "proc/sys/kernel/random/boot_id"), readall.MaxSys); err == nil && len(b) >= 8 {
		return string(b[:8])
	}
	return fmt.Sprintf("%08x", rand.Uint32())
}

func macSerial(mac string) string {
	if mac == "" {
		return ""
	}
	return "mac-" + strings.ReplaceAll(mac, ":", "")
}

// serialID is the serial as a report id begins with it: of the id's alphabet, and at
// most maxSerialID characters, a longer one cut and told apart by a hash of the whole,
// so every report id is at most 97 characters (the station takes 128) and a file name.
func serialID(serial string) string {
	s := sanitizeID(serial)
	if len(s) <= maxSerialID {
		return s
	}
	sum := sha256.Sum256([]byte(serial))
	return s[:maxSerialID-17] + "_" + hex.EncodeToString(sum[:8])
}

const maxSerialID = 64

func sanitizeID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

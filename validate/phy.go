package validate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// PHY checks the port's PHY: its id and the driver bound to it against what the plan
// expects, and with loopback its self-test (frames looped back in the PHY, the control
// register given back exactly). A port without a PHY or MII access skips the step with
// the reason, unless the plan says it is required.
type PHY struct {
	Loopback bool `yaml:"loopback" json:"loopback,omitempty" doc:"run the PHY loopback self-test: frames looped in the PHY must all come back whole, and the control register is given back" default:"false"`
	Frames   int  `yaml:"frames" json:"frames,omitempty" doc:"how many frames the loopback sends, at a quarter of the link's line rate (at least 2000 a second, at most 23,500)" unit:"frames" default:"1000 with loopback"`
	// ExpectPHYID is registers 2 and 3 (0x01410e40), compared without the revision in
	// the low 4 bits, as phylib matches its drivers.
	ExpectPHYID  string `yaml:"expect_phy_id" json:"expect_phy_id,omitempty" doc:"the PHY id (registers 2 and 3, hex, without the revision nibble as phylib matches it)"`
	ExpectDriver string `yaml:"expect_driver" json:"expect_driver,omitempty" doc:"the PHY driver the kernel must have bound"`
	Required     bool   `yaml:"required" json:"required,omitempty" doc:"fail, not skip, on a port without MII access" default:"false"`
}

// Check defaults 1000 frames for a loopback and reads expect_phy_id as a PHY id.
func (s *PHY) Check(*plan.Plan) error {
	if s.Frames == 0 && s.Loopback {
		s.Frames = 1000
	}
	if s.Frames < 0 || s.Frames > 1_000_000 {
		return fmt.Errorf("frames %d: want 1..1000000", s.Frames)
	}
	if s.ExpectPHYID != "" {
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s.ExpectPHYID), "0x"), 16, 32)
		if err != nil {
			return fmt.Errorf("expect_phy_id %q: want registers 2 and 3 as hex, 0x01410cc2", s.ExpectPHYID)
		}
		s.ExpectPHYID = fmt.Sprintf("0x%08x", n)
	}
	return nil
}

// Timeout: the frames at 2000 a second, and the link's wait after each write.
func (s *PHY) Timeout() time.Duration {
	return 30*time.Second + time.Duration(s.Frames/2000+1)*time.Second + 2*15*time.Second
}

// PHYMeasurement is what the phy step read and, with a loopback, what came back.
type PHYMeasurement struct {
	PHY      *experiment.PHY            `json:"phy"`
	Loopback *experiment.LoopbackResult `json:"loopback,omitempty"`
	Err      string                     `json:"error,omitempty"`
}

// Run reads the PHY and runs its self-test.
func (s *PHY) Run(ctx context.Context, e Env) (Outcome, error) {
	p, err := experiment.ReadPHY(e.Iface)
	if p == nil {
		return Outcome{}, err
	}
	m := PHYMeasurement{PHY: p}
	if s.Loopback && p.Registers != nil {
		m.Loopback, err = experiment.Loopback{Iface: e.Iface, StateDir: e.StateDir, Frames: s.Frames, CarrierTimeout: 15 * time.Second, Behind: e.behind}.Run(ctx)
		if err != nil {
			m.Err = err.Error()
		}
	}
	return s.Judge(m), nil
}

// Judge: the PHY there (or the step skipped), its id and driver as expected, every
// looped frame back whole and the register given back.
func (s *PHY) Judge(m PHYMeasurement) Outcome {
	p := m.PHY
	o := Outcome{Pass: true, Measured: map[string]float64{}, Detail: m}
	if p.Registers == nil && (s.Loopback || s.ExpectPHYID != "" || p.Sysfs == nil) {
		why := fmt.Sprintf("no PHY to test on %s: %s", p.Iface, orDash(p.NoMII))
		if !s.Required {
			return Outcome{Skip: true, Summary: why, Detail: m}
		}
		return Outcome{Summary: why, Reason: why + " (the plan requires it)", Detail: m}
	}
	id, driver := "", ""
	if p.Registers != nil {
		id = p.Registers.ID()
	} else if p.Sysfs != nil {
		id = p.Sysfs.ID
	}
	if p.Sysfs != nil {
		driver = p.Sysfs.Driver
	}
	var facts, bad []string
	facts = append(facts, "id "+orDash(id), "driver "+orDash(driver))
	if s.ExpectPHYID != "" && !samePHY(id, s.ExpectPHYID) {
		bad = append(bad, fmt.Sprintf("PHY id %s, want %s (another PHY fitted, or a strap fault)", orDash(id), s.ExpectPHYID))
	}
	if s.ExpectDriver != "" && driver != s.ExpectDriver {
		why := fmt.Sprintf("driver %q bound, want %q", driver, s.ExpectDriver)
		if isGeneric(driver) {
			why += " (phylib's generic driver sets up no RGMII delays or errata: the vendor's PHY driver is not in the kernel)"
		}
		bad = append(bad, why)
	}
	if lb := m.Loopback; s.Loopback && (lb != nil || m.Err != "") {
		bad = append(bad, s.judgeLoopback(lb, m.Err, &facts, o.Measured)...)
	}
	o.Summary = strings.Join(facts, ", ")
	if len(bad) > 0 {
		o.Pass, o.Reason = false, strings.Join(bad, "; ")
	}
	return o
}

func (s *PHY) judgeLoopback(lb *experiment.LoopbackResult, errText string, facts *[]string, measured map[string]float64) []string {
	if lb == nil {
		return []string{"loopback: " + errText}
	}
	*facts = append(*facts, fmt.Sprintf("loopback %d of %d frames back, BMCR %s restored %v", lb.Received, s.Frames, lb.Before, lb.Restored))
	if lb.Relooped {
		*facts = append(*facts, "the PHY left loopback during the first frames (its driver's late reset) and was looped again")
	}
	measured["loopback_sent"], measured["loopback_received"], measured["loopback_corrupted"] = float64(lb.Sent), float64(lb.Received), float64(lb.Corrupted)
	var bad []string
	if lb.Received != uint64(s.Frames) || lb.Corrupted > 0 {
		bad = append(bad, fmt.Sprintf("loopback: %d of %d frames back, %d corrupted: the MAC, the PHY or their RGMII path (not the cable: the PHY loops before it)", lb.Received, s.Frames, lb.Corrupted))
	}
	if !lb.Restored {
		bad = append(bad, fmt.Sprintf("loopback: BMCR reads %s after the test, was %s: run 'linerate revert'", lb.After, lb.Before))
	}
	if errText != "" && len(bad) == 0 {
		bad = append(bad, "loopback: "+errText)
	}
	return bad
}

// samePHY compares two PHY ids as phylib matches a driver to a PHY: model and vendor,
// not the revision in the low 4 bits (a board revision may fit a later stepping).
func samePHY(a, b string) bool {
	x, err1 := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 32)
	y, err2 := strconv.ParseUint(strings.TrimPrefix(b, "0x"), 16, 32)
	return err1 == nil && err2 == nil && x&^0xf == y&^0xf
}

func isGeneric(driver string) bool {
	for _, g := range nic.GenericDrivers {
		if driver == g {
			return true
		}
	}
	return false
}

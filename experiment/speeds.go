package experiment

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

// SpeedMatrix brings the link up at each speed in turn: the PHY advertises the link
// modes of one speed only (a temporary change of tune's link.advertise, given back
// exactly at the end), the link is awaited at that speed, and Measure runs on it. A PHY
// that ignores the advertisement shows in the speed the link came up at: the point
// says so and is not measured.
type SpeedMatrix struct {
	Iface, StateDir string
	Speeds          []int
	Duplex          string        // "full", "half", or "" for either
	Wait            time.Duration // for the link at the speed
	Measure         func(ctx context.Context) (string, error)
}

// SpeedPoint is one speed of the matrix.
type SpeedPoint struct {
	Want       int      `json:"want_mbps"`
	Advertised []string `json:"advertised"`
	Got        int      `json:"got_mbps"` // 0: no link
	Duplex     string   `json:"duplex"`
	Measured   string   `json:"measured,omitempty"`
	Error      string   `json:"error,omitempty"`
	Restored   bool     `json:"restored"`
}

// Run measures every speed; an error is one that stopped the matrix (the port has no
// link modes to choose from).
func (m SpeedMatrix) Run(ctx context.Context) ([]SpeedPoint, error) {
	var out []SpeedPoint
	for _, want := range m.Speeds {
		p := SpeedPoint{Want: want}
		c := Change{Iface: m.Iface, StateDir: m.StateDir, Knob: tune.KnobAdvertise, CarrierTimeout: m.Wait}
		ch, err := c.Run(ctx, func(before string) (string, error) {
			modes, err := m.modes(want)
			if err != nil {
				return "", err
			}
			return strings.Join(append(modes, notSpeeds(before)...), " "), nil
		}, func(ctx context.Context) error {
			p.Got, p.Duplex = m.await(ctx, want)
			if p.Got != want {
				return fmt.Errorf("the link came up at %s, not %d Mbit/s: the PHY ignores the advertisement (or the partner cannot do it)", mbps(p.Got), want)
			}
			var err error
			p.Measured, err = m.Measure(ctx)
			return err
		})
		if ch == nil {
			return out, err
		}
		p.Advertised, p.Restored = strings.Fields(ch.During), ch.Restored
		if err != nil {
			p.Error = err.Error()
		}
		out = append(out, p)
	}
	return out, nil
}

func mbps(n int) string {
	if n <= 0 {
		return "no link"
	}
	return strconv.Itoa(n) + " Mbit/s"
}

// notSpeeds are the advertised bits that are no link speed (Autoneg, Pause, Asym_Pause,
// TP): kept as they are while the speeds change.
func notSpeeds(advertised string) []string {
	var out []string
	for _, w := range strings.Fields(advertised) {
		if i := strings.Index(w, "base"); i > 0 && strings.Trim(w[:i], "0123456789") == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// modes are the supported link modes of one speed (and duplex): "100baseT/Full".
func (m SpeedMatrix) modes(speed int) ([]string, error) {
	rd, closeFn, err := nic.Open("", nic.APIAuto)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	ifcs, err := rd.Read(m.Iface)
	if err != nil {
		return nil, err
	}
	var out []string
	prefix := strconv.Itoa(speed) + "base"
	for _, mode := range ifcs[0].Link.Supported {
		if strings.HasPrefix(mode, prefix) && (m.Duplex == "" || strings.HasSuffix(strings.ToLower(mode), "/"+m.Duplex)) {
			out = append(out, mode)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s supports no %d Mbit/s %s mode (supported: %s)", m.Iface, speed, m.Duplex, strings.Join(ifcs[0].Link.Supported, " "))
	}
	return out, nil
}

// await waits for carrier at the wanted speed, and returns the speed and duplex the link
// has when it comes (or when the wait ends).
func (m SpeedMatrix) await(ctx context.Context, want int) (int, string) {
	deadline := time.Now().Add(m.Wait)
	read := func(f string) string { v, _ := nic.ReadFile("/", "sys/class/net/"+m.Iface+"/"+f); return v }
	for {
		speed := 0
		if read("carrier") == "1" {
			speed, _ = strconv.Atoi(read("speed"))
		}
		if speed == want || time.Now().After(deadline) || ctx.Err() != nil {
			return speed, read("duplex")
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

package experiment

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

// PHY is what a port's PHY is: what sysfs says of it (driver, id, address) and its
// registers read through MII, decoded.
type PHY struct {
	Iface     string         `json:"interface"`
	Sysfs     *nic.PHY       `json:"sysfs"`
	Registers *nic.Registers `json:"registers"`
	BMCR      string         `json:"bmcr_decoded"`
	BMSR      string         `json:"bmsr_decoded"`
	Partner   []string       `json:"partner_modes"`
	// NoMII says why the registers could not be read ("" when they were).
	NoMII string `json:"no_mii,omitempty"`
}

// ReadPHY reads iface's PHY: sysfs and, where the driver gives MII access, its
// registers. A port with neither is an error saying so.
func ReadPHY(iface string) (*PHY, error) {
	p := &PHY{Iface: iface}
	rd, closeFn, err := nic.Open("", nic.APIAuto)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if p.Sysfs, err = rd.PHY(iface); err != nil {
		return nil, err
	}
	m, err := nic.OpenMII(iface)
	if err == nil {
		defer m.Close()
		var r nic.Registers
		if r, err = m.Registers(); err == nil {
			p.Registers = &r
			p.BMCR, p.BMSR, p.Partner = nic.DecodeBMCR(r.BMCR), nic.DecodeBMSR(r.BMSR), nic.PartnerModes(r.LPA, r.Stat1000)
			if r.BMCR&(nic.BMCRANEnable|nic.BMCRLoopback) == 0 {
				if lm, err := nic.ReadLinkModes(rd.Kernel, iface); err == nil && lm.Autoneg {
					// QEMU's PHY clears the enable bit it was written; phylib still autonegotiates.
					p.BMCR += " (the autoneg-enable bit reads 0; phylib runs autonegotiation)"
				}
			}
		}
	}
	if err != nil {
		p.NoMII = err.Error()
		if p.Sysfs == nil {
			return p, err
		}
	}
	return p, nil
}

// Text is the PHY as show prints a part.
func (p *PHY) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s PHY\n", p.Iface)
	if s := p.Sysfs; s != nil {
		addr := "-"
		if s.Address != nil {
			addr = strconv.Itoa(*s.Address)
		}
		fmt.Fprintf(&b, "  device      %s\n  id          %s\n  driver      %s\n  address     %s\n  interface   %s\n", s.Device, s.ID, s.Driver, addr, s.Interface)
	} else {
		b.WriteString("  sysfs       no PHY bound to the interface (phydev)\n")
	}
	if r := p.Registers; r != nil {
		fmt.Fprintf(&b, "  mii address %d\n  id (2,3)    %s\n  bmcr        0x%04x  %s\n  bmsr        0x%04x  %s\n", r.Address, r.ID(), r.BMCR, p.BMCR, r.BMSR, p.BMSR)
		fmt.Fprintf(&b, "  advertise   0x%04x  ctrl1000 0x%04x\n  partner     %s\n", r.Advert, r.Ctrl1000, strings.Join(p.Partner, " "))
	} else {
		fmt.Fprintf(&b, "  registers   n/a: %s\n", p.NoMII)
	}
	return b.String()
}

// Loopback is a PHY loopback self-test: the PHY looped back at the link's speed, test
// frames sent out through the engine's TX ring and counted back by its sink accounting,
// the PHY's control register given back exactly. It separates a fault of the board (MAC,
// PHY, their RGMII path) from one of the cable, the fixture or the peer.
type Loopback struct {
	Iface    string
	StateDir string // tune's: the loopback is journalled there, so 'linerate revert' gives it back after a crash
	Frames   int
	Size     int     // with FCS
	FPS      float64 // the frames' rate (0: loopbackFPS)
	// CarrierTimeout bounds the wait for the link after each write of the register.
	CarrierTimeout time.Duration
	// Behind, where set, takes the closing of the test's rings once its frames are
	// counted (engine.Trialer.CloseBehind): the register is given back meanwhile.
	Behind *sync.WaitGroup
}

// LoopbackResult is what the self-test found.
type LoopbackResult struct {
	Iface     string        `json:"interface"`
	Before    string        `json:"bmcr_before"`
	Loop      string        `json:"bmcr_loopback"`
	After     string        `json:"bmcr_after"`
	Restored  bool          `json:"restored"`
	Sent      uint64        `json:"sent"`
	Received  uint64        `json:"received"`
	Lost      uint64        `json:"lost"`
	Corrupted uint64        `json:"corrupted"`
	Reordered uint64        `json:"reordered"`
	Seconds   float64       `json:"seconds"`
	Frames    frames.Result `json:"frames"`
	// Relooped: the PHY left loopback during the frames (its driver's late soft reset),
	// was looped again and the frames sent again; the counts are the second sending's.
	Relooped bool `json:"relooped,omitempty"`
}

// Pass says every frame came back whole and the register went back as it was.
func (r *LoopbackResult) Pass(want int) bool {
	return r.Restored && r.Sent == uint64(want) && r.Received == r.Sent && r.Corrupted == 0
}

// Text is the result's line.
func (r *LoopbackResult) Text() string {
	s := fmt.Sprintf("%s PHY loopback: %d of %d frames back, %d lost, %d corrupted, %d reordered in %.1fs; BMCR %s -> %s -> %s",
		r.Iface, r.Received, r.Sent, r.Lost, r.Corrupted, r.Reordered, r.Seconds, r.Before, r.Loop, r.After)
	if r.Relooped {
		s += " (the PHY left loopback during the first frames: looped again, sent again)"
	}
	if !r.Restored {
		s += " (NOT restored: run 'linerate revert " + r.Iface + "')"
	}
	return s + "\n"
}

// Run loops the PHY back, sends, counts and gives the register back, also when ctx is
// cancelled or a step fails. The change goes through tune's journal under the
// interface's lock, so a killed test is undone by 'linerate revert IFACE'.
func (l Loopback) Run(ctx context.Context) (*LoopbackResult, error) {
	if l.Frames < 1 || l.Frames > 10_000_000 {
		return nil, badinput.Errorf("--frames %d: want 1..10000000", l.Frames)
	}
	m, _, err := nic.OpenPHY(l.Iface)
	if err != nil {
		return nil, err // no PHY to loop back
	}
	m.Close()
	port, err := engine.LookupPort("/", l.Iface, 0)
	if err != nil {
		return nil, err
	}
	duplex, _ := nic.ReadFile("/", "sys/class/net/"+l.Iface+"/duplex")
	loop := nic.LoopbackBMCR(port.LinkMbps, duplex != "half")
	res := &LoopbackResult{Iface: l.Iface}
	c := Change{Iface: l.Iface, StateDir: l.StateDir, Knob: tune.KnobPHYControl, CarrierTimeout: l.CarrierTimeout}
	ch, err := c.Run(ctx, func(string) (string, error) {
		return fmt.Sprintf("0x%04x", loop), nil
	}, func(ctx context.Context) error {
		start := time.Now()
		var fr frames.Result
		var err error
		fr, res.Relooped, err = sendLooped(func() (frames.Result, error) { return l.send(ctx, port) },
			func() bool { return leftLoopback(l.Iface) }, func() error { return tune.HoldLoopback(l.Iface, loop) })
		res.Seconds = time.Since(start).Seconds()
		res.Frames, res.Sent, res.Received, res.Lost, res.Corrupted, res.Reordered = fr, fr.Sent, fr.Received, fr.Lost, fr.Corrupted, fr.Reordered
		return err
	})
	if ch == nil {
		return nil, err // nothing was changed
	}
	res.Before, res.Loop, res.After, res.Restored = ch.Before, ch.During, ch.After, ch.Restored
	if err == nil && !res.Pass(l.Frames) {
		err = fmt.Errorf("%d of %d frames back, %d corrupted", res.Received, l.Frames, res.Corrupted)
	}
	return res, err
}

// sendLooped sends the frames (send) and, when some did not come back and the PHY is
// no longer looped back (left), loops it again (hold) and sends them again, once: a
// soft reset the loopback's write did not see coming (the driver's config_aneg that the
// forcing queued on phylib's work queue, which the write waits for where it can see it
// run, or another's reset of the PHY) ends the loopback during the frames: the frames
// tell. A PHY still looped that lost frames lost them: the result stands.
func sendLooped(send func() (frames.Result, error), left func() bool, hold func() error) (frames.Result, bool, error) {
	fr, err := send()
	if err != nil || fr.Received >= fr.Sent || !left() {
		return fr, false, err
	}
	if err := hold(); err != nil {
		return fr, true, fmt.Errorf("the PHY left loopback during the frames; looping it again: %w", err)
	}
	fr, err = send()
	return fr, true, err
}

// leftLoopback says iface's PHY reads as no longer looped back (false when it cannot
// be read: the frames' result stands).
func leftLoopback(iface string) bool {
	m, addr, err := nic.OpenPHY(iface)
	if err != nil {
		return false
	}
	defer m.Close()
	v, err := m.Read(addr, nic.MIIBMCR)
	return err == nil && v&nic.BMCRLoopback == 0
}

// send sends the frames to the port's own MAC and counts them back on it.
func (l Loopback) send(ctx context.Context, port *engine.Port) (frames.Result, error) {
	size := l.Size
	if size == 0 {
		size = 512
	}
	fps := l.FPS
	if fps <= 0 {
		fps = loopbackFPS(port.LinkMbps, size)
	}
	t, err := engine.OpenTrialer(engine.TrialerConfig{Root: "/", Port: port, Dst: port.MAC, RXPort: port.Name, MaxLen: size - frames.FCS, MaxFPS: fps, Kind: "loopback"})
	if err != nil {
		return frames.Result{}, err
	}
	defer t.CloseBehind(l.Behind)
	return t.Trial(ctx, size, fps, 0, uint64(l.Frames))
}

// loopbackFPS is the self-test's rate of frames of size bytes (with FCS) on a link of
// linkMbps: a quarter of its line rate, at least 2000 a second (and so where the speed
// is unknown) and at most loopbackMaxFPS. The test proves the path whole, not its
// speed: what bounds the rate is the CPU that sends and counts every frame (a frame
// costs it the same at any link speed), not the link, which a quarter leaves far from
// full. A real ZC702's 10,000 frames of 512 bytes at 1000 Mb/s take 0.43 s, the
// emulated one's 1000 at 100 Mb/s 0.17 s (a tenth of the line took 0.43 s).
func loopbackFPS(linkMbps, size int) float64 {
	line := float64(linkMbps) * 1e6 / (8 * float64(size+20)) // preamble, SFD and gap: 20 bytes
	return min(max(2000, line/4), loopbackMaxFPS)
}

// loopbackMaxFPS is the self-test's highest rate: a tenth of 1000 Mb/s in 512-byte
// frames, which a Zynq-7000's Cortex-A9 sends and counts back with room to spare (it was
// the rate at 1000 Mb/s before the ceiling; 64-byte frames at a tenth of the line would
// be six times as many).
const loopbackMaxFPS = 23_500

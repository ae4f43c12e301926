package tune

import (
	"errors"
	"fmt"
	"strconv"
)

// The rings family: ethtool -G's RX and TX descriptor ring depths. Changing one closes
// and reopens the interface on most drivers (macb), so the link bounces. A GEM's
// overlay carries the two depths (dts), which is how RingKnob is asked.
type rings struct{}

// The ring knobs' names.
const (
	knobRingsRX = "rings.rx"
	knobRingsTX = "rings.tx"
)

func init() {
	register(
		row{key: knobRingsRX, family: rings{}, arg: "rx", values: kCount, concrete: knobRingsRX, order: orderLink, bounces: true, batch: true},
		row{key: knobRingsTX, family: rings{}, arg: "tx", values: kCount, concrete: knobRingsTX, order: orderLink, bounces: true, batch: true},
	)
}

// RingKnob is the knob of the RX ring's depth (rx) or the TX ring's.
func RingKnob(rx bool) string {
	if rx {
		return knobRingsRX
	}
	return knobRingsTX
}

// IsRingKnob says whether knob is a ring's depth (ok) and whether the RX ring's.
func IsRingKnob(knob string) (rx, ok bool) {
	return knob == knobRingsRX, knob == knobRingsRX || knob == knobRingsTX
}

func (rings) expand(x *expander, r *row, s Setting) error {
	rg := x.ifc.Rings
	if rg == nil {
		return x.skip(s, "rings not supported by "+x.drv)
	}
	max := rg.RXMax
	if r.arg == "tx" {
		max = rg.TXMax
	}
	want := uint64(max)
	if s.Value != "max" {
		want, _ = strconv.ParseUint(s.Value, 10, 32)
		if want > uint64(max) {
			return x.p.perr(s, "%d is above the driver's maximum %d", want, max)
		}
		if x.drv == "macb" && (want < 64 || want&(want-1) != 0) {
			return x.p.perr(s, "macb takes ring sizes that are powers of two from 64 (it rounds others): use %d", nextPow2(want))
		}
	}
	return x.target(s, s.Knob, strconv.FormatUint(want, 10))
}

func (rings) read(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Rings == nil {
		return "", unsupported(et, "rings")
	}
	if k.def().arg == "rx" {
		return u32(et.Rings.RX), nil
	}
	return u32(et.Rings.TX), nil
}

// write sets one ring and keeps the other as the driver has it.
func (r rings) write(s *System, k Knob, v string) error {
	return r.writeAll(s, k.Iface, []Knob{k}, []string{v})
}

// writeAll sets both depths in one request, as ethtool -G rx N tx M does: macb closes
// and reopens the port for a change of either, so the link bounces once, not twice (on
// the emulated ZC702 each reopening takes 0.2 s). A ring not among ks keeps its depth.
func (rings) writeAll(s *System, iface string, ks []Knob, vals []string) error {
	et, _, err := s.ethtool(iface)
	if err != nil {
		return err
	}
	if et.Rings == nil {
		return errors.New("rings not supported")
	}
	rx, tx := et.Rings.RX, et.Rings.TX
	for i, k := range ks {
		n, err := strconv.ParseUint(vals[i], 10, 32)
		if err != nil {
			return fmt.Errorf("%s %q: want a ring depth", k.Name, vals[i])
		}
		if k.def().arg == "rx" {
			rx = uint32(n)
		} else {
			tx = uint32(n)
		}
	}
	return s.Setter.SetRings(iface, rx, tx)
}

func nextPow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	if p < 64 {
		return 64
	}
	return p
}

package tune

import (
	"errors"
	"strconv"

	"github.com/zynqnet/linerate/nic"
)

// The channels family: ethtool -L's RX, TX and combined queue counts. A change bounces
// the link, and removes the queues above the new count with their RPS and XPS settings,
// which apply journals first (dropsQueues).
type channels struct{}

func init() {
	for _, side := range []string{"rx", "tx", "combined"} {
		k := "channels." + side
		register(row{key: k, family: channels{}, arg: side, values: kChannels, concrete: k, order: orderLink, bounces: true, dropsQueues: true})
	}
}

// field is the count a channels knob sets, and its maximum.
func (channels) field(c *nic.Channels, side string) (cur *uint32, max uint32) {
	switch side {
	case "rx":
		return &c.RX, c.RXMax
	case "tx":
		return &c.TX, c.TXMax
	}
	return &c.Combined, c.CombinedMax
}

func (f channels) expand(x *expander, r *row, s Setting) error {
	c := x.ifc.Channels
	if c == nil {
		return x.skip(s, "channels not supported by "+x.drv)
	}
	_, max := f.field(c, r.arg)
	if max == 0 {
		return x.skip(s, x.drv+" has no "+r.arg+" channels")
	}
	want := uint64(max)
	switch s.Value {
	case "max":
	case "cpus":
		want = min(want, uint64(x.cpus))
	default:
		want, _ = strconv.ParseUint(s.Value, 10, 32)
		if want > uint64(max) || want == 0 {
			return x.p.perr(s, "%d is outside 1..%d", want, max)
		}
	}
	return x.target(s, s.Knob, strconv.FormatUint(want, 10))
}

func (f channels) read(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Channels == nil {
		return "", unsupported(et, "channels")
	}
	c := *et.Channels
	cur, _ := f.field(&c, k.def().arg)
	return u32(*cur), nil
}

// write sets one count and keeps the others as the driver has them.
func (f channels) write(s *System, k Knob, v string) error {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return err
	}
	if et.Channels == nil {
		return errors.New("channels not supported")
	}
	n, _ := strconv.ParseUint(v, 10, 32)
	c := *et.Channels
	cur, _ := f.field(&c, k.def().arg)
	*cur = uint32(n)
	return s.Setter.SetChannels(k.Iface, c)
}

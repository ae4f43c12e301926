package tune

import (
	"strconv"
	"strings"
)

// The link family: what rtnetlink and ethtool's link settings hold for the interface as
// a whole: its MTU (a change bounces the link on most drivers), promiscuity, and, for
// linerate's own speed matrix only, the link modes the PHY advertises.
type link struct{}

// KnobAdvertise is the link modes the PHY advertises, space-separated: a speed matrix's
// journal (internal: no profile sets it).
const KnobAdvertise = "link.advertise"

func init() {
	register(
		row{key: "mtu", family: link{}, arg: "mtu", values: kMTU, concrete: "mtu", order: orderLink, bounces: true},
		row{key: "promisc", family: link{}, arg: "promisc", values: kOnOff, concrete: "promisc", order: orderEthtool},
		row{key: KnobAdvertise, family: link{}, arg: "advertise", internal: true, concrete: KnobAdvertise, order: orderLink, bounces: true},
	)
}

func (link) expand(x *expander, r *row, s Setting) error {
	if r.arg != "mtu" {
		return x.target(s, s.Knob, s.Value) // promisc: the one knob of its name
	}
	if s.Value == "keep" {
		return nil
	}
	m, _ := strconv.Atoi(s.Value)
	if x.ifc.MaxMTU != nil && *x.ifc.MaxMTU > 0 && m > *x.ifc.MaxMTU {
		return x.p.perr(s, "%d is above %s's maximum MTU %d", m, x.drv, *x.ifc.MaxMTU)
	}
	if x.ifc.MinMTU != nil && m < *x.ifc.MinMTU {
		return x.p.perr(s, "%d is below %s's minimum MTU %d", m, x.drv, *x.ifc.MinMTU)
	}
	return x.target(s, s.Knob, s.Value)
}

func (link) read(s *System, k Knob) (string, error) {
	if arg := k.def().arg; arg != "advertise" {
		_, l, err := s.ethtool(k.Iface)
		if err != nil {
			return "", err
		}
		if arg == "mtu" {
			return strconv.Itoa(l.MTU), nil
		}
		return onOff(l.RawFlags&0x100 != 0), nil // IFF_PROMISC
	}
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.LinkModes == nil || len(et.LinkModes.Supported) == 0 {
		return "", unsupported(et, "link_modes")
	}
	return strings.Join(et.LinkModes.Advertised, " "), nil
}

func (link) write(s *System, k Knob, v string) error {
	switch k.def().arg {
	case "mtu":
		n, _ := strconv.Atoi(v)
		return s.Setter.SetMTU(k.Iface, n)
	case "promisc":
		return s.Setter.SetPromisc(k.Iface, v == "on")
	}
	return s.Setter.SetAdvertised(k.Iface, strings.Fields(v))
}

package nic

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// API choices for OpenKernel.
const (
	APIAuto    = "auto"
	APINetlink = "netlink"
	APIIoctl   = "ioctl"
)

// liveKernel asks the running kernel. Its sockets belong to the network namespace of the
// thread that opened it.
type liveKernel struct {
	api string
	nl  *ethnl // nil on the ioctl path
	io  *ioctlEthtool
}

// OpenKernel opens the live kernel's rtnetlink and ethtool interfaces in the calling
// thread's network namespace. api is APIAuto (ethtool netlink when the kernel has it, the
// ioctl otherwise, and the ioctl for any message the netlink side does not know),
// APINetlink (fail without netlink) or APIIoctl (force the pre-5.6 path).
func OpenKernel(api string) (Kernel, error) {
	io, err := openIoctl()
	if err != nil {
		return nil, err
	}
	k := &liveKernel{api: APIIoctl, io: io}
	switch api {
	case APIIoctl:
		return k, nil
	case APIAuto, APINetlink, "":
		n, err := dialEthnl()
		if err != nil {
			if api == APINetlink {
				io.Close()
				return nil, fmt.Errorf("ethtool netlink is not available on this kernel (it came in 5.6; CONFIG_ETHTOOL_NETLINK): %w", err)
			}
			return k, nil
		}
		k.nl, k.api = n, APINetlink
		return k, nil
	}
	io.Close()
	return nil, fmt.Errorf("ethtool API %q: want %s, %s or %s", api, APIAuto, APINetlink, APIIoctl)
}

func (k *liveKernel) API() string { return k.api }

func (k *liveKernel) Close() error {
	var err error
	if k.nl != nil {
		err = k.nl.Close()
	}
	return errors.Join(err, k.io.Close())
}

// Links lists interfaces with one RTM_GETLINK dump, each message decoded as
// vishvananda/netlink's LinkList decodes it, with what its LinkAttrs lacks
// (IFLA_MIN_MTU, IFLA_MAX_MTU, IFLA_PROMISCUITY, the whole IFLA_STATS64) read from the
// same message. (LinkList and a dump of its own for those took the kernel's every link
// twice.)
func (k *liveKernel) Links() ([]LinkAnswer, error) {
	req := linkRequest(unix.NLM_F_DUMP)
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink link dump: %w", err)
	}
	out := make([]LinkAnswer, 0, len(msgs))
	for _, m := range msgs {
		la, err := linkAnswer(m)
		if err != nil {
			return nil, fmt.Errorf("rtnetlink link dump: %w", err)
		}
		out = append(out, la)
	}
	return out, nil
}

// Link implements LinkGetter: one RTM_GETLINK for name (IFLA_IFNAME, as netlink's
// LinkByName asks), one link's answer back. A kernel that cannot look a link up by
// name (before 2.6.33: EINVAL) and a name not there are answered from Links.
func (k *liveKernel) Link(name string) (LinkAnswer, error) {
	req := linkRequest(unix.NLM_F_ACK)
	attr := uint16(unix.IFLA_IFNAME)
	if len(name) > unix.IFNAMSIZ-1 {
		attr = unix.IFLA_ALT_IFNAME
	}
	req.AddData(nl.NewRtAttr(int(attr), nl.ZeroTerminated(name)))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, 0)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENODEV) || err == nil && len(msgs) == 0 {
		return linkIn(k, name)
	}
	if err != nil {
		return LinkAnswer{}, fmt.Errorf("rtnetlink link %s: %w", name, err)
	}
	if len(msgs) != 1 {
		return LinkAnswer{}, fmt.Errorf("rtnetlink link %s: %d answers, want one", name, len(msgs))
	}
	la, err := linkAnswer(msgs[0])
	if err != nil {
		return LinkAnswer{}, fmt.Errorf("rtnetlink link %s: %w", name, err)
	}
	return la, nil
}

// linkRequest is an RTM_GETLINK request with flags, as netlink's LinkList and
// LinkByName make it.
func linkRequest(flags int) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, flags)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(nl.RTEXT_FILTER_VF)))
	return req
}

// linkAnswer decodes one RTM_NEWLINK message.
func linkAnswer(m []byte) (LinkAnswer, error) {
	l, err := netlink.LinkDeserialize(nil, m)
	if err != nil {
		return LinkAnswer{}, err
	}
	x, err := linkExtras(m)
	if err != nil {
		return LinkAnswer{}, err
	}
	a := l.Attrs()
	la := LinkAnswer{
		Name:        a.Name,
		Index:       a.Index,
		MAC:         a.HardwareAddr.String(),
		MTU:         a.MTU,
		RawFlags:    a.RawFlags,
		Operstate:   a.OperState.String(),
		NumRxQueues: a.NumRxQueues,
		NumTxQueues: a.NumTxQueues,
		MinMTU:      x.minMTU,
		MaxMTU:      x.maxMTU,
		Promiscuity: x.promiscuity,
	}
	if len(a.PermHWAddr) > 0 {
		la.PermMAC = a.PermHWAddr.String()
	}
	if t := l.Type(); t != "device" {
		la.Kind = t
	}
	if x.stats != nil {
		la.Stats = *x.stats
	}
	return la, nil
}

type linkExtra struct {
	minMTU, maxMTU *int
	promiscuity    int
	stats          *LinkStats
}

// decodeStats64 decodes struct rtnl_link_stats64 (include/uapi/linux/if_link.h), which
// vishvananda/netlink decodes only up to tx_compressed: rx_nohandler (4.6) is missing
// there. Older kernels send a shorter struct; absent fields stay 0.
func decodeStats64(b []byte) *LinkStats {
	f := func(i int) uint64 {
		if (i+1)*8 > len(b) {
			return 0
		}
		return ne.Uint64(b[i*8:])
	}
	return &LinkStats{
		RXPackets: f(0), TXPackets: f(1), RXBytes: f(2), TXBytes: f(3),
		RXErrors: f(4), TXErrors: f(5), RXDropped: f(6), TXDropped: f(7),
		Multicast: f(8), Collisions: f(9), RXLengthErrors: f(10), RXOverErrors: f(11),
		RXCRCErrors: f(12), RXFrameErrors: f(13), RXFIFOErrors: f(14), RXMissedErrors: f(15),
		TXAbortedErrors: f(16), TXCarrierErrors: f(17), TXFIFOErrors: f(18),
		TXHeartbeatErrors: f(19), TXWindowErrors: f(20), RXCompressed: f(21),
		TXCompressed: f(22), RXNoHandler: f(23),
	}
}

// linkExtras reads what netlink's LinkAttrs lacks from one RTM_NEWLINK message.
func linkExtras(m []byte) (linkExtra, error) {
	var x linkExtra
	if len(m) < unix.SizeofIfInfomsg {
		return x, fmt.Errorf("a link message of %d bytes", len(m))
	}
	attrs, err := nl.ParseRouteAttr(m[unix.SizeofIfInfomsg:])
	if err != nil {
		return x, err
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.IFLA_STATS64 {
			x.stats = decodeStats64(a.Value)
			continue
		}
		if len(a.Value) < 4 {
			continue
		}
		v := int(ne.Uint32(a.Value))
		switch a.Attr.Type {
		case unix.IFLA_MIN_MTU:
			x.minMTU = &v
		case unix.IFLA_MAX_MTU:
			x.maxMTU = &v
		case unix.IFLA_PROMISCUITY:
			x.promiscuity = v
		}
	}
	return x, nil
}

// notSupported reports whether err means "the driver (or kernel) has no such operation".
func notSupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTSUP)
}

// Ethtool implements Kernel.
func (k *liveKernel) Ethtool(iface string) (*EthtoolAnswer, error) {
	a := &EthtoolAnswer{Unsupported: map[string]string{}}
	drv, err := k.io.driver(iface)
	switch {
	case errors.Is(err, unix.ENODEV):
		return nil, fmt.Errorf("interface %q: %w", iface, os.ErrNotExist)
	case err != nil:
		a.Unsupported["driver"] = reason(err, "")
	default:
		a.Driver = drv
	}
	who := ""
	if drv != nil {
		who = drv.Name
	}
	// part runs the netlink request where there is one and the ioctl where netlink is
	// absent or does not know the message; it records why a part is missing.
	part := func(name string, viaNL, viaIoctl func() error) {
		var err error
		if viaNL != nil {
			err = viaNL()
			if err != nil && notSupported(err) && viaIoctl != nil {
				err = viaIoctl()
			}
		} else {
			err = viaIoctl()
		}
		if err != nil {
			a.Unsupported[name] = reason(err, who)
		}
	}
	var nlf, iof func() error
	nlOr := func(f func() error) func() error {
		if k.nl == nil {
			return nil
		}
		return f
	}
	nlf = nlOr(func() (err error) { a.LinkModes, err = k.nl.linkModes(iface); return })
	iof = func() (err error) { a.LinkModes, err = k.io.linkModes(iface); return }
	part("link_modes", nlf, iof)
	nlf = nlOr(func() (err error) { a.Channels, err = k.nl.channels(iface); return })
	iof = func() (err error) { a.Channels, err = k.io.channels(iface); return }
	part("channels", nlf, iof)
	nlf = nlOr(func() (err error) { a.Rings, err = k.nl.rings(iface); return })
	iof = func() (err error) { a.Rings, err = k.io.rings(iface); return }
	part("rings", nlf, iof)
	nlf = nlOr(func() (err error) { a.Coalesce, err = k.nl.coalesce(iface); return })
	iof = func() (err error) { a.Coalesce, err = k.io.coalesce(iface); return }
	part("coalesce", nlf, iof)
	nlf = nlOr(func() (err error) { a.Pause, err = k.nl.pause(iface); return })
	iof = func() (err error) { a.Pause, err = k.io.pause(iface); return }
	part("pause", nlf, iof)
	nlf = nlOr(func() (err error) { a.Features, err = k.nl.features(iface); return })
	iof = func() (err error) { a.Features, err = k.io.features(iface); return }
	part("features", nlf, iof)
	part("driver_stats", nil, func() (err error) { a.DriverStats, err = k.io.stats(iface); return })
	part("perm_mac", nil, func() (err error) { a.PermMAC, err = k.io.permAddr(iface); return })
	if len(a.Unsupported) == 0 {
		a.Unsupported = nil
	}
	return a, nil
}

// DriverStats reads iface's driver counters alone (DriverStatsReader), through the
// ioctl as Ethtool does.
func (k *liveKernel) DriverStats(iface string) (Counters, error) { return k.io.stats(iface) }

// LinkModes reads iface's link settings alone (LinkModesReader): netlink where the
// kernel has it, the ioctl where it does not know the message.
func (k *liveKernel) LinkModes(iface string) (*LinkModes, error) {
	var lm *LinkModes
	var err error = unix.EOPNOTSUPP // no netlink: the ioctl
	if k.nl != nil {
		lm, err = k.nl.linkModes(iface)
	}
	if err != nil && notSupported(err) {
		lm, err = k.io.linkModes(iface)
	}
	if err != nil {
		return nil, fmt.Errorf("interface %q: link settings: %w", iface, err)
	}
	return lm, nil
}

// reason words why a part is missing, as show prints it: "not supported by macb".
func reason(err error, driver string) string {
	if notSupported(err) {
		if driver == "" {
			return "not supported by this interface"
		}
		return "not supported by " + driver
	}
	return err.Error()
}

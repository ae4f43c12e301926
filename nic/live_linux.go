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

// Links lists interfaces through vishvananda/netlink and adds what its LinkAttrs lacks
// (IFLA_MIN_MTU, IFLA_MAX_MTU, IFLA_PROMISCUITY, the whole IFLA_STATS64) from one raw
// RTM_GETLINK dump.
func (k *liveKernel) Links() ([]LinkAnswer, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	extra, err := linkExtras()
	if err != nil {
		return nil, err
	}
	out := make([]LinkAnswer, 0, len(links))
	for _, l := range links {
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
		}
		if len(a.PermHWAddr) > 0 {
			la.PermMAC = a.PermHWAddr.String()
		}
		if t := l.Type(); t != "device" {
			la.Kind = t
		}
		if x, ok := extra[a.Index]; ok {
			la.MinMTU, la.MaxMTU, la.Promiscuity = x.minMTU, x.maxMTU, x.promiscuity
		}
		if x, ok := extra[a.Index]; ok && x.stats != nil {
			la.Stats = *x.stats
		}
		out = append(out, la)
	}
	return out, nil
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

func linkExtras() (map[int]linkExtra, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink link dump: %w", err)
	}
	out := make(map[int]linkExtra, len(msgs))
	for _, m := range msgs {
		if len(m) < unix.SizeofIfInfomsg {
			continue
		}
		ifi := nl.DeserializeIfInfomsg(m)
		attrs, err := nl.ParseRouteAttr(m[unix.SizeofIfInfomsg:])
		if err != nil {
			return nil, fmt.Errorf("rtnetlink link dump: %w", err)
		}
		var x linkExtra
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
		out[int(ifi.Index)] = x
	}
	return out, nil
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

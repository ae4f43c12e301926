package nic

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	safchain "github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// ioctlEthtool is the SIOCETHTOOL path (include/uapi/linux/ethtool.h), for kernels without
// ethtool netlink (PetaLinux 2020 = 5.4) and for messages a netlink kernel lacks.
//
// safchain/ethtool serves the fixed-size requests (drvinfo, rings, channels, coalesce, pause,
// permanent address). String sets, statistics, features and link settings are written here:
// safchain returns those as Go maps, which lose the driver's order that ethtool -S and -k
// print, and its link-settings call is the legacy ETHTOOL_GSET.
type ioctlEthtool struct {
	sc *safchain.Ethtool
	fd int
}

func openIoctl() (*ioctlEthtool, error) {
	sc, err := safchain.NewEthtool()
	if err != nil {
		return nil, fmt.Errorf("open ethtool ioctl socket: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		// ethtool does the same: a kernel without IPv4 still has AF_UNIX.
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	}
	if err != nil {
		sc.Close()
		return nil, fmt.Errorf("open ethtool ioctl socket: %w", err)
	}
	return &ioctlEthtool{sc: sc, fd: fd}, nil
}

func (e *ioctlEthtool) Close() error {
	e.sc.Close()
	return unix.Close(e.fd)
}

// ifreq is struct ifreq with ifr_data; the padding makes it as large as the kernel's
// (40 bytes on 64-bit, 32 on 32-bit), which it copies in whole.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24]byte
}

// ioctl runs SIOCETHTOOL with buf as the ethtool command block.
func (e *ioctlEthtool) ioctl(iface string, buf []byte) error {
	if len(iface) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q is longer than %d bytes", iface, unix.IFNAMSIZ-1)
	}
	var ifr ifreq
	copy(ifr.name[:], iface)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(e.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}

var ne = binary.NativeEndian

// ssetLen asks ETHTOOL_GSSET_INFO how many strings set id has.
func (e *ioctlEthtool) ssetLen(iface string, id uint32) (int, error) {
	// struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[]; }
	buf := make([]byte, 16+4)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GSSET_INFO)
	ne.PutUint64(buf[8:], 1<<id)
	if err := e.ioctl(iface, buf); err != nil {
		return 0, err
	}
	if ne.Uint64(buf[8:])&(1<<id) == 0 {
		return 0, unix.EOPNOTSUPP
	}
	n := int(ne.Uint32(buf[16:]))
	if n > 1<<16 {
		return 0, fmt.Errorf("string set %d: implausible length %d", id, n)
	}
	return n, nil
}

// strings reads string set id (ETHTOOL_GSTRINGS), n strings of ETH_GSTRING_LEN bytes.
func (e *ioctlEthtool) strings(iface string, id uint32, n int) ([]string, error) {
	// struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
	buf := make([]byte, 12+n*ethGStringLen+1)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GSTRINGS)
	ne.PutUint32(buf[4:], id)
	ne.PutUint32(buf[8:], uint32(n))
	if err := e.ioctl(iface, buf); err != nil {
		return nil, err
	}
	if got := int(ne.Uint32(buf[8:])); got < n {
		n = got
	}
	out := make([]string, n)
	for i := range out {
		s := buf[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		for j, c := range s {
			if c == 0 {
				s = s[:j]
				break
			}
		}
		out[i] = string(s)
	}
	return out, nil
}

// stats reads the driver's counters in its order (ethtool -S).
func (e *ioctlEthtool) stats(iface string) (Counters, error) {
	n, err := e.ssetLen(iface, ethSSStats)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return Counters{}, nil
	}
	names, err := e.strings(iface, ethSSStats, n)
	if err != nil {
		return nil, err
	}
	// struct ethtool_stats { u32 cmd; u32 n_stats; u64 data[]; }
	buf := make([]byte, 8+n*8)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GSTATS)
	ne.PutUint32(buf[4:], uint32(n))
	if err := e.ioctl(iface, buf); err != nil {
		return nil, err
	}
	out := make(Counters, 0, len(names))
	for i, name := range names {
		out = append(out, Counter{Name: name, Value: ne.Uint64(buf[8+i*8:])})
	}
	return out, nil
}

// features reads ETHTOOL_GFEATURES with the names of ETH_SS_FEATURES, in bit order.
func (e *ioctlEthtool) features(iface string) ([]RawFeature, error) {
	n, err := e.ssetLen(iface, ethSSFeatures)
	if err != nil {
		return nil, err
	}
	names, err := e.strings(iface, ethSSFeatures, n)
	if err != nil {
		return nil, err
	}
	words := (len(names) + 31) / 32
	// struct ethtool_gfeatures { u32 cmd; u32 size; struct { u32 available, requested,
	// active, never_changed; } features[]; }
	buf := make([]byte, 8+words*16)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GFEATURES)
	ne.PutUint32(buf[4:], uint32(words))
	if err := e.ioctl(iface, buf); err != nil {
		return nil, err
	}
	out := make([]RawFeature, len(names))
	for i, name := range names {
		blk := buf[8+(i/32)*16:]
		bit := uint32(1) << (uint(i) % 32)
		out[i] = RawFeature{
			Name:     name,
			HW:       ne.Uint32(blk[0:])&bit != 0,
			Wanted:   ne.Uint32(blk[4:])&bit != 0,
			Active:   ne.Uint32(blk[8:])&bit != 0,
			NoChange: ne.Uint32(blk[12:])&bit != 0,
		}
	}
	return out, nil
}

// linkSettingsHeader is sizeof(struct ethtool_link_settings) before link_mode_masks.
const linkSettingsHeader = 48

// linkModes reads ETHTOOL_GLINKSETTINGS with its two-step handshake: the first call learns
// link_mode_masks_nwords (returned negated), the second reads the three masks.
func (e *ioctlEthtool) linkModes(iface string) (*LinkModes, error) {
	buf := make([]byte, linkSettingsHeader)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GLINKSETTINGS)
	if err := e.ioctl(iface, buf); err != nil {
		return nil, err
	}
	nwords := -int(int8(buf[15]))
	if nwords <= 0 || nwords > 127 {
		return nil, fmt.Errorf("ETHTOOL_GLINKSETTINGS: bad handshake (nwords %d)", nwords)
	}
	buf = make([]byte, linkSettingsHeader+3*nwords*4)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GLINKSETTINGS)
	buf[15] = byte(int8(nwords))
	if err := e.ioctl(iface, buf); err != nil {
		return nil, err
	}
	return decodeLinkSettings(buf, nwords), nil
}

// decodeLinkSettings decodes struct ethtool_link_settings: cmd u32, speed u32, duplex u8,
// port u8, phy_address u8, autoneg u8, mdio_support u8, eth_tp_mdix u8, eth_tp_mdix_ctrl u8,
// link_mode_masks_nwords s8, transceiver u8, master_slave_cfg u8, master_slave_state u8,
// rate_matching u8, reserved u32[7], then supported, advertising, lp_advertising masks.
func decodeLinkSettings(buf []byte, nwords int) *LinkModes {
	lm := &LinkModes{Supported: []string{}, Advertised: []string{}, Partner: []string{}}
	if s := ne.Uint32(buf[4:]); s != 0 && s != 0xffffffff {
		lm.SpeedMbps = int(s)
	}
	lm.Duplex = duplexName(buf[8])
	lm.Port = portName(buf[9])
	lm.Autoneg = buf[11] == autonegEnable
	mask := func(k int) []string {
		out := []string{}
		for w := 0; w < nwords; w++ {
			v := ne.Uint32(buf[linkSettingsHeader+(k*nwords+w)*4:])
			for b := 0; b < 32; b++ {
				if v&(1<<uint(b)) != 0 {
					out = append(out, linkModeName(w*32+b))
				}
			}
		}
		return out
	}
	lm.Supported, lm.Advertised, lm.Partner = mask(0), mask(1), mask(2)
	return lm
}

func (e *ioctlEthtool) driver(iface string) (*Driver, error) {
	d, err := e.sc.DriverInfo(iface)
	if err != nil {
		return nil, err
	}
	return &Driver{Name: d.Driver, Version: d.Version, Firmware: d.FwVersion, Bus: d.BusInfo}, nil
}

func (e *ioctlEthtool) rings(iface string) (*Rings, error) {
	r, err := e.sc.GetRing(iface)
	if err != nil {
		return nil, err
	}
	return &Rings{RX: r.RxPending, TX: r.TxPending, RXMax: r.RxMaxPending, TXMax: r.TxMaxPending,
		RXMini: r.RxMiniPending, RXMiniMax: r.RxMiniMaxPending, RXJumbo: r.RxJumboPending, RXJumboMax: r.RxJumboMaxPending}, nil
}

func (e *ioctlEthtool) channels(iface string) (*Channels, error) {
	c, err := e.sc.GetChannels(iface)
	if err != nil {
		return nil, err
	}
	return &Channels{RX: c.RxCount, TX: c.TxCount, Other: c.OtherCount, Combined: c.CombinedCount,
		RXMax: c.MaxRx, TXMax: c.MaxTx, OtherMax: c.MaxOther, CombinedMax: c.MaxCombined}, nil
}

func (e *ioctlEthtool) coalesce(iface string) (Coalesce, error) {
	c, err := e.sc.GetCoalesce(iface)
	if err != nil {
		return nil, err
	}
	return Coalesce{
		"rx-usecs": c.RxCoalesceUsecs, "rx-frames": c.RxMaxCoalescedFrames,
		"rx-usecs-irq": c.RxCoalesceUsecsIrq, "rx-frames-irq": c.RxMaxCoalescedFramesIrq,
		"tx-usecs": c.TxCoalesceUsecs, "tx-frames": c.TxMaxCoalescedFrames,
		"tx-usecs-irq": c.TxCoalesceUsecsIrq, "tx-frames-irq": c.TxMaxCoalescedFramesIrq,
		"stats-block-usecs": c.StatsBlockCoalesceUsecs,
		"adaptive-rx":       c.UseAdaptiveRxCoalesce, "adaptive-tx": c.UseAdaptiveTxCoalesce,
		"pkt-rate-low": c.PktRateLow, "rx-usecs-low": c.RxCoalesceUsecsLow,
		"rx-frame-low": c.RxMaxCoalescedFramesLow, "tx-usecs-low": c.TxCoalesceUsecsLow,
		"tx-frame-low": c.TxMaxCoalescedFramesLow, "pkt-rate-high": c.PktRateHigh,
		"rx-usecs-high": c.RxCoalesceUsecsHigh, "rx-frame-high": c.RxMaxCoalescedFramesHigh,
		"tx-usecs-high": c.TxCoalesceUsecsHigh, "tx-frame-high": c.TxMaxCoalescedFramesHigh,
		"sample-interval": c.RateSampleInterval,
	}, nil
}

func (e *ioctlEthtool) pause(iface string) (*Pause, error) {
	p, err := e.sc.GetPause(iface)
	if err != nil {
		return nil, err
	}
	return &Pause{Autoneg: p.Autoneg != 0, RX: p.RxPause != 0, TX: p.TxPause != 0}, nil
}

func (e *ioctlEthtool) permAddr(iface string) (string, error) {
	return e.sc.PermAddr(iface)
}

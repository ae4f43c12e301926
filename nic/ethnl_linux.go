package nic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ethnl speaks ethtool generic netlink (Documentation/networking/ethtool-netlink.rst).
//
// Written by hand on mdlayher/genetlink because mdlayher/ethtool, the library for this,
// covers only link info/modes/state, WoL, FEC and private flags, and it masks the OURS link
// mode bitset down to the advertised modes, dropping the supported set; rings, channels,
// coalescing, pause and features have no Go library over netlink.
type ethnl struct {
	c      *genetlink.Conn
	family genetlink.Family
}

// dialEthnl opens a generic netlink socket in the calling thread's network namespace and
// resolves the "ethtool" family; the error wraps os.ErrNotExist when the kernel has none
// (before 5.6, or CONFIG_ETHTOOL_NETLINK off).
func dialEthnl() (*ethnl, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("open generic netlink: %w", err)
	}
	f, err := ethtoolFamily.get(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("ethtool netlink family: %w", err)
	}
	return &ethnl{c: c, family: f}, nil
}

// ethtoolFamily is the kernel's answer for the "ethtool" family, asked once a process.
// A generic netlink family is the kernel's, not a network namespace's (ethtool's is
// built in and registered at boot, netns-aware), so its id and version hold for every
// socket the process opens; a validation opens about ten, and on the emulated ZC702's
// core the question took most of each one's 4-12 ms. A kernel without the family is
// remembered too (the ioctl path then asks nothing again); any other error is not.
var ethtoolFamily familyCache

type familyCache struct {
	mu     sync.Mutex
	known  bool
	family genetlink.Family
	err    error
}

func (fc *familyCache) get(c *genetlink.Conn) (genetlink.Family, error) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.known {
		return fc.family, fc.err
	}
	f, err := c.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	fc.known, fc.family, fc.err = true, f, err
	return f, err
}

func (e *ethnl) Close() error { return e.c.Close() }

// get sends one *_GET request for iface with the common request header (attribute 1 of
// every ethtool message) and returns the attributes of the reply.
func (e *ethnl) get(cmd uint8, iface string, flags uint32, extra func(*netlink.AttributeEncoder)) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_HEADER_UNSPEC+1, func(nae *netlink.AttributeEncoder) error {
		if iface != "" {
			nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
		}
		if flags != 0 {
			nae.Uint32(unix.ETHTOOL_A_HEADER_FLAGS, flags)
		}
		return nil
	})
	if extra != nil {
		extra(ae)
	}
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := e.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: e.family.Version},
		Data:   b,
	}, e.family.ID, netlink.Request)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("ethtool netlink: %d replies to one request", len(msgs))
	}
	return msgs[0].Data, nil
}

func (e *ethnl) rings(iface string) (*Rings, error) {
	b, err := e.get(unix.ETHTOOL_MSG_RINGS_GET, iface, 0, nil)
	if err != nil {
		return nil, err
	}
	return parseRings(b)
}

func (e *ethnl) channels(iface string) (*Channels, error) {
	b, err := e.get(unix.ETHTOOL_MSG_CHANNELS_GET, iface, 0, nil)
	if err != nil {
		return nil, err
	}
	return parseChannels(b)
}

func (e *ethnl) coalesce(iface string) (Coalesce, error) {
	b, err := e.get(unix.ETHTOOL_MSG_COALESCE_GET, iface, 0, nil)
	if err != nil {
		return nil, err
	}
	return parseCoalesce(b)
}

func (e *ethnl) pause(iface string) (*Pause, error) {
	b, err := e.get(unix.ETHTOOL_MSG_PAUSE_GET, iface, 0, nil)
	if err != nil {
		return nil, err
	}
	return parsePause(b)
}

// linkModes asks LINKMODES_GET with verbose bitsets, so the kernel names every mode, and
// LINKINFO_GET for the port.
func (e *ethnl) linkModes(iface string) (*LinkModes, error) {
	b, err := e.get(unix.ETHTOOL_MSG_LINKMODES_GET, iface, 0, nil)
	if err != nil {
		return nil, err
	}
	lm, err := parseLinkModes(b)
	if err != nil {
		return nil, err
	}
	if b, err := e.get(unix.ETHTOOL_MSG_LINKINFO_GET, iface, 0, nil); err == nil {
		lm.Port = parseLinkInfoPort(b)
	}
	return lm, nil
}

// features reads the feature names (string set ETH_SS_FEATURES) and the four compact
// feature bitsets.
func (e *ethnl) features(iface string) ([]RawFeature, error) {
	sb, err := e.get(unix.ETHTOOL_MSG_STRSET_GET, iface, 0, func(ae *netlink.AttributeEncoder) {
		ae.Nested(unix.ETHTOOL_A_STRSET_STRINGSETS, func(nae *netlink.AttributeEncoder) error {
			nae.Nested(unix.ETHTOOL_A_STRINGSETS_STRINGSET, func(sae *netlink.AttributeEncoder) error {
				sae.Uint32(unix.ETHTOOL_A_STRINGSET_ID, ethSSFeatures)
				return nil
			})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	names, err := parseStrset(sb, ethSSFeatures)
	if err != nil {
		return nil, err
	}
	fb, err := e.get(unix.ETHTOOL_MSG_FEATURES_GET, iface, unix.ETHTOOL_FLAG_COMPACT_BITSETS, nil)
	if err != nil {
		return nil, err
	}
	return parseFeatures(fb, names)
}

func parseRings(b []byte) (*Rings, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var r Rings
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_RINGS_RX_MAX:
			r.RXMax = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_RX_MINI_MAX:
			r.RXMiniMax = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_RX_JUMBO_MAX:
			r.RXJumboMax = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_TX_MAX:
			r.TXMax = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_RX:
			r.RX = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_RX_MINI:
			r.RXMini = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_RX_JUMBO:
			r.RXJumbo = ad.Uint32()
		case unix.ETHTOOL_A_RINGS_TX:
			r.TX = ad.Uint32()
		}
	}
	return &r, ad.Err()
}

func parseChannels(b []byte) (*Channels, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var c Channels
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_CHANNELS_RX_MAX:
			c.RXMax = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_TX_MAX:
			c.TXMax = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_OTHER_MAX:
			c.OtherMax = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_COMBINED_MAX:
			c.CombinedMax = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_RX_COUNT:
			c.RX = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_TX_COUNT:
			c.TX = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_OTHER_COUNT:
			c.Other = ad.Uint32()
		case unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT:
			c.Combined = ad.Uint32()
		}
	}
	return &c, ad.Err()
}

// coalesceAttrs names the ETHTOOL_A_COALESCE_* attributes as ethtool -c does; the bool ones
// are u8 on the wire.
var coalesceAttrs = map[uint16]struct {
	name string
	u8   bool
}{
	unix.ETHTOOL_A_COALESCE_RX_USECS:             {"rx-usecs", false},
	unix.ETHTOOL_A_COALESCE_RX_MAX_FRAMES:        {"rx-frames", false},
	unix.ETHTOOL_A_COALESCE_RX_USECS_IRQ:         {"rx-usecs-irq", false},
	unix.ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ:    {"rx-frames-irq", false},
	unix.ETHTOOL_A_COALESCE_TX_USECS:             {"tx-usecs", false},
	unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES:        {"tx-frames", false},
	unix.ETHTOOL_A_COALESCE_TX_USECS_IRQ:         {"tx-usecs-irq", false},
	unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ:    {"tx-frames-irq", false},
	unix.ETHTOOL_A_COALESCE_STATS_BLOCK_USECS:    {"stats-block-usecs", false},
	unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX:      {"adaptive-rx", true},
	unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX:      {"adaptive-tx", true},
	unix.ETHTOOL_A_COALESCE_PKT_RATE_LOW:         {"pkt-rate-low", false},
	unix.ETHTOOL_A_COALESCE_RX_USECS_LOW:         {"rx-usecs-low", false},
	unix.ETHTOOL_A_COALESCE_RX_MAX_FRAMES_LOW:    {"rx-frame-low", false},
	unix.ETHTOOL_A_COALESCE_TX_USECS_LOW:         {"tx-usecs-low", false},
	unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES_LOW:    {"tx-frame-low", false},
	unix.ETHTOOL_A_COALESCE_PKT_RATE_HIGH:        {"pkt-rate-high", false},
	unix.ETHTOOL_A_COALESCE_RX_USECS_HIGH:        {"rx-usecs-high", false},
	unix.ETHTOOL_A_COALESCE_RX_MAX_FRAMES_HIGH:   {"rx-frame-high", false},
	unix.ETHTOOL_A_COALESCE_TX_USECS_HIGH:        {"tx-usecs-high", false},
	unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES_HIGH:   {"tx-frame-high", false},
	unix.ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL: {"sample-interval", false},
	unix.ETHTOOL_A_COALESCE_USE_CQE_MODE_TX:      {"cqe-mode-tx", true},
	unix.ETHTOOL_A_COALESCE_USE_CQE_MODE_RX:      {"cqe-mode-rx", true},
}

func parseCoalesce(b []byte) (Coalesce, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	c := Coalesce{}
	for ad.Next() {
		a, ok := coalesceAttrs[ad.Type()]
		switch {
		case !ok:
		case a.u8:
			c[a.name] = uint32(ad.Uint8())
		default:
			c[a.name] = ad.Uint32()
		}
	}
	return c, ad.Err()
}

func parsePause(b []byte) (*Pause, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var p Pause
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_PAUSE_AUTONEG:
			p.Autoneg = ad.Uint8() != 0
		case unix.ETHTOOL_A_PAUSE_RX:
			p.RX = ad.Uint8() != 0
		case unix.ETHTOOL_A_PAUSE_TX:
			p.TX = ad.Uint8() != 0
		}
	}
	return &p, ad.Err()
}

// verboseBit is one bit of a bit-by-bit (non-compact) ethtool bitset.
type verboseBit struct {
	index int
	name  string
	value bool
}

// parseVerboseBitset decodes a bit-by-bit bitset. With a mask, the listed bits are the mask
// and value says which are set; without one (NOMASK), the listed bits are the set ones.
func parseVerboseBitset(ad *netlink.AttributeDecoder) (bits []verboseBit, nomask bool) {
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_NOMASK:
			nomask = true
		case unix.ETHTOOL_A_BITSET_BITS:
			ad.Nested(func(bad *netlink.AttributeDecoder) error {
				for bad.Next() {
					if bad.Type() != unix.ETHTOOL_A_BITSET_BITS_BIT {
						continue
					}
					bad.Nested(func(bd *netlink.AttributeDecoder) error {
						var vb verboseBit
						for bd.Next() {
							switch bd.Type() {
							case unix.ETHTOOL_A_BITSET_BIT_INDEX:
								vb.index = int(bd.Uint32())
							case unix.ETHTOOL_A_BITSET_BIT_NAME:
								vb.name = bd.String()
							case unix.ETHTOOL_A_BITSET_BIT_VALUE:
								vb.value = true
							}
						}
						bits = append(bits, vb)
						return nil
					})
				}
				return nil
			})
		}
	}
	if nomask {
		for i := range bits {
			bits[i].value = true
		}
	}
	sort.Slice(bits, func(i, j int) bool { return bits[i].index < bits[j].index })
	return bits, nomask
}

func parseLinkModes(b []byte) (*LinkModes, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	lm := &LinkModes{Supported: []string{}, Advertised: []string{}, Partner: []string{}}
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_LINKMODES_AUTONEG:
			lm.Autoneg = ad.Uint8() == autonegEnable
		case unix.ETHTOOL_A_LINKMODES_SPEED:
			if s := ad.Uint32(); s != 0 && s != 0xffffffff {
				lm.SpeedMbps = int(s)
			}
		case unix.ETHTOOL_A_LINKMODES_DUPLEX:
			lm.Duplex = duplexName(ad.Uint8())
		case unix.ETHTOOL_A_LINKMODES_OURS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				bits, nomask := parseVerboseBitset(nad)
				for _, bt := range bits {
					if !nomask {
						lm.Supported = append(lm.Supported, bt.name)
					}
					if bt.value {
						lm.Advertised = append(lm.Advertised, bt.name)
					}
				}
				return nil
			})
		case unix.ETHTOOL_A_LINKMODES_PEER:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				bits, _ := parseVerboseBitset(nad)
				for _, bt := range bits {
					if bt.value {
						lm.Partner = append(lm.Partner, bt.name)
					}
				}
				return nil
			})
		}
	}
	return lm, ad.Err()
}

func duplexName(d uint8) string {
	switch d {
	case duplexHalf:
		return "half"
	case duplexFull:
		return "full"
	}
	return ""
}

// portName names PORT_* (include/uapi/linux/ethtool.h) as ethtool prints it.
func portName(p uint8) string {
	switch p {
	case 0x00:
		return "Twisted Pair"
	case 0x01:
		return "AUI"
	case 0x02:
		return "BNC"
	case 0x03:
		return "MII"
	case 0x04:
		return "FIBRE"
	case 0x05:
		return "Direct Attach Copper"
	case 0xef:
		return "None"
	}
	return "Other"
}

func parseLinkInfoPort(b []byte) string {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return ""
	}
	for ad.Next() {
		if ad.Type() == unix.ETHTOOL_A_LINKINFO_PORT {
			return portName(ad.Uint8())
		}
	}
	return ""
}

// parseStrset returns the strings of string set id, indexed by their index.
func parseStrset(b []byte, id uint32) ([]string, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var out []string
	found := false
	for ad.Next() {
		if ad.Type() != unix.ETHTOOL_A_STRSET_STRINGSETS {
			continue
		}
		ad.Nested(func(sad *netlink.AttributeDecoder) error {
			for sad.Next() {
				if sad.Type() != unix.ETHTOOL_A_STRINGSETS_STRINGSET {
					continue
				}
				sad.Nested(func(d *netlink.AttributeDecoder) error {
					var setID, count uint32
					strs := map[uint32]string{}
					for d.Next() {
						switch d.Type() {
						case unix.ETHTOOL_A_STRINGSET_ID:
							setID = d.Uint32()
						case unix.ETHTOOL_A_STRINGSET_COUNT:
							count = d.Uint32()
						case unix.ETHTOOL_A_STRINGSET_STRINGS:
							d.Nested(func(ssd *netlink.AttributeDecoder) error {
								for ssd.Next() {
									ssd.Nested(func(s *netlink.AttributeDecoder) error {
										var idx uint32
										var val string
										for s.Next() {
											switch s.Type() {
											case unix.ETHTOOL_A_STRING_INDEX:
												idx = s.Uint32()
											case unix.ETHTOOL_A_STRING_VALUE:
												val = s.String()
											}
										}
										strs[idx] = val
										return nil
									})
								}
								return nil
							})
						}
					}
					if setID != id {
						return nil
					}
					if count > 1<<16 {
						return fmt.Errorf("string set %d: implausible count %d", id, count)
					}
					found = true
					out = make([]string, count)
					for i, s := range strs {
						if i < count {
							out[i] = s
						}
					}
					return nil
				})
			}
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("ethtool netlink: no string set %d in reply", id)
	}
	return out, nil
}

// compactBitset decodes a compact bitset (SIZE, VALUE, MASK as u32 arrays in host order).
func compactBitset(ad *netlink.AttributeDecoder) []uint32 {
	var size uint32
	var value []uint32
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_SIZE:
			size = ad.Uint32()
		case unix.ETHTOOL_A_BITSET_VALUE:
			raw := ad.Bytes()
			value = make([]uint32, len(raw)/4)
			for i := range value {
				value[i] = binary.NativeEndian.Uint32(raw[i*4:])
			}
		}
	}
	if need := int(size+31) / 32; len(value) < need && need < 1<<12 {
		value = append(value, make([]uint32, need-len(value))...)
	}
	return value
}

func bitOn(words []uint32, i int) bool {
	return i/32 < len(words) && words[i/32]&(1<<(uint(i)%32)) != 0
}

func parseFeatures(b []byte, names []string) ([]RawFeature, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var hw, wanted, active, nochange []uint32
	for ad.Next() {
		var dst *[]uint32
		switch ad.Type() {
		case unix.ETHTOOL_A_FEATURES_HW:
			dst = &hw
		case unix.ETHTOOL_A_FEATURES_WANTED:
			dst = &wanted
		case unix.ETHTOOL_A_FEATURES_ACTIVE:
			dst = &active
		case unix.ETHTOOL_A_FEATURES_NOCHANGE:
			dst = &nochange
		default:
			continue
		}
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			*dst = compactBitset(nad)
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if hw == nil || active == nil {
		return nil, errors.New("ethtool netlink: features reply without hw/active bitsets")
	}
	out := make([]RawFeature, len(names))
	for i, n := range names {
		out[i] = RawFeature{Name: n, HW: bitOn(hw, i), Wanted: bitOn(wanted, i), Active: bitOn(active, i), NoChange: bitOn(nochange, i)}
	}
	return out, nil
}

// setAutoneg turns autonegotiation on and leaves the advertised modes as they are:
// ETHTOOL_MSG_LINKMODES_SET with AUTONEG 1 alone.
func (e *ethnl) setAutoneg(iface string) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_LINKMODES_HEADER, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
		return nil
	})
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_AUTONEG, autonegEnable)
	return e.linkModesSet(ae, iface+": autoneg on")
}

// linkModesSet sends one acknowledged ETHTOOL_MSG_LINKMODES_SET; what says what was
// asked, for the error.
func (e *ethnl) linkModesSet(ae *netlink.AttributeEncoder, what string) error {
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = e.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: unix.ETHTOOL_MSG_LINKMODES_SET, Version: e.family.Version},
		Data:   b,
	}, e.family.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// setForced turns autonegotiation off and forces the link's speed and duplex:
// ETHTOOL_MSG_LINKMODES_SET with AUTONEG 0, SPEED and DUPLEX; phylib writes the forced
// control register (its driver's config_aneg) before it answers.
func (e *ethnl) setForced(iface string, speedMbps int, full bool) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_LINKMODES_HEADER, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
		return nil
	})
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_AUTONEG, 0)
	ae.Uint32(unix.ETHTOOL_A_LINKMODES_SPEED, uint32(speedMbps))
	duplex := uint8(0) // DUPLEX_HALF (include/uapi/linux/ethtool.h)
	if full {
		duplex = 1 // DUPLEX_FULL
	}
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_DUPLEX, duplex)
	return e.linkModesSet(ae, fmt.Sprintf("%s: autoneg off, speed %d, duplex %s", iface, speedMbps, map[bool]string{true: "full", false: "half"}[full]))
}

// setAdvertised asks the PHY to advertise exactly modes (ethtool link-mode names such as
// 100baseT/Full) with autonegotiation on: ETHTOOL_MSG_LINKMODES_SET with a verbose
// bitset marked NOMASK, which lists the bits that are set and clears every other
// (Documentation/networking/ethtool-netlink.rst, "Bit sets").
func (e *ethnl) setAdvertised(iface string, modes []string) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_LINKMODES_HEADER, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
		return nil
	})
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_AUTONEG, autonegEnable)
	ae.Nested(unix.ETHTOOL_A_LINKMODES_OURS, func(bae *netlink.AttributeEncoder) error {
		bae.Flag(unix.ETHTOOL_A_BITSET_NOMASK, true)
		bae.Nested(unix.ETHTOOL_A_BITSET_BITS, func(bits *netlink.AttributeEncoder) error {
			for _, m := range modes {
				bits.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, func(bit *netlink.AttributeEncoder) error {
					bit.String(unix.ETHTOOL_A_BITSET_BIT_NAME, m)
					return nil
				})
			}
			return nil
		})
		return nil
	})
	return e.linkModesSet(ae, fmt.Sprintf("%s: advertise %v", iface, modes))
}

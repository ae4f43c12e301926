package frames

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a requested sending rate. Exactly one field is set, positive and finite.
type Rate struct {
	Percent  float64 // of line rate
	WireBits float64 // bit/s on the wire (frame, preamble and inter-frame gap, as line rate)
	Bytes    float64 // bytes/s of frames (sizes with FCS), as trafgen's byte rates count
	PPS      float64 // frames per second
}

// rateUnits are the suffixes ParseRate takes, longest first within each family, with
// what one of them is. Bits and bytes are told apart by case, as trafgen and pktgen do:
// 10Mbit, 10Mbps and pktgen's bare 10M are bit/s; 10MB, 10MBps and 10MiB are bytes/s.
var rateUnits = []struct {
	suffix string
	mult   float64
	kind   byte // 'b' bits, 'B' bytes, 'p' frames
}{
	{"Gpps", 1e9, 'p'}, {"Mpps", 1e6, 'p'}, {"kpps", 1e3, 'p'}, {"Kpps", 1e3, 'p'}, {"pps", 1, 'p'},
	{"Gbit/s", 1e9, 'b'}, {"Mbit/s", 1e6, 'b'}, {"kbit/s", 1e3, 'b'}, {"Kbit/s", 1e3, 'b'}, {"bit/s", 1, 'b'},
	{"Gbit", 1e9, 'b'}, {"Mbit", 1e6, 'b'}, {"kbit", 1e3, 'b'}, {"Kbit", 1e3, 'b'}, {"bit", 1, 'b'},
	{"Gbps", 1e9, 'b'}, {"Mbps", 1e6, 'b'}, {"kbps", 1e3, 'b'}, {"Kbps", 1e3, 'b'}, {"bps", 1, 'b'},
	{"GiB", 1 << 30, 'B'}, {"MiB", 1 << 20, 'B'}, {"KiB", 1 << 10, 'B'},
	{"GBps", 1e9, 'B'}, {"MBps", 1e6, 'B'}, {"kBps", 1e3, 'B'}, {"KBps", 1e3, 'B'}, {"Bps", 1, 'B'},
	{"GB", 1e9, 'B'}, {"MB", 1e6, 'B'}, {"kB", 1e3, 'B'}, {"KB", 1e3, 'B'}, {"B", 1, 'B'},
	{"G", 1e9, 'b'}, {"M", 1e6, 'b'}, {"k", 1e3, 'b'}, {"K", 1e3, 'b'},
}

// ParseRate reads a rate: a percentage of line rate (100%, 95.5%); a frame rate (200kpps,
// 1.2Mpps, 1000pps); a bit rate (950Mbit, 950Mbit/s, 950Mbps, or pktgen's 950M); a byte
// rate as trafgen writes it (10MB, 10MBps, 10MiB, 1500B). The number is positive and
// finite; a percentage is at most 100.
func ParseRate(s string) (Rate, error) {
	in := strings.TrimSpace(s)
	bad := fmt.Errorf("rate %q: want a percentage of line rate (100%%), a bit rate (950Mbit, 950M), a byte rate (10MBps, 10MiB) or a frame rate (200kpps)", s)
	num := func(t string) (float64, error) {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) || strings.ContainsAny(t, "xXpP_") {
			return 0, bad
		}
		return v, nil
	}
	if t, ok := strings.CutSuffix(in, "%"); ok {
		v, err := num(t)
		if err != nil {
			return Rate{}, err
		}
		if v > 100 {
			return Rate{}, fmt.Errorf("rate %q is above line rate: want at most 100%%", s)
		}
		return Rate{Percent: v}, nil
	}
	for _, u := range rateUnits {
		t, ok := strings.CutSuffix(in, u.suffix)
		if !ok {
			continue
		}
		v, err := num(strings.TrimSpace(t))
		if err != nil {
			return Rate{}, err
		}
		v *= u.mult
		if math.IsInf(v, 0) {
			return Rate{}, bad
		}
		switch u.kind {
		case 'p':
			return Rate{PPS: v}, nil
		case 'B':
			return Rate{Bytes: v}, nil
		}
		return Rate{WireBits: v}, nil
	}
	return Rate{}, bad
}

// LinePPS is the line rate in frames per second for frames of avgSize bytes (with FCS)
// on a link of linkMbps.
func LinePPS(linkMbps int, avgSize float64) float64 {
	return float64(linkMbps) * 1e6 / ((avgSize + WireOverhead) * 8)
}

// FPS turns a rate into frames per second for the link and frame size, and refuses one
// above line rate.
func (r Rate) FPS(linkMbps int, avgSize float64) (float64, error) {
	line := LinePPS(linkMbps, avgSize)
	var fps float64
	switch {
	case r.Percent > 0:
		fps = line * r.Percent / 100
	case r.WireBits > 0:
		fps = r.WireBits / ((avgSize + WireOverhead) * 8)
	case r.Bytes > 0:
		fps = r.Bytes / avgSize
	default:
		fps = r.PPS
	}
	if fps > line*1.0000001 {
		return 0, fmt.Errorf("rate %s is above line rate: %.0f frames/s of %.0f bytes on a %d Mbit/s link (%.0f%%)", r, fps, avgSize, linkMbps, 100*fps/line)
	}
	return fps, nil
}

func (r Rate) String() string {
	switch {
	case r.Percent > 0:
		return strconv.FormatFloat(r.Percent, 'g', -1, 64) + "%"
	case r.WireBits > 0:
		return strconv.FormatFloat(r.WireBits/1e6, 'g', -1, 64) + "Mbit"
	case r.Bytes > 0:
		return strconv.FormatFloat(r.Bytes/1e6, 'g', -1, 64) + "MBps"
	}
	return strconv.FormatFloat(r.PPS, 'g', -1, 64) + "pps"
}

// ParseSizes reads "64", "64,128,1518" or "imix".
func ParseSizes(s string) ([]int, error) {
	if strings.EqualFold(strings.TrimSpace(s), "imix") {
		return append([]int{}, IMIX...), nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("frame size %q: want a number of bytes (64..%d, with FCS) or imix", f, MaxSize)
		}
		out = append(out, v)
	}
	return out, nil
}

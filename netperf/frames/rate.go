package frames

import (
	"fmt"
	"strconv"
	"strings"
)

// Rate is a requested sending rate. Exactly one field is set.
type Rate struct {
	Percent  float64 // of line rate
	WireBits float64 // bit/s on the wire (frame, preamble and inter-frame gap, as line rate)
	PPS      float64 // frames per second
}

// ParseRate reads "100%", "95.5%", "950Mbit" (also kbit, Gbit, bit, and "M"/"G" with
// "bps"), "200kpps", "1.2Mpps", "1000pps".
func ParseRate(s string) (Rate, error) {
	in := strings.TrimSpace(s)
	bad := fmt.Errorf("rate %q: want a percentage of line rate (100%%), a bit rate (950Mbit) or a frame rate (200kpps)", s)
	l := strings.ToLower(in)
	num := func(t string) (float64, error) {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || v <= 0 {
			return 0, bad
		}
		return v, nil
	}
	mult := func(t string) (string, float64) {
		switch {
		case strings.HasSuffix(t, "k"):
			return t[:len(t)-1], 1e3
		case strings.HasSuffix(t, "m"):
			return t[:len(t)-1], 1e6
		case strings.HasSuffix(t, "g"):
			return t[:len(t)-1], 1e9
		}
		return t, 1
	}
	switch {
	case strings.HasSuffix(l, "%"):
		v, err := num(l[:len(l)-1])
		if err != nil {
			return Rate{}, err
		}
		return Rate{Percent: v}, nil
	case strings.HasSuffix(l, "pps"):
		t, m := mult(l[:len(l)-3])
		v, err := num(t)
		if err != nil {
			return Rate{}, err
		}
		return Rate{PPS: v * m}, nil
	}
	unit := false
	for _, suf := range []string{"bit/s", "bps", "bit"} {
		if strings.HasSuffix(l, suf) {
			l, unit = l[:len(l)-len(suf)], true
			break
		}
	}
	if !unit {
		return Rate{}, bad
	}
	t, m := mult(l)
	v, err := num(t)
	if err != nil {
		return Rate{}, err
	}
	return Rate{WireBits: v * m}, nil
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

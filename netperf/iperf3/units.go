package iperf3

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads iperf3's sizes and rates: a number with an optional K, M, G or T
// suffix, powers of base (1024 for sizes, as unit_atoi; 1000 for bit rates).
func ParseSize(s string, base float64) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty value")
	}
	orig, mult := s, 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = base
	case 'm', 'M':
		mult = base * base
	case 'g', 'G':
		mult = base * base * base
	case 't', 'T':
		mult = base * base * base * base
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (a number with an optional K, M, G or T: 128K, 100M, 1.5G)", orig)
	}
	return uint64(v * mult), nil
}

// tcpStats is what iperf3 reports of a TCP stream from TCP_INFO: retransmits, the
// congestion and send windows (bytes), RTT and its variance (µs) and the path MTU.
type tcpStats struct {
	retrans      int64
	cwnd, sndWnd uint64
	rtt, rttvar  uint32
	pmtu         uint32
}

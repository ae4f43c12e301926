//go:build linux

package iperf3

import (
	"net"

	"golang.org/x/sys/unix"
)

// tcpInfo reads retransmits, congestion window (bytes) and RTT (µs) of a TCP stream.
func tcpInfo(c net.Conn) (retrans int64, cwnd uint64, rtt uint32, ok bool) {
	tc, isTCP := c.(*net.TCPConn)
	if !isTCP {
		return 0, 0, 0, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, 0, 0, false
	}
	var info *unix.TCPInfo
	raw.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if err != nil || info == nil {
		return 0, 0, 0, false
	}
	return int64(info.Total_retrans), uint64(info.Snd_cwnd) * uint64(info.Snd_mss), info.Rtt, true
}

func tcpRetrans(c net.Conn) int64 {
	r, _, _, _ := tcpInfo(c)
	return r
}

// congestion reads the congestion control algorithm of a TCP connection.
func congestion(c net.Conn) string {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return ""
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return ""
	}
	var s string
	raw.Control(func(fd uintptr) {
		s, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	return s
}

func setCongestion(fd int, name string) error {
	return unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
}

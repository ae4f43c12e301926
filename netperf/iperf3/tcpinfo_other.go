//go:build !linux

package iperf3

import (
	"errors"
	"net"
)

// tcp_info and TCP_CONGESTION are Linux's: elsewhere there are no retransmit counts.
func tcpInfo(c net.Conn) (tcpStats, bool) { return tcpStats{}, false }

func socketBufs(c net.Conn) (snd, rcv, mss int) { return 0, 0, 0 }

func tcpRetrans(c net.Conn) int64 { return 0 }

func congestion(c net.Conn) string { return "" }

func setCongestion(fd int, name string) error {
	return errors.New("choosing the congestion control needs Linux")
}

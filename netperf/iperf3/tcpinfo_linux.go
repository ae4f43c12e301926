//go:build linux

package iperf3

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// tcpInfo reads what iperf3 reports of a TCP stream from TCP_INFO.
func tcpInfo(c net.Conn) (tcpStats, bool) {
	tc, isTCP := c.(*net.TCPConn)
	if !isTCP {
		return tcpStats{}, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return tcpStats{}, false
	}
	var info *unix.TCPInfo
	raw.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if err != nil || info == nil {
		return tcpStats{}, false
	}
	// Kernels before 5.4 leave tcpi_snd_wnd out: it reads 0, as iperf3 reports it.
	return tcpStats{retrans: int64(info.Total_retrans), cwnd: uint64(info.Snd_cwnd) * uint64(info.Snd_mss), sndWnd: uint64(info.Snd_wnd),
		rtt: info.Rtt, rttvar: info.Rttvar, pmtu: info.Pmtu}, true
}

func tcpRetrans(c net.Conn) int64 {
	st, _ := tcpInfo(c)
	return st.retrans
}

// socketBufs reads a socket's send and receive buffer sizes (SO_SNDBUF, SO_RCVBUF) and,
// for TCP, its maximum segment size (TCP_MAXSEG); 0 where unknown.
func socketBufs(c net.Conn) (snd, rcv, mss int) {
	sc, ok := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return 0, 0, 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, 0, 0
	}
	raw.Control(func(fd uintptr) {
		snd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		rcv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		if _, tcp := c.(*net.TCPConn); tcp {
			mss, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
		}
	})
	return snd, rcv, mss
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

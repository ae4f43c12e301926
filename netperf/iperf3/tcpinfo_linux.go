//go:build linux

package iperf3

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

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

// bindDevice binds a socket to a network device (SO_BINDTODEVICE); "" leaves it.
func bindDevice(c syscall.RawConn, dev string) error {
	if dev == "" {
		return nil
	}
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, dev)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("bind to device %s: %w", dev, serr)
	}
	return nil
}

// linuxSockOpts applies the options only Linux has: the bind device, fair-queuing
// pacing, IPv4 DF on UDP, TCP's user timeout.
func linuxSockOpts(f int, p *Params, tcp bool) error {
	if p.Local.BindDev != "" {
		if e := unix.SetsockoptString(f, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, p.Local.BindDev); e != nil {
			return fmt.Errorf("bind to device %s: %w", p.Local.BindDev, e)
		}
	}
	if p.FQRate > 0 {
		// Bytes per second, as the kernel takes it; iperf3 gives bits.
		unix.SetsockoptUint64(f, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, p.FQRate/8)
	}
	if !tcp && p.DontFragment {
		unix.SetsockoptInt(f, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
	}
	if tcp && p.Local.SndTimeout > 0 {
		unix.SetsockoptInt(f, unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(p.Local.SndTimeout/time.Millisecond))
	}
	return nil
}

// zeroWriter sends a block with sendfile(2) from a memory file holding it, as iperf3's
// -Z does: the kernel takes the pages without a copy from user memory per write.
type zeroWriter struct {
	raw syscall.RawConn
	mem *os.File
	n   int
}

// zeroCopyWriter makes the memory file of block for conn.
func zeroCopyWriter(conn net.Conn, block []byte) (*zeroWriter, error) {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil, fmt.Errorf("-Z needs a TCP stream")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("iperf3-block", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	mem := os.NewFile(uintptr(fd), "iperf3-block")
	if _, err := mem.Write(block); err != nil {
		mem.Close()
		return nil, err
	}
	return &zeroWriter{raw: raw, mem: mem, n: len(block)}, nil
}

// Write sends the block (b is the same block, unread), waiting on the socket as a
// blocking write would.
func (z *zeroWriter) Write(b []byte) (int, error) {
	var n int
	var serr error
	err := z.raw.Write(func(fd uintptr) bool {
		off := int64(0)
		n, serr = unix.Sendfile(int(fd), int(z.mem.Fd()), &off, z.n)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if err != nil {
		return max(n, 0), err
	}
	if serr != nil {
		return max(n, 0), serr
	}
	return n, nil
}

// Close frees the memory file.
func (z *zeroWriter) Close() error { return z.mem.Close() }

// unameLine is uname -a's first fields, as iperf3 -V prints them.
func unameLine() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "Linux"
	}
	return strings.Join([]string{unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Nodename[:]),
		unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])}, " ")
}

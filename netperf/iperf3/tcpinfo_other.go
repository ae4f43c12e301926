//go:build !linux

package iperf3

import (
	"errors"
	"net"
	"runtime"
	"syscall"
)

// tcp_info and TCP_CONGESTION are Linux's: elsewhere there are no retransmit counts.
func tcpInfo(c net.Conn) (tcpStats, bool) { return tcpStats{}, false }

func socketBufs(c net.Conn) (snd, rcv, mss int) { return 0, 0, 0 }

func tcpRetrans(c net.Conn) int64 { return 0 }

func congestion(c net.Conn) string { return "" }

func setCongestion(fd int, name string) error {
	return errors.New("choosing the congestion control needs Linux")
}

func bindDevice(c syscall.RawConn, dev string) error {
	if dev == "" {
		return nil
	}
	return errors.New("binding to a device needs Linux")
}

func linuxSockOpts(f int, p *Params, tcp bool) error {
	if p.Local.BindDev != "" || p.FQRate > 0 || p.DontFragment || p.Local.SndTimeout > 0 {
		return errors.New("--bind-dev, --fq-rate, --dont-fragment and --snd-timeout need Linux")
	}
	return nil
}

type zeroWriter struct{}

func zeroCopyWriter(conn net.Conn, block []byte) (*zeroWriter, error) {
	return nil, errors.New("-Z needs Linux")
}

func (z *zeroWriter) Write(b []byte) (int, error) { return 0, errors.New("-Z needs Linux") }
func (z *zeroWriter) Close() error                { return nil }

func unameLine() string { return runtime.GOOS + " " + runtime.GOARCH }

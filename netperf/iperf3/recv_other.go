//go:build !linux

package iperf3

import (
	"errors"
	"net"
	"syscall"
)

// discardTCP needs Linux's MSG_TRUNC on TCP; elsewhere the data is read normally.
func discardTCP(c net.Conn, count func(int)) bool { return false }

// Raw reads on the data path are Linux's (rawio_linux.go); elsewhere the receiving
// streams read through their net.Conn, and rawRead is never reached.
func rawTCP(net.Conn) syscall.RawConn { return nil }

func rawRead(syscall.RawConn, []byte, int) (int, error) {
	return 0, errors.New("raw reads need Linux")
}

//go:build !linux

package iperf3

import "net"

// discardTCP needs Linux's MSG_TRUNC on TCP; elsewhere the data is read normally.
func discardTCP(c net.Conn, count func(int)) bool { return false }

// copyTCP's raw reads are Linux's (rawio_linux.go); elsewhere the stream reads through
// its net.Conn.
func copyTCP(c net.Conn, count func(int)) bool { return false }

// unread needs Linux's SIOCINQ; elsewhere settle waits for the count to stop moving.
func unread(c net.Conn) (int, bool) { return 0, false }

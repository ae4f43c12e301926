//go:build linux

package iperf3

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The receiving streams read with raw system calls: the socket is non-blocking (Go
// makes it so), so a call never waits, and the runtime need not be told of it. Told
// (conn.Read, unix.Recvfrom), it is: a call that copies 128 KiB takes longer than the
// scheduler's monitor tick, so the monitor hands the goroutine's processor to another
// thread while the copy runs, and with several streams on one core the threads take
// turns through futex wake-ups. Measured on a veth pair, the server pinned to one CPU,
// stock iperf3 3.12 -P 4 as the client, --copy: about 24 Gbit/s through conn.Read, 27
// with raw reads, 30 with raw reads and each stream yielding after a read (stock's own
// server: 39-46 in the same runs). The call is bounded by the buffer, so it cannot hold
// its processor long.

// rawTCP is conn's raw socket when conn is a TCP connection; nil otherwise (the caller
// then uses the conn as it is).
func rawTCP(conn net.Conn) syscall.RawConn {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// rawRead reads what the socket holds, up to len(buf), with one raw call of
// read(2) or, with flags MSG_TRUNC, recvfrom(2) (the kernel-side discard), waiting on
// the socket while it is empty. It returns 0 and nil at the peer's end of stream.
func rawRead(raw syscall.RawConn, buf []byte, flags int) (int, error) {
	var n int
	var rerr error
	err := raw.Read(func(fd uintptr) bool {
		for {
			var m uintptr
			var e syscall.Errno
			if flags == 0 {
				m, _, e = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			} else {
				m, _, e = unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(flags), 0, 0)
			}
			switch e {
			case 0:
				n = int(m)
				return true
			case unix.EINTR:
			case unix.EAGAIN:
				return false // wait until data comes
			default:
				rerr = e
				return true
			}
		}
	})
	if rerr != nil {
		return n, rerr
	}
	return n, err
}

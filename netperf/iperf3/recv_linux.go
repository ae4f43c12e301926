//go:build linux

package iperf3

import (
	"net"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// discardTCP reads a TCP stream to its end without copying the data out of the kernel:
// recv(2) with MSG_TRUNC on a TCP socket consumes the bytes and frees their buffers
// (tcp(7), since Linux 2.4). The receiving side never looks at the payload, so the copy
// iperf3 makes is pure cost; on a board's small cores it is most of the receiver's work.
// count is called with each non-empty read. ok is false when the connection is not a
// TCP socket this can drive; the caller then reads normally.
func discardTCP(c net.Conn, count func(int)) (ok bool) {
	raw := rawTCP(c)
	if raw == nil {
		return false
	}
	// The kernel never writes to the buffer with MSG_TRUNC; its length is how much one
	// call may consume. So every stream shares one: a -P 128 test holds 4 MiB, not
	// 4 MiB a stream (and nothing reads it, were a kernel ever to write).
	buf := discardBuf()
	for {
		n, err := rawRead(raw, buf, unix.MSG_TRUNC)
		if err != nil || n <= 0 {
			return true
		}
		count(n)
		runtime.Gosched() // the other streams' turn (rawio_linux.go)
	}
}

// discardBuf is the receive buffer all discarding streams share, made on first use.
var discardBuf = sync.OnceValue(func() []byte { return make([]byte, 4<<20) })

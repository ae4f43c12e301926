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
	readToEnd(newRawReader(raw, unix.MSG_TRUNC, discardBuf(), nil), count)
	return true
}

// readToEnd reads until the stream's end or an error, calling count with each
// non-empty read.
func readToEnd(r *rawReader, count func(int)) {
	for {
		n, err := r.read()
		if err != nil || n <= 0 {
			return
		}
		count(n)
		runtime.Gosched() // the other streams' turn, as iperf3's select loop takes them
	}
}

// copyTCP reads a TCP stream to its end into user memory, as iperf3 does (--copy), with
// raw system calls (rawio_linux.go). ok is false as for discardTCP.
//
// The memory is not the stream's own: each call takes a buffer from a stack and gives
// it back as the call returns, so a stream that waits holds none, and the buffers in use
// are at most one per processor (a raw call cannot be preempted) whatever the number of
// streams. That is what lets a call read up to 1 MiB where a stream's own buffer was
// 128 KiB (iperf3's block): fewer calls and fewer waits for the same bytes. Measured on
// a veth pair, the server pinned to one CPU and stock iperf3 3.12 -P 4 as the client
// under BBR, six interleaved runs each, median throughput against stock's server:
// 0.87x with 128 KiB a call, 0.90x with 1 MiB (README, Benchmarks).
func copyTCP(c net.Conn, count func(int)) (ok bool) {
	raw := rawTCP(c)
	if raw == nil {
		return false
	}
	readToEnd(newRawReader(raw, 0, nil, &copyBufs), count)
	return true
}

// copyBufs holds copyTCP's buffers.
var copyBufs = bufStack{size: 1 << 20, keep: 8}

// bufStack lends buffers of one size: the one given back last is lent first (the one
// most likely in a cache), and up to keep are kept for the next calls. Not sync.Pool:
// under the race detector a pool drops a quarter of what it is given, so the memory a
// test measures would not be the memory the tool uses.
type bufStack struct {
	size, keep int
	mu         sync.Mutex
	free       [][]byte
}

func (b *bufStack) get() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.free); n > 0 {
		buf := b.free[n-1]
		b.free = b.free[:n-1]
		return buf
	}
	return make([]byte, b.size)
}

func (b *bufStack) put(buf []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.free) < b.keep {
		b.free = append(b.free, buf)
	}
}

// discardBuf is the receive buffer all discarding streams share, made on first use.
var discardBuf = sync.OnceValue(func() []byte { return make([]byte, 4<<20) })

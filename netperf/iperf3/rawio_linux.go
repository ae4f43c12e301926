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
// server: 39-46 in the same runs). A call returns what the socket holds, at most its
// buffer (1 MiB for --copy, recv_linux.go), so it cannot hold its processor long.

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

// rawReader reads a socket with raw calls of read(2) or, with flags MSG_TRUNC,
// recvfrom(2) (the kernel-side discard), waiting on the socket while it is empty.
// The buffer is shared (the discard: the kernel never writes to it) or lent for each
// call.
type rawReader struct {
	raw    syscall.RawConn
	flags  int
	shared []byte
	bufs   *bufStack // when shared is nil
	n      int
	err    error
	f      func(fd uintptr) bool // r.once, made once: a closure made per read would be an allocation per read
}

func newRawReader(raw syscall.RawConn, flags int, shared []byte, bufs *bufStack) *rawReader {
	r := &rawReader{raw: raw, flags: flags, shared: shared, bufs: bufs}
	r.f = r.once
	return r
}

// read reads what the socket holds, up to a buffer's length, and returns how much;
// 0 and nil at the peer's end of stream.
func (r *rawReader) read() (int, error) {
	r.n, r.err = 0, nil
	err := r.raw.Read(r.f)
	if r.err != nil {
		return r.n, r.err
	}
	return r.n, err
}

// once is read's function for RawConn.Read: true when the call is done, false to wait
// until the socket is readable. The buffer is taken and given back around the system
// call, so a stream that waits holds none.
func (r *rawReader) once(fd uintptr) bool {
	buf := r.shared
	if buf == nil {
		buf = r.bufs.get()
		defer r.bufs.put(buf)
	}
	for {
		var m uintptr
		var e syscall.Errno
		if r.flags == 0 {
			m, _, e = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		} else {
			m, _, e = unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(r.flags), 0, 0)
		}
		switch e {
		case 0:
			r.n = int(m)
			return true
		case unix.EINTR:
		case unix.EAGAIN:
			return false // wait until data comes
		default:
			r.err = e
			return true
		}
	}
}

// unread is what conn's socket has received and the stream not yet read (SIOCINQ: a
// TCP socket's queued bytes, a UDP socket's next datagram's length), false where it
// cannot be asked.
func unread(conn net.Conn) (int, bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, ierr := 0, error(nil)
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}

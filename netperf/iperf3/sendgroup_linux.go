//go:build linux

package iperf3

import (
	"context"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// When the process has one processor (GOMAXPROCS 1: a client or server pinned to one
// CPU by taskset or -A, or a one-core board), a test's TCP senders share one goroutine
// that writes as iperf3 3.12's select loop does: a non-blocking write(2) of up to a
// block to each stream in turn, ten rounds, and a wait on all the streams' sockets
// only when none took anything. A goroutine per stream gains nothing on one processor
// and costs a thread hand-off whenever a write outlasts the scheduler's monitor tick
// (a 128 KiB write on a fast link does), plus a park and a wake-up each time a socket
// fills mid-block. Measured pinned on a veth pair (client CPU 0, stock 3.12 server on
// CPU 1, each end's receive work steered to its own CPU, -P 4, BBR), interleaved
// rounds: goroutine per stream 0.91x and 0.95x stock's client in medians, this loop
// 1.03x and 0.97x (README, Benchmarks). With more processors each stream keeps its
// own goroutine, so the streams spread over the cores as iperf3 3.16+'s threads do.

// groupRounds is how many rounds of writes the loop makes before it looks at the test's
// end again: iperf3's multisend.
const groupRounds = 10

// groupWait bounds one wait for a writable socket, so a test whose sockets all stay
// full still sees its end (a socket closed under poll(2) does not wake it).
const groupWait = 10 * time.Millisecond

// groupSenders is the test's TCP senders that share one goroutine, or nil when each
// runs its own: more than one processor, fewer than two such streams, or a paced (-b),
// file (-F) or zero-copy (-Z) test, whose streams the per-stream loop serves.
func (t *test) groupSenders() []*stream {
	p := t.p
	if runtime.GOMAXPROCS(0) != 1 || p.UDP || p.Bandwidth != 0 || p.Local.File != "" || p.Local.ZeroCopy {
		return nil
	}
	var g []*stream
	for _, s := range t.streams {
		if s.sender && rawTCP(s.conn) != nil {
			g = append(g, s)
		}
	}
	if len(g) < 2 {
		return nil
	}
	return g
}

// groupMember is one stream of the shared loop, with its raw socket and the result of
// its last write.
type groupMember struct {
	s   *stream
	raw syscall.RawConn
	fd  int32 // for poll(2) only; every write goes through raw, which knows a close
	buf []byte
	n   int
	err syscall.Errno
	f   func(fd uintptr) bool // m.write, made once, not a closure per write
}

// write is the member's function for RawConn.Write: one non-blocking write(2), never
// a wait (EAGAIN is the loop's to handle). A raw call: the runtime is not told, so a
// long copy keeps the one processor (rawio_linux.go says why that matters).
func (m *groupMember) write(fd uintptr) bool {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&m.buf[0])), uintptr(len(m.buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			n = 0
		}
		m.n, m.err = int(n), e
		return true
	}
}

// sendGroup runs the streams' sending until the test's end, its byte or block limit,
// or ctx's end; a stream whose write fails leaves the loop (its end time set), as its
// own goroutine would end.
func (t *test) sendGroup(ctx context.Context, ss []*stream) {
	buf := payload(t.p.Len, t.p.RepeatingPayload)
	start := time.Now()
	ms := make([]*groupMember, 0, len(ss))
	for _, s := range ss {
		m := &groupMember{s: s, raw: rawTCP(s.conn), buf: buf}
		m.f = m.write
		m.raw.Control(func(fd uintptr) { m.fd = int32(fd) })
		s.start = start
		ms = append(ms, m)
	}
	defer func() {
		for _, m := range ms {
			m.s.markEnded()
		}
	}()
	pfd := make([]unix.PollFd, 0, len(ms))
	for len(ms) > 0 && ctx.Err() == nil && !ss[0].stopped() {
		wrote, more := false, true
		for round := 0; round < groupRounds && more; round++ {
			more, ms = t.groupRound(ms)
			wrote = wrote || more
			if ms == nil {
				return // the byte or block limit
			}
		}
		if !wrote && len(ms) > 0 {
			pfd = pfd[:0]
			for _, m := range ms {
				pfd = append(pfd, unix.PollFd{Fd: m.fd, Events: unix.POLLOUT})
			}
			unix.Poll(pfd, int(groupWait/time.Millisecond)) // EINTR or a timeout: the loop looks again
		}
		// The process's other goroutines (the interval ticker, the control connection)
		// between passes: the raw writes never give the processor up, and the monitor's
		// preemption would leave them waiting up to 10 ms.
		runtime.Gosched()
	}
}

// groupRound writes once to each member: whether any took a byte, and the members
// still sending (nil, with every member's end set, once the test's limit is reached).
func (t *test) groupRound(ms []*groupMember) (bool, []*groupMember) {
	wrote := false
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if !m.s.underLimit(len(m.buf)) {
			for _, m := range ms {
				m.s.markEnded()
			}
			return false, nil
		}
		m.n, m.err = 0, 0
		if err := m.raw.Write(m.f); err != nil {
			m.err = unix.EBADF // closed under the loop
		}
		if m.n > 0 {
			m.s.account(m.n)
			wrote = true
		}
		if m.err != 0 && m.err != unix.EAGAIN {
			m.s.markEnded()
			ms = append(ms[:i], ms[i+1:]...)
			i--
		}
	}
	return wrote, ms
}

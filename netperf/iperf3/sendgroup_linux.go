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

// A test's unpaced TCP senders write in loops, one for each of the process's
// processors (GOMAXPROCS: the CPUs it may run on, so one when pinned by taskset or -A),
// the streams dealt round the loops. Each loop writes as iperf3 3.12's select loop
// does: a non-blocking write(2) of up to a block to each of its streams in turn, ten
// rounds, and a wait on all its streams' sockets only when none took anything. With at
// least as many processors as streams every stream has a loop of its own, as iperf3
// 3.16+ gives each stream a thread, so -P 2 on a two-core board uses both cores.
//
// A goroutine per stream (what paced, file and zero-copy streams keep) costs more: a
// write outlasts the scheduler's monitor tick (a 128 KiB write on a fast link does),
// and the monitor then hands the processor to another thread; and a socket that fills
// mid-block costs a park and a wake-up. Measured pinned on a veth pair (client CPU 0,
// stock 3.12 server on CPU 1, each end's receive work steered to its own CPU, -P 4,
// BBR), interleaved rounds: goroutine per stream 0.91x and 0.95x stock's client in
// medians, the one loop 1.03x and 0.97x (README, Benchmarks).

// groupRounds is how many rounds of writes the loop makes before it looks at the test's
// end again: iperf3's multisend.
const groupRounds = 10

// groupWait bounds one wait for a writable socket, so a test whose sockets all stay
// full still sees its end (a socket closed under poll(2) does not wake it).
const groupWait = 10 * time.Millisecond

// senderGroups is the test's TCP senders dealt to the loops, nil when none writes in
// one: a paced (-b), file (-F) or zero-copy (-Z) test, whose streams the per-stream
// loop serves.
func (t *test) senderGroups() [][]*stream {
	p := t.p
	if p.UDP || p.Bandwidth != 0 || p.Local.File != "" || p.Local.ZeroCopy {
		return nil
	}
	var ss []*stream
	for _, s := range t.streams {
		if s.sender && rawTCP(s.conn) != nil {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return nil
	}
	g := make([][]*stream, min(runtime.GOMAXPROCS(0), len(ss)))
	for i, s := range ss {
		g[i%len(g)] = append(g[i%len(g)], s)
	}
	return g
}

// groupMember is one stream of a sending loop, with its raw socket and the result of
// its last write.
type groupMember struct {
	s   *stream
	raw syscall.RawConn
	fd  int32 // for poll(2) only; every write goes through raw, which knows a close
	buf []byte
	off int // how much of the block in progress has been written
	n   int
	err syscall.Errno
	f   func(fd uintptr) bool // m.write, made once, not a closure per write
}

// write is the member's function for RawConn.Write: one non-blocking write(2), never
// a wait (EAGAIN is the loop's to handle). A raw call: the runtime is not told, so a
// long copy keeps its processor (rawio_linux.go says why that matters).
func (m *groupMember) write(fd uintptr) bool {
	for {
		rest := m.buf[m.off:]
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
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
// still sending (nil, with every member's end set, once the test's limit is reached). A
// write the socket cut short is continued in the next round: a member leaves at the
// -k limit only between blocks, so every block it began is sent whole; at the -n byte
// count the loop stops at once, mid-block or not (a byte stream has no blocks to finish).
func (t *test) groupRound(ms []*groupMember) (bool, []*groupMember) {
	wrote := false
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if m.s.bytesDone() {
			for _, m := range ms {
				m.s.markEnded()
			}
			return false, nil
		}
		if m.off == 0 && !m.s.underLimit(len(m.buf)) {
			m.s.markEnded()
			ms = append(ms[:i], ms[i+1:]...)
			i--
			continue
		}
		m.n, m.err = 0, 0
		if err := m.raw.Write(m.f); err != nil {
			m.err = unix.EBADF // closed under the loop
		}
		if m.n > 0 {
			m.off += m.n
			whole := m.off == len(m.buf)
			if whole {
				m.off = 0
			}
			m.s.account(m.n, whole)
			wrote = true
		}
		if m.err != 0 && m.err != unix.EAGAIN {
			m.s.markEnded()
			ms = append(ms[:i], ms[i+1:]...)
			i--
		}
	}
	if len(ms) == 0 {
		return wrote, nil
	}
	return wrote, ms
}

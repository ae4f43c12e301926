package iperf3

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stream is one data connection of a test, run by its own goroutine or, an unpaced TCP
// sender on Linux, by one of the sending loops (sendgroup_linux.go).
type stream struct {
	id     int // the results exchange's stream id
	socket int // the number printed for it, as iperf3 prints its descriptor (streamSocket)
	sender bool
	udp    bool
	conn   net.Conn
	t      *test

	bytes     atomic.Uint64 // sent or received while the test runs
	omitBytes uint64        // bytes at the end of the omit period
	// frozen is a receiving stream's count once settle has taken what arrived by
	// TEST_END (under mu); what the stream reads after that is not the test's.
	frozen   uint64
	isFrozen bool

	// UDP receiver statistics (iperf_udp_recv); mu guards them and the sender's count.
	mu          sync.Mutex
	packets     int64 // highest sequence number seen, or packets sent
	errors      int64 // lost (gaps), less out-of-order arrivals
	outOfOrder  int64
	jitter      float64
	prevTransit float64
	haveTransit bool
	omitPackets int64
	omitErrors  int64

	start, end time.Time
	retrans    int64 // TCP sender: retransmits at the end (tcp_info)
	omitRetr   int64
	// TCP sender: the windows' and RTT's extremes over the interval samples, for the
	// summary's max_snd_cwnd, max_snd_wnd, max_rtt, min_rtt and mean_rtt (iperf3's
	// stream_max_rtt and the others). Only the reporting goroutine touches them.
	fileErr            error // -F: the file could not be opened
	maxCwnd, maxSndWnd uint64
	maxRTT, minRTT     uint32
	sumRTT             uint64
	countRTT           uint64
}

// sampleTCP adds one TCP_INFO sample to the stream's extremes.
func (s *stream) sampleTCP(st tcpStats) {
	s.maxCwnd, s.maxSndWnd = max(s.maxCwnd, st.cwnd), max(s.maxSndWnd, st.sndWnd)
	s.maxRTT = max(s.maxRTT, st.rtt)
	if s.countRTT == 0 || st.rtt < s.minRTT {
		s.minRTT = st.rtt
	}
	s.sumRTT += uint64(st.rtt)
	s.countRTT++
}

// test is the state both roles share while streams run.
type test struct {
	p *Params
	// copyReceived reads received TCP data into user memory as iperf3 does, instead of
	// discarding it in the kernel.
	copyReceived bool
	streams      []*stream
	// running is true from TEST_RUNNING to TEST_END: only then are bytes counted.
	running   atomic.Bool
	totalSent atomic.Uint64
	blockSent atomic.Uint64 // blocks written whole
	// blockStarted is the blocks reserved under -k (underLimit), written or not yet.
	blockStarted atomic.Uint64
	// limitHit is closed once a sender-side -n/-k limit is reached.
	limitHit  chan struct{}
	limitOnce sync.Once
	// congestion is the first TCP stream's congestion control, read while it is open.
	congestion string
	// server is true on the server's side: its streams are numbered as a server's.
	server bool
	// localHost is the control connection's local address, for streams whose own is
	// unspecified.
	localHost string
	// stopSend tells senders to stop (TEST_END).
	stopSend chan struct{}
	start    time.Time
	// omitEnd is when the omit period ended (start when there was none).
	omitEnd time.Time
	wg      sync.WaitGroup
	// senders are the sending goroutines and loops: end waits for their last write
	// to be counted.
	senders sync.WaitGroup
}

func newTest(p *Params) *test {
	return &test{p: p, limitHit: make(chan struct{}), stopSend: make(chan struct{})}
}

func (t *test) hitLimit() { t.limitOnce.Do(func() { close(t.limitHit) }) }

// payload makes the data block: random bytes, or iperf3's repeating pattern.
func payload(n int, repeating bool) []byte {
	b := make([]byte, n)
	if repeating {
		pat := []byte("0123456789")
		for i := range b {
			b[i] = pat[i%len(pat)]
		}
		return b
	}
	// Not crypto/rand: it may block at boot (see NewCookie), and data needs no secrecy.
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rand.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(rand.Uint32())
	}
	return b
}

// run starts the stream's goroutine (not for the unpaced TCP senders on Linux: they
// write in loops, sendgroup_linux.go).
func (s *stream) run(ctx context.Context) {
	s.t.wg.Add(1)
	if s.sender {
		s.t.senders.Add(1)
	}
	go func() {
		defer s.t.wg.Done()
		if s.sender {
			defer s.t.senders.Done()
		}
		s.start = time.Now()
		switch {
		case s.sender && s.udp:
			s.sendUDP(ctx)
		case s.sender:
			s.sendTCP(ctx)
		case s.udp:
			s.recvUDP()
		default:
			s.recvTCP()
		}
		s.markEnded()
	}()
}

// markEnded sets the stream's end time, once: when its sending or receiving ended, or
// the test's end (TEST_END) when that came first.
func (s *stream) markEnded() {
	s.mu.Lock()
	if s.end.IsZero() {
		s.end = time.Now()
	}
	s.mu.Unlock()
}

// pacer holds a paced (-b) stream to its rate: the wait before each block, burst or
// UDP pacing step, on the one timer the stream keeps (time.After made a timer and its
// channel for every wait, garbage a thousand times a second at the default pacing).
type pacer struct {
	ctx   context.Context
	stop  <-chan struct{}
	timer *time.Timer
}

func newPacer(ctx context.Context, stop <-chan struct{}) *pacer {
	return &pacer{ctx: ctx, stop: stop}
}

// sleep waits d; false when the test's context or its sending ended first.
func (p *pacer) sleep(d time.Duration) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d) // no stale tick since Go 1.23: Reset drains the channel
	}
	select {
	case <-p.timer.C:
		return true
	case <-p.ctx.Done():
	case <-p.stop:
	}
	p.timer.Stop()
	return false
}

// until waits until sending sent bytes keeps the stream at rate bit/s since start (no
// wait without a rate, or when the stream is behind); false as sleep's.
func (p *pacer) until(start time.Time, sent, rate uint64) bool {
	if rate == 0 {
		return true
	}
	due := start.Add(time.Duration(float64(sent) * 8 / float64(rate) * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		return p.sleep(d)
	}
	return true
}

func (s *stream) stopped() bool {
	select {
	case <-s.t.stopSend:
		return true
	default:
		return false
	}
}

// bytesDone says whether the streams together have sent the -n byte count (and
// signals the limit when they have). -n counts bytes, not blocks: a sender stops at it
// even mid-block, as iperf3 does.
func (s *stream) bytesDone() bool {
	if b := s.t.p.Bytes; b > 0 && s.t.totalSent.Load() >= b {
		s.t.hitLimit()
		return true
	}
	return false
}

// underLimit reserves the next block of n bytes against the -n/-k limits shared by all
// sending streams; false once the limit is reached. Under -k a block is reserved before
// it is written and every reserved block is written whole, however many writes it takes,
// so the streams together send exactly the blocks asked for (iperf3 counts a write cut
// short by a full socket as a block: -k 400 sent 51.9 MB, not 400 blocks of 128 KiB).
func (s *stream) underLimit(n int) bool {
	p := s.t.p
	if s.bytesDone() {
		return false
	}
	if p.Blocks > 0 && s.t.blockStarted.Add(1) > p.Blocks {
		// The limit is the last block's to signal, once it is written (account).
		return false
	}
	return true
}

// account counts n bytes written; whole says they ended a block.
func (s *stream) account(n int, whole bool) {
	if !s.t.running.Load() {
		return
	}
	s.bytes.Add(uint64(n))
	// The test-wide sums serve the -n/-k limits only: without one, the streams (on
	// several cores) do not share a counter's cache line on every block.
	p := s.t.p
	if p.Bytes == 0 && p.Blocks == 0 {
		return
	}
	total := s.t.totalSent.Add(uint64(n))
	if p.Bytes > 0 && total >= p.Bytes {
		s.t.hitLimit()
	}
	if whole && p.Blocks > 0 && s.t.blockSent.Add(1) >= p.Blocks {
		s.t.hitLimit()
	}
}

func (s *stream) sendTCP(ctx context.Context) {
	buf := payload(s.t.p.Len, s.t.p.RepeatingPayload)
	write := s.conn.Write
	if name := s.t.p.Local.File; name != "" {
		s.sendFile(ctx, name, buf)
		return
	}
	if s.t.p.Local.ZeroCopy {
		if zw, err := zeroCopyWriter(s.conn, buf); err == nil {
			defer zw.Close()
			write = zw.Write
		}
	}
	var sent uint64
	pc := newPacer(ctx, s.t.stopSend)
	for blocks := 0; !s.stopped() && ctx.Err() == nil; blocks++ {
		if !s.underLimit(len(buf)) {
			return
		}
		if b := s.t.p.Burst; (b == 0 || blocks%b == 0) && !pc.until(s.start, sent, s.t.p.Bandwidth) {
			return
		}
		n, err := write(buf)
		if n > 0 {
			sent += uint64(n)
			s.account(n, n == len(buf))
		}
		if err != nil {
			return
		}
		// The other streams' turn, as iperf3's select loop writes a block to each in
		// turn: a stream that wrote until its socket was full left the others' sockets
		// empty. Pinned to one CPU, -P 4 against stock 3.12: 0.46x stock's throughput
		// without it, about 0.9x with it (README, Benchmarks).
		runtime.Gosched()
	}
}

// sendFile sends the file's bytes, a block at a time, until its end, the test's end or
// its byte limit (iperf3's diskfile_send: the last block is what is left).
func (s *stream) sendFile(ctx context.Context, name string, buf []byte) {
	f, err := os.Open(name)
	if err != nil {
		s.fileErr = err
		return
	}
	defer f.Close()
	var sent uint64
	pc := newPacer(ctx, s.t.stopSend)
	for !s.stopped() && ctx.Err() == nil {
		n, err := io.ReadFull(f, buf)
		if n == 0 {
			// The whole file has gone: the test is done, as iperf3's ends at EOF.
			s.t.limitOnce.Do(func() { close(s.t.limitHit) })
			return
		}
		if !s.underLimit(n) || !pc.until(s.start, sent, s.t.p.Bandwidth) {
			return
		}
		w, werr := s.conn.Write(buf[:n])
		sent += uint64(w)
		s.account(w, w == n) // the file's last block is what is left: a block
		if werr != nil || err != nil {
			return
		}
	}
}

// recvFile writes what the stream receives into the file (-F on the receiving side).
func (s *stream) recvFile(name string) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		s.fileErr = err
		io.Copy(io.Discard, s.conn)
		return
	}
	defer f.Close()
	buf := make([]byte, max(s.t.p.Len, 1<<16))
	for {
		n, err := s.conn.Read(buf)
		if n > 0 {
			f.Write(buf[:n])
			if s.t.running.Load() {
				s.bytes.Add(uint64(n))
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *stream) recvTCP() {
	if name := s.t.p.Local.File; name != "" {
		s.recvFile(name)
		return
	}
	count := func(n int) {
		if s.t.running.Load() {
			s.bytes.Add(uint64(n))
		}
	}
	raw := discardTCP
	if s.t.copyReceived {
		raw = copyTCP
	}
	if raw(s.conn, count) {
		return
	}
	// Not a TCP socket the raw reads can drive, or not Linux: a block's worth a read, as
	// iperf3 reads (128 KiB by default).
	buf := make([]byte, min(max(s.t.p.Len, 64<<10), 1<<20))
	for {
		n, err := s.conn.Read(buf)
		if n > 0 {
			count(n)
		}
		if err != nil {
			return
		}
		runtime.Gosched() // the other streams' turn, as iperf3's select loop takes them
	}
}

// udpHeader is the datagram header: sec, usec, then the packet count, 32 or 64 bits,
// big-endian.
func (s *stream) headerLen() int {
	if s.t.p.UDPCounters64Bit {
		return 16
	}
	return 12
}

func (s *stream) sendUDP(ctx context.Context) {
	p := s.t.p
	size := max(p.Len, s.headerLen())
	buf := payload(size, p.RepeatingPayload)
	var seq uint64
	var sent uint64
	tick := time.Duration(p.PacingTimer) * time.Microsecond
	pc := newPacer(ctx, s.t.stopSend)
	for !s.stopped() && ctx.Err() == nil {
		if !s.underLimit(size) {
			return
		}
		// Send what the rate allows by now, then sleep one pacing interval. With -b
		// rate/N only each burst's first packet waits: N go back to back.
		// -b 0: no limit, each datagram as soon as the socket takes it.
		due := s.start
		if p.Bandwidth > 0 {
			due = s.start.Add(time.Duration(float64(sent+uint64(size)) * 8 / float64(p.Bandwidth) * float64(time.Second)))
		}
		if d := time.Until(due); d > 0 && (p.Burst == 0 || seq%uint64(p.Burst) == 0) {
			if !pc.sleep(min(d, tick)) {
				return
			}
			continue
		}
		seq++
		now := time.Now()
		binary.BigEndian.PutUint32(buf[0:], uint32(now.Unix()))
		binary.BigEndian.PutUint32(buf[4:], uint32(now.Nanosecond()/1000))
		if p.UDPCounters64Bit {
			binary.BigEndian.PutUint64(buf[8:], seq)
		} else {
			binary.BigEndian.PutUint32(buf[8:], uint32(seq))
		}
		n, err := s.conn.Write(buf)
		if err != nil {
			// ECONNREFUSED from an ICMP error, ENOBUFS from a full qdisc: the datagram is
			// lost, as on a wire; keep the sequence going.
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOBUFS) {
				sent += uint64(size)
				continue
			}
			return
		}
		sent += uint64(n)
		s.account(n, true)
		s.mu.Lock()
		if s.t.running.Load() {
			s.packets = int64(seq)
		}
		s.mu.Unlock()
	}
}

func (s *stream) recvUDP() {
	buf := make([]byte, 65536)
	hl := s.headerLen()
	for {
		n, err := s.conn.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue
			}
			return
		}
		if n < hl || !s.t.running.Load() {
			continue
		}
		arrival := time.Now()
		sec := binary.BigEndian.Uint32(buf[0:])
		usec := binary.BigEndian.Uint32(buf[4:])
		var pcount int64
		if s.t.p.UDPCounters64Bit {
			pcount = int64(binary.BigEndian.Uint64(buf[8:]))
		} else {
			pcount = int64(binary.BigEndian.Uint32(buf[8:]))
		}
		s.bytes.Add(uint64(n))
		s.mu.Lock()
		if pcount >= s.packets+1 {
			if pcount > s.packets+1 {
				s.errors += pcount - 1 - s.packets
			}
			s.packets = pcount
		} else {
			s.outOfOrder++
			if s.errors > 0 {
				s.errors--
			}
		}
		// RFC 1889 jitter over transit time (sender's clock against ours; only the
		// differences matter).
		sent := float64(sec) + float64(usec)/1e6
		transit := float64(arrival.UnixNano())/1e9 - sent
		if s.haveTransit {
			d := transit - s.prevTransit
			if d < 0 {
				d = -d
			}
			s.jitter += (d - s.jitter) / 16
		}
		s.prevTransit, s.haveTransit = transit, true
		s.mu.Unlock()
	}
}

// endOmit takes the counters at the end of the omit period as the new zero.
func (s *stream) endOmit() {
	s.omitBytes = s.bytes.Load()
	s.mu.Lock()
	s.omitPackets, s.omitErrors = s.packets, s.errors
	s.mu.Unlock()
	s.omitRetr = tcpRetrans(s.conn)
}

// freeze ends the stream's count where it is now.
func (s *stream) freeze() {
	s.mu.Lock()
	s.frozen, s.isFrozen = s.bytes.Load(), true
	s.mu.Unlock()
}

// result is what this side reports for the stream in the results exchange.
func (s *stream) result(start time.Time) StreamResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := StreamResult{ID: s.id, Retransmits: -1, Jitter: s.jitter, Errors: s.errors, Packets: s.packets,
		OmittedErrors: s.omitErrors, OmittedPackets: s.omitPackets}
	// Like iperf_reset_stats at the end of the omit period: bytes and times count from
	// there, for senders and receivers alike.
	r.Bytes = s.bytes.Load() - s.omitBytes
	if s.isFrozen {
		r.Bytes = s.frozen - s.omitBytes
	}
	if s.sender && !s.udp {
		r.Retransmits = s.retrans - s.omitRetr
	}
	end := s.end
	if end.IsZero() {
		end = time.Now()
	}
	if end.Before(start) {
		end = start
	}
	r.StartTime, r.EndTime = 0, end.Sub(start).Seconds()
	return r
}

// sockOpts sets window, MSS, TOS and congestion control on a data socket; from a
// Dialer's Control hook they apply before connect, which window scaling and MSS need.
func sockOpts(raw syscall.RawConn, p *Params, tcp bool) error {
	var serr error
	err := raw.Control(func(fd uintptr) {
		f := int(fd)
		if p.Window > 0 {
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUF, p.Window); e != nil {
				serr = e
			}
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUF, p.Window); e != nil {
				serr = e
			}
		}
		if p.TOS > 0 {
			unix.SetsockoptInt(f, unix.IPPROTO_IP, unix.IP_TOS, p.TOS)
			unix.SetsockoptInt(f, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, p.TOS)
		}
		if e := linuxSockOpts(f, p, tcp); e != nil {
			serr = e
		}
		if tcp {
			if p.MSS > 0 {
				unix.SetsockoptInt(f, unix.IPPROTO_TCP, unix.TCP_MAXSEG, p.MSS)
			}
			if p.Congestion != "" {
				if e := setCongestion(f, p.Congestion); e != nil {
					serr = e
				}
			}
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// connOpts applies the options to an established data connection (the server side).
func connOpts(c net.Conn, p *Params) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	tc, tcp := c.(*net.TCPConn)
	if tcp {
		// Go turns Nagle off on every TCP socket; iperf3 leaves it on unless -N.
		tc.SetNoDelay(p.NoDelay)
	}
	return sockOpts(raw, p, tcp)
}

// cpuUsage is this process's CPU time so far.
func cpuUsage() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// cpuPercent is the CPU use between two readings over wall time, as iperf3 reports it.
type cpuMark struct {
	wall      time.Time
	user, sys time.Duration
}

func markCPU() cpuMark {
	u, s := cpuUsage()
	return cpuMark{time.Now(), u, s}
}

func (m cpuMark) since() (total, user, system float64) {
	now := markCPU()
	wall := now.wall.Sub(m.wall).Seconds()
	if wall <= 0 {
		return 0, 0, 0
	}
	user = (now.user - m.user).Seconds() / wall * 100
	system = (now.sys - m.sys).Seconds() / wall * 100
	return user + system, user, system
}

// summaryTCP puts the stream's window and RTT extremes in its sender summary; a stream
// this side only received has none, and reports zeros as iperf3 does.
func (s *stream) summaryTCP(si *StreamInterval) {
	mean := uint32(0)
	if s.countRTT > 0 {
		mean = uint32(s.sumRTT / s.countRTT)
	}
	si.MaxSndCwnd, si.MaxSndWnd = pu64(s.maxCwnd), pu64(s.maxSndWnd)
	si.MaxRTT, si.MinRTT, si.MeanRTT = pu32(s.maxRTT), pu32(s.minRTT), pu32(mean)
}

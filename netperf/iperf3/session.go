package iperf3

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"time"
)

// interval is the reporting state across ticks.
type intervalState struct {
	last    time.Time
	bytes   map[int]uint64
	retr    map[int]int64
	packets map[int]int64
	errors  map[int]int64
}

// runStreams runs the streams from TEST_RUNNING until done fires or ctx ends, calling
// onInterval every interval (0: once, for the whole test) and at the end for the part
// since the last, and ending the omit period after p.Omit seconds.
func (t *test) runStreams(ctx context.Context, interval time.Duration, done <-chan struct{}, onInterval func(Interval)) {
	t.start = time.Now()
	t.omitEnd = t.start
	t.running.Store(true)
	var looped []*stream
	for _, g := range t.senderGroups() {
		looped = append(looped, g...)
		t.wg.Add(1)
		t.senders.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.senders.Done()
			t.sendGroup(ctx, g)
		}()
	}
	for _, s := range t.streams {
		if !slices.Contains(looped, s) {
			s.run(ctx)
		}
	}
	st := &intervalState{last: t.start, bytes: map[int]uint64{}, retr: map[int]int64{}, packets: map[int]int64{}, errors: map[int]int64{}}
	var tick <-chan time.Time
	if interval > 0 {
		tk := time.NewTicker(interval)
		defer tk.Stop()
		tick = tk.C
	}
	omitEnd := make(<-chan time.Time)
	if t.p.Omit > 0 {
		omitEnd = time.After(time.Duration(t.p.Omit) * time.Second)
	}
	for {
		select {
		case <-done:
		case <-ctx.Done():
			// Interrupted: the interval so far is reported too, as iperf3's
			// iperf_got_sigend reports it.
		case <-omitEnd:
			for _, s := range t.streams {
				s.endOmit()
			}
			t.omitEnd = time.Now()
			st.last = time.Now()
			for _, s := range t.streams {
				st.bytes[s.id] = s.bytes.Load()
				st.retr[s.id] = tcpRetrans(s.conn)
				s.mu.Lock()
				st.packets[s.id], st.errors[s.id] = s.packets, s.errors
				s.mu.Unlock()
			}
			omitEnd = nil
			continue
		case now := <-tick:
			if onInterval != nil {
				onInterval(t.interval(st, now, omitEnd != nil && t.p.Omit > 0))
			}
			continue
		}
		// The last interval, cut short by the end of the test: reported as iperf3 does
		// (iperf_print_intermediate) unless it is under a tenth of an interval, the
		// remnant of a tick that came just before the end. Without this, an end that
		// beat the last tick by a hair lost that whole interval. A test shorter than one
		// interval (-F of a small file) reports it if any byte moved; with no interval
		// (-i 0) the whole test is the one interval, as iperf3 prints it.
		now := time.Now()
		if onInterval != nil && (interval == 0 || now.Sub(st.last) >= interval/10 || st.last.Equal(t.start) && t.movedSince(st)) {
			onInterval(t.interval(st, now, omitEnd != nil && t.p.Omit > 0))
		}
		return
	}
}

// movedSince reports whether any stream moved a byte since the last interval.
func (t *test) movedSince(st *intervalState) bool {
	for _, s := range t.streams {
		if s.bytes.Load() != st.bytes[s.id] {
			return true
		}
	}
	return false
}

// interval computes one reporting interval for every stream.
func (t *test) interval(st *intervalState, now time.Time, omitting bool) Interval {
	var iv Interval
	// Times count from the start, and after -O's omitted seconds from their end, as
	// iperf3's reset at the end of the omit period makes them.
	base := t.start
	if !omitting {
		base = t.omitEnd
	}
	start := st.last.Sub(base).Seconds()
	end := now.Sub(base).Seconds()
	secs := now.Sub(st.last).Seconds()
	var sum, rev StreamInterval
	sum = StreamInterval{Socket: -1, Start: start, End: end, Seconds: secs, Omitted: omitting}
	rev = sum
	haveRev := false
	for _, s := range t.streams {
		b := s.bytes.Load()
		si := StreamInterval{Socket: s.socket, Start: start, End: end, Seconds: secs, Bytes: b - st.bytes[s.id], Omitted: omitting, Sender: s.sender}
		si.BitsPerSecond = rate(si.Bytes, secs)
		st.bytes[s.id] = b
		if s.udp {
			s.mu.Lock()
			pk, er, j := s.packets, s.errors, s.jitter
			s.mu.Unlock()
			si.Packets = p64(pk - st.packets[s.id])
			if !s.sender {
				si.LostPackets = p64(er - st.errors[s.id])
				si.JitterMS = pf64(j * 1000)
				si.LostPercent = pf64(lostPct(*si.LostPackets, *si.Packets))
			}
			st.packets[s.id], st.errors[s.id] = pk, er
		} else if s.sender {
			if ti, ok := tcpInfo(s.conn); ok {
				si.Retransmits = p64(ti.retrans - st.retr[s.id])
				si.SndCwnd, si.SndWnd, si.RTT, si.RTTVar, si.PMTU = pu64(ti.cwnd), pu64(ti.sndWnd), pu32(ti.rtt), pu32(ti.rttvar), pu32(ti.pmtu)
				st.retr[s.id] = ti.retrans
				s.sampleTCP(ti)
			}
		}
		iv.Streams = append(iv.Streams, si)
		target := &sum
		if t.p.Bidir && s.sender != t.streams[0].sender {
			target, haveRev = &rev, true
		}
		target.Bytes += si.Bytes
		target.Sender = s.sender
		if si.Retransmits != nil {
			target.Retransmits = p64(derefI(target.Retransmits) + *si.Retransmits)
		}
		if si.Packets != nil {
			// UDP: packets; a receiver's loss and jitter too (iperf3 averages the
			// streams' jitter, divided after the loop).
			target.Packets = p64(derefI(target.Packets) + *si.Packets)
			if si.LostPackets != nil {
				target.LostPackets = p64(derefI(target.LostPackets) + *si.LostPackets)
				target.JitterMS = pf64(derefF(target.JitterMS) + *si.JitterMS)
			}
		}
	}
	finish := func(a *StreamInterval) {
		a.BitsPerSecond = rate(a.Bytes, secs)
		if a.LostPackets != nil {
			a.JitterMS = pf64(*a.JitterMS / float64(t.p.Parallel))
			a.LostPercent = pf64(lostPct(*a.LostPackets, *a.Packets))
		}
	}
	finish(&sum)
	iv.Sum = sum
	if haveRev {
		finish(&rev)
		iv.SumBidirReverse = &rev
	}
	st.last = now
	return iv
}

func derefI(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// senderDrain bounds how long end waits for the senders' last writes.
const senderDrain = 2 * time.Second

// end stops sending and counting (TEST_END). Connections stay open, and receivers keep
// draining without counting, until closeAll: closing a socket with unread data would
// reset the peer's stream while it may still be finishing its side of the test.
func (t *test) end() {
	select {
	case <-t.stopSend:
		return
	default:
		close(t.stopSend)
	}
	// A write under way when the test ends still reaches the peer, which counts it: the
	// senders stop first and it is counted here too (a -n test over several loops came
	// a block short of what the server received). A write a stalled peer holds is not
	// waited for past senderDrain.
	drained := make(chan struct{})
	go func() { t.senders.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(senderDrain):
	}
	t.running.Store(false)
	now := time.Now()
	for _, s := range t.streams {
		if s.sender && !s.udp {
			ti, ok := tcpInfo(s.conn)
			s.retrans = ti.retrans
			if ok && s.countRTT == 0 {
				s.sampleTCP(ti) // no interval sampled it (-i 0, or a test under one)
			}
		}
		s.mu.Lock()
		if s.end.IsZero() {
			s.end = now
		}
		s.mu.Unlock()
	}
}

// startFacts fills the report's head with what iperf3 puts there once the streams are
// up: the rate and buffer asked for, the buffers the first data socket got and, for
// TCP, the control connection's MSS.
func (t *test) startFacts(rep *Report, ctrl net.Conn) {
	t.congestion = congestion(firstConn(t))
	rep.Start.TargetBitrate, rep.Start.SockBufsize = t.p.Bandwidth, t.p.Window
	rep.Start.ExtraData = t.p.ExtraData
	if len(t.streams) > 0 {
		rep.Start.SndbufActual, rep.Start.RcvbufActual, _ = socketBufs(t.streams[0].conn)
	}
	t.mssFacts(rep, ctrl)
}

// mssFacts records a TCP test's segment size as iperf3 does once the control
// connection is up (its on_connect, at PARAM_EXCHANGE): -M's as tcp_mss, else the
// control connection's as tcp_mss_default; so a test the server then refuses has it too.
func (t *test) mssFacts(rep *Report, ctrl net.Conn) {
	switch {
	case t.p.UDP:
	case t.p.MSS > 0:
		mss := t.p.MSS
		rep.Start.TCPMSS = &mss
	default:
		if _, _, mss := socketBufs(ctrl); mss > 0 {
			rep.Start.TCPMSSDefault = &mss
		}
	}
}

// markEnd sets the streams' end time, for their results, where it is not set yet.
func (t *test) markEnd(now time.Time) {
	for _, s := range t.streams {
		s.mu.Lock()
		if s.end.IsZero() {
			s.end = now
		}
		s.mu.Unlock()
	}
}

// settle lets receiving streams count what had arrived when TEST_END came: iperf3's
// one select loop reads the data that is queued first.
//
// A test that ends on its time counts the bytes that had reached the server by
// TEST_END, no more: a TCP stream reads until its count passes what it had counted
// plus what its socket held then (SIOCINQ), and its count stops there. The bytes
// still in the client's send buffer cross the wire after the test's end: counted in
// a window that ends at TEST_END they made the rate more than the link carried (a
// client with -w 4M on a 150 Mbit/s link: 176 Mbit/s received in 2 s, where iperf3's
// server says 143), and waiting for them cost an upload its buffer's drain (up to
// the 500 ms bound).
//
// A test that ends on a byte or block count (-n, -k), a UDP stream (SIOCINQ gives its
// next datagram only) and a system without SIOCINQ wait as before until every queue is
// read (SIOCINQ 0, where it can be asked) and the count stopped moving, looked at every
// 5 ms (50 ms without SIOCINQ): every byte the client wrote is counted. At most 500 ms.
func (t *test) settle() {
	if !t.p.Bidir && t.p.Reverse {
		return
	}
	var rest []*stream
	var upTo []uint64
	var queued []*stream
	for _, s := range t.streams {
		if s.sender {
			continue
		}
		if t.p.Bytes == 0 && t.p.Blocks == 0 && !s.udp {
			// The count first, then the queue: a byte read in between is in neither,
			// at most the one read under way.
			c := s.bytes.Load()
			if n, ok := unread(s.conn); ok {
				queued, upTo = append(queued, s), append(upTo, c+uint64(n))
				continue
			}
		}
		rest = append(rest, s)
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for i, s := range queued {
		for s.bytes.Load() < upTo[i] && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		s.freeze()
	}
	if len(rest) > 0 {
		settleQuiet(rest, deadline)
	}
}

// settleQuiet waits until every stream's queue is read out and the count stopped
// moving at two looks in a row (a reader that has the last bytes from read(2) and not
// yet counted them has counted them by the second), or until deadline.
func settleQuiet(streams []*stream, deadline time.Time) {
	received := func() uint64 {
		var n uint64
		for _, s := range streams {
			n += s.bytes.Load()
		}
		return n
	}
	poll := 5 * time.Millisecond
	read := func() bool {
		for _, s := range streams {
			n, ok := unread(s.conn)
			if !ok {
				poll = 50 * time.Millisecond
				return true
			}
			if n > 0 {
				return false
			}
		}
		return true
	}
	wasRead, last := read(), received()
	for time.Now().Before(deadline) {
		time.Sleep(poll)
		n, isRead := received(), read()
		if n == last && isRead && wasRead {
			return
		}
		wasRead, last = isRead, n
	}
}

// closeAll closes every data connection and waits for the stream goroutines.
func (t *test) closeAll() {
	t.end()
	for _, s := range t.streams {
		s.conn.Close()
	}
	t.wg.Wait()
}

// localResults is this side's results message.
func (t *test) localResults(cpu cpuMark, congestionUsed string) *Results {
	tot, usr, sys := cpu.since()
	r := &Results{CPUTotal: tot, CPUUser: usr, CPUSystem: sys, CongestionUsed: congestionUsed}
	sender := false
	for _, s := range t.streams {
		sender = sender || s.sender
	}
	// 1 when this side sends TCP and can read retransmits; -1 when it only receives.
	switch {
	case !sender:
		r.SenderHasRetransmits = -1
	case t.p.UDP:
		r.SenderHasRetransmits = 0
	default:
		r.SenderHasRetransmits = 1
	}
	for _, s := range t.streams {
		r.Streams = append(r.Streams, s.result(t.omitEnd))
	}
	return r
}

// addStream adds the i-th data connection as a stream (ids 1, 3, 4, ..., printed as
// streamSocket numbers them) and records it
// in the report and the text output, as iperf3 prints "[ ID] local ... connected to ...".
func (t *test) addStream(i int, sender bool, conn net.Conn, rep *Report, text *textWriter) {
	s := &stream{id: streamID(i), socket: streamSocket(i, t.server, t.p.UDP, t.p.Local.File != ""), sender: sender, udp: t.p.UDP, conn: conn, t: t}
	t.streams = append(t.streams, s)
	lh, lp := addrParts(conn.LocalAddr())
	if ip := net.ParseIP(lh); (ip == nil || ip.IsUnspecified()) && t.localHost != "" {
		lh = t.localHost // a UDP stream of a server listening on every address
	}
	rh, rp := addrParts(conn.RemoteAddr())
	rep.Start.Connected = append(rep.Start.Connected, Connected{Socket: s.socket, LocalHost: lh, LocalPort: lp, RemoteHost: rh, RemotePort: rp})
	fmt.Fprintf(text.w, "[%3d] local %s port %d connected to %s port %d\n", s.socket, lh, lp, rh, rp)
}

// peerResults reads the peer's results message (who names it in errors) and fills the
// report's summary from both sides' numbers; the congestion labels follow the direction
// of the first stream, as in iperf3.
func (t *test) peerResults(ctrl net.Conn, who string, local *Results, rep *Report) (*Results, error) {
	m, err := readJSON(ctrl, MaxResultsJSON)
	if err != nil {
		return nil, fmt.Errorf("read %s results: %w", who, err)
	}
	remote, err := parseResults(m)
	if err != nil {
		return nil, fmt.Errorf("%s results: %w", who, err)
	}
	rep.End = t.buildEnd(remote, local)
	snd, rcv := local, remote
	if len(t.streams) > 0 && !t.streams[0].sender {
		snd, rcv = remote, local
	}
	rep.End.SenderCongestion, rep.End.ReceiverCongestion = snd.CongestionUsed, rcv.CongestionUsed
	return remote, nil
}

// buildEnd merges this side's streams with the peer's results into the summary.
func (t *test) buildEnd(remote *Results, cpuLocal *Results) End {
	byID := map[int]StreamResult{}
	e := End{CPU: CPU{HostTotal: cpuLocal.CPUTotal, HostUser: cpuLocal.CPUUser, HostSystem: cpuLocal.CPUSystem}, done: true}
	if remote != nil {
		for _, s := range remote.Streams {
			byID[s.ID] = s
		}
		e.CPU.RemoteTotal, e.CPU.RemoteUser, e.CPU.RemoteSystem = remote.CPUTotal, remote.CPUUser, remote.CPUSystem
	}
	sums := map[bool]*[2]StreamInterval{} // key: stream sender on this side; [0] sent, [1] received
	first := t.streams[0].sender
	for _, s := range t.streams {
		rem, haveRem := byID[s.id]
		snd, rcv := t.sides(s, rem, haveRem)
		es := EndStream{Sender: snd, Receiver: rcv, local: s.sender, outOfOrder: s.outOfOrder, Diskfile: t.diskfile(snd, rcv)}
		if s.udp && rcv != nil {
			es.UDP = udpView(s, snd, rcv)
		}
		e.Streams = append(e.Streams, es)
		key := s.sender == first
		if sums[key] == nil {
			sums[key] = &[2]StreamInterval{{Socket: -1, Sender: true}, {Socket: -1}}
		}
		addSides(sums[key], snd, rcv)
	}
	fin := func(a *StreamInterval) StreamInterval {
		a.BitsPerSecond = rate(a.Bytes, a.Seconds)
		if a.Packets != nil && a.LostPackets != nil && *a.Packets > 0 {
			a.LostPercent = pf64(lostPct(*a.LostPackets, *a.Packets))
		}
		return *a
	}
	if a := sums[true]; a != nil {
		e.SumSent, e.SumReceived = fin(&a[0]), fin(&a[1])
	}
	if a := sums[false]; a != nil {
		s, r := fin(&a[0]), fin(&a[1])
		e.SumSentBidirReverse, e.SumReceivedBidirReverse = &s, &r
	}
	if t.p.UDP {
		sum := e.SumReceived
		sum.Bytes, sum.BitsPerSecond = e.SumSent.Bytes, e.SumSent.BitsPerSecond
		e.Sum = &sum
	}
	return e
}

// silentPeer stands for the peer's results when none came (the test was cut short on
// either side): every stream with nothing counted over this side's time, no
// retransmits known, as iperf3 prints the other side of such a test (0.00 Bytes).
func silentPeer(local *Results) *Results {
	r := &Results{SenderHasRetransmits: -1}
	for _, s := range local.Streams {
		r.Streams = append(r.Streams, StreamResult{ID: s.ID, Retransmits: -1, HasOmitted: true, StartTime: s.StartTime, EndTime: s.EndTime})
	}
	return r
}

// sides are one stream's sender and receiver summaries: this side's from its own
// counts, the peer's from its results (nil when the peer did not report the stream).
func (t *test) sides(s *stream, rem StreamResult, haveRem bool) (snd, rcv *StreamInterval) {
	loc := s.result(t.omitEnd)
	if haveRem && !rem.HasOmitted {
		// A peer before 3.14 does not say what it omitted: take our count, as
		// iperf3's get_results does.
		rem.OmittedPackets = loc.OmittedPackets
		if rem.Errors > 0 && loc.OmittedPackets > 0 {
			rem.OmittedErrors = 0
		}
	}
	side := func(bytes uint64, secs float64, sender bool) *StreamInterval {
		return &StreamInterval{Socket: s.socket, Start: 0, End: secs, Seconds: secs, Bytes: bytes, BitsPerSecond: rate(bytes, secs), Sender: sender}
	}
	sender := func(r StreamResult, secs float64, local bool) *StreamInterval {
		si := side(r.Bytes, secs, true)
		switch {
		case s.udp:
			si.Packets = p64(r.Packets - r.OmittedPackets)
			si.LostPackets, si.JitterMS = p64(0), pf64(0)
		case local || r.Retransmits >= 0:
			si.Retransmits = p64(r.Retransmits)
			s.summaryTCP(si) // the peer sends no RTT figures: zeros, as iperf3 prints them
		}
		return si
	}
	receiver := func(r StreamResult, secs float64) *StreamInterval {
		si := side(r.Bytes, secs, false)
		if s.udp {
			si.Packets = p64(r.Packets - r.OmittedPackets)
			si.LostPackets = p64(r.Errors - r.OmittedErrors)
			si.JitterMS = pf64(r.Jitter * 1000)
		}
		return si
	}
	remSecs := rem.EndTime - rem.StartTime
	if s.sender {
		snd = sender(loc, loc.EndTime, true)
		if haveRem {
			rcv = receiver(rem, remSecs)
		}
		return snd, rcv
	}
	rcv = receiver(loc, loc.EndTime)
	if haveRem {
		snd = sender(rem, remSecs, false)
	}
	return snd, rcv
}

// udpView is a UDP stream as iperf3's summary line shows it: the receiver's loss and
// jitter over the sender's bytes and time.
func udpView(s *stream, snd, rcv *StreamInterval) *StreamInterval {
	u := *rcv
	if snd != nil {
		u.Bytes, u.BitsPerSecond, u.Seconds, u.End = snd.Bytes, snd.BitsPerSecond, snd.Seconds, snd.End
	}
	if u.Packets != nil && *u.Packets > 0 {
		u.LostPercent = pf64(lostPct(*u.LostPackets, *u.Packets))
	}
	u.OutOfOrder = p64(s.outOfOrder)
	u.Sender = s.sender
	return &u
}

// addSides adds a stream's sender and receiver summaries to the sums of its direction.
func addSides(agg *[2]StreamInterval, snd, rcv *StreamInterval) {
	for i, side := range []*StreamInterval{snd, rcv} {
		if side == nil {
			continue
		}
		a := &agg[i]
		a.Bytes += side.Bytes
		if side.Seconds > a.Seconds {
			a.Seconds, a.End = side.Seconds, side.End
		}
		if side.Retransmits != nil {
			a.Retransmits = p64(derefI(a.Retransmits) + *side.Retransmits)
		}
		if side.Packets != nil {
			a.Packets = p64(derefI(a.Packets) + *side.Packets)
		}
		if side.LostPackets != nil {
			a.LostPackets = p64(derefI(a.LostPackets) + *side.LostPackets)
		}
		if side.JitterMS != nil && (a.JitterMS == nil || *side.JitterMS > *a.JitterMS) {
			a.JitterMS = pf64(*side.JitterMS)
		}
	}
}

// diskfile is -F's account of a stream: what went against the file's size (iperf3
// counts a zero-sized file as all sent).
func (t *test) diskfile(snd, rcv *StreamInterval) *Diskfile {
	name := t.p.Local.File
	if name == "" {
		return nil
	}
	d := &Diskfile{Filename: name, PercentSent: 100, PercentReceived: 100}
	if snd != nil {
		d.Sent = snd.Bytes
	}
	if rcv != nil {
		d.Received = rcv.Bytes
	}
	if st, err := os.Stat(name); err == nil {
		d.Size = st.Size()
	}
	if d.Size > 0 {
		d.PercentSent = int(float64(d.Sent) / float64(d.Size) * 100)
		d.PercentReceived = int(float64(d.Received) / float64(d.Size) * 100)
	}
	return d
}

// lostPct is lost as a percentage of packets, 0 with none.
func lostPct(lost, packets int64) float64 {
	if packets <= 0 {
		return 0
	}
	return 100 * float64(lost) / float64(packets)
}

func derefF(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func addrParts(a net.Addr) (string, int) {
	switch x := a.(type) {
	case *net.TCPAddr:
		return x.IP.String(), x.Port
	case *net.UDPAddr:
		return x.IP.String(), x.Port
	}
	return a.String(), 0
}

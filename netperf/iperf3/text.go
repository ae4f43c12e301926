package iperf3

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// textWriter prints iperf3 3.12's human output line for line (iperf_locale.c's formats,
// laid out as iperf_api.c's print_interval_results, iperf_print_intermediate and
// iperf_print_results do): the header with the first interval, a separator between
// interval blocks of several streams, [SUM] lines with -P, [TX-C]/[RX-S] roles with
// --bidir, and the summary of each side this end can speak for.
type textWriter struct {
	w      io.Writer
	udp    bool
	format byte // -f: k m g t (bits), K M G T (bytes); 0 adapts in bits
	server bool
	bidir  bool
	// parallel is -P; firstSender the direction of the first stream (the order of the
	// blocks, and which sums are Sum and which the reverse ones).
	parallel    int
	firstSender bool
	// localRetr: this side sends TCP (iperf3's sender_has_retransmits); otherRetr: the
	// other side does.
	localRetr, otherRetr bool
	intervals            int
	verbose              bool // -V
}

// off says the text goes nowhere (no text asked for, no server output to collect):
// its lines are not formatted at all, which on a board's one core is a few
// milliseconds of each test.
func (t *textWriter) off() bool { return t.w == io.Discard }

// setTest fills in what the layout depends on, once the test's parameters are known.
func (t *textWriter) setTest(p *Params, server bool) {
	t.udp, t.server, t.bidir, t.parallel = p.UDP, server, p.Bidir, max(p.Parallel, 1)
	clientSends := !p.Reverse || p.Bidir
	serverSends := p.Reverse || p.Bidir
	t.firstSender = clientSends && !server || server && p.Reverse && !p.Bidir
	local, other := clientSends, serverSends
	if server {
		local, other = serverSends, clientSends
	}
	t.localRetr, t.otherRetr = !p.UDP && local, !p.UDP && other
}

// modes are the directions in the order iperf3 prints them: with --bidir the client
// puts its senders first and the server its receivers; otherwise the one direction.
func (t *textWriter) modes() []bool {
	if !t.bidir {
		return []bool{t.firstSender}
	}
	return []bool{!t.server, t.server}
}

// role is the [TX-C] column of --bidir.
func (t *textWriter) role(sender bool) string {
	if !t.bidir {
		return ""
	}
	d, r := "RX", "C"
	if sender {
		d = "TX"
	}
	if t.server {
		r = "S"
	}
	return "[" + d + "-" + r + "]"
}

func (t *textWriter) unitBits(bits float64) string { return unitRate(bits, t.format) }

func omittedTail(o bool) string {
	if o {
		return "(omitted)"
	}
	return ""
}

// interval prints one reporting interval.
func (t *textWriter) interval(iv Interval) {
	if t.off() {
		return
	}
	first := t.intervals == 0
	t.intervals++
	if first {
		t.intervalHeader()
	} else if t.parallel > 1 {
		fmt.Fprint(t.w, separator)
	}
	for _, mode := range t.modes() {
		for _, s := range iv.Streams {
			if s.Sender == mode {
				t.intervalLine(s)
			}
		}
		if t.parallel > 1 {
			sum := iv.Sum
			if mode != t.firstSender && iv.SumBidirReverse != nil {
				sum = *iv.SumBidirReverse
			}
			t.intervalSum(sum, mode)
		}
	}
}

const separator = "- - - - - - - - - - - - - - - - - - - - - - - - -\n"

func (t *textWriter) intervalHeader() {
	role := ""
	if t.bidir {
		role = "[Role]"
	}
	switch {
	case t.udp && t.bidir:
		fmt.Fprintf(t.w, "[ ID][Role] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	case t.udp && t.firstSender:
		fmt.Fprintf(t.w, "[ ID] Interval           Transfer     Bitrate         Total Datagrams\n")
	case t.udp:
		fmt.Fprintf(t.w, "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n")
	case t.localRetr:
		fmt.Fprintf(t.w, "[ ID]%s Interval           Transfer     Bitrate         Retr  Cwnd\n", role)
	default:
		fmt.Fprintf(t.w, "[ ID]%s Interval           Transfer     Bitrate\n", role)
	}
}

func (t *textWriter) intervalLine(s StreamInterval) {
	head := fmt.Sprintf("[%3d]%s %6.2f-%-6.2f sec  %s  %s", s.Socket, t.role(s.Sender), s.Start, s.End, unitBytes(float64(s.Bytes)), t.unitBits(s.BitsPerSecond))
	tail := omittedTail(s.Omitted)
	switch {
	case t.udp && s.Sender:
		fmt.Fprintf(t.w, "%s %s %d  %s\n", head, t.zbuf(), derefI(s.Packets), tail)
	case t.udp:
		fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  %s\n", head, derefF(s.JitterMS), derefI(s.LostPackets), derefI(s.Packets), pctG(derefF(s.LostPercent)), tail)
	case s.Sender && s.Retransmits != nil && t.localRetr:
		fmt.Fprintf(t.w, "%s  %3d   %s       %s\n", head, *s.Retransmits, unitBytes(float64(derefU(s.SndCwnd))), tail)
	default:
		fmt.Fprintf(t.w, "%s                  %s\n", head, tail)
	}
}

// zbuf is the blank column a UDP sender's line has with --bidir.
func (t *textWriter) zbuf() string {
	if t.bidir {
		return "          "
	}
	return ""
}

func (t *textWriter) intervalSum(s StreamInterval, sender bool) {
	head := fmt.Sprintf("[SUM]%s %6.2f-%-6.2f sec  %s  %s", t.role(sender), s.Start, s.End, unitBytes(float64(s.Bytes)), t.unitBits(s.BitsPerSecond))
	tail := omittedTail(s.Omitted)
	switch {
	case t.udp && sender:
		fmt.Fprintf(t.w, "%s %s %d  %s\n", head, t.zbuf(), derefI(s.Packets), tail)
	case t.udp:
		fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  %s\n", head, derefF(s.JitterMS), derefI(s.LostPackets), derefI(s.Packets), pctG(derefF(s.LostPercent)), tail)
	case sender && t.localRetr:
		fmt.Fprintf(t.w, "%s  %3d             %s\n", head, derefI(s.Retransmits), tail)
	default:
		fmt.Fprintf(t.w, "%s                  %s\n", head, tail)
	}
}

// pctG is C's %.2g.
func pctG(v float64) string { return strings.TrimSpace(fmt.Sprintf("%.2g", v)) }

// summary prints the end of a test: each stream's sender and receiver lines that this
// side can speak for (a server only its own side), then [SUM] lines with -P.
func (t *textWriter) summary(r *Report) {
	if t.off() {
		return
	}
	fmt.Fprint(t.w, separator)
	if t.verbose {
		fmt.Fprint(t.w, "Test Complete. Summary Results:\n")
	}
	t.summaryHeader()
	for _, mode := range t.modes() {
		// This side's senders' retransmits are its own; the other side's came in its
		// results.
		retr := t.localRetr
		if !mode {
			retr = t.otherRetr
		}
		for _, es := range r.End.Streams {
			if es.local == mode {
				t.summaryStream(es, mode, retr)
			}
		}
		if t.parallel > 1 {
			snd, rcv := r.End.SumSent, r.End.SumReceived
			if mode != t.firstSender && r.End.SumSentBidirReverse != nil {
				snd, rcv = *r.End.SumSentBidirReverse, *r.End.SumReceivedBidirReverse
			}
			t.summarySum(snd, rcv, mode, retr)
		}
		t.verboseMode(mode, r.End)
	}
}

func (t *textWriter) summaryHeader() {
	role := ""
	if t.bidir {
		role = "[Role]"
	}
	switch {
	case t.udp:
		fmt.Fprintf(t.w, "[ ID]%s Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n", role)
	case t.localRetr || t.otherRetr && !t.server:
		fmt.Fprintf(t.w, "[ ID]%s Interval           Transfer     Bitrate         Retr\n", role)
	default:
		fmt.Fprintf(t.w, "[ ID]%s Interval           Transfer     Bitrate\n", role)
	}
}

// summaryStream is one stream's lines: the sender's and the receiver's, those a server
// cannot speak for left out.
func (t *textWriter) summaryStream(es EndStream, mode, retr bool) {
	role := t.role(mode)
	if s := es.Sender; s != nil && !(t.server && !es.local) {
		head := fmt.Sprintf("[%3d]%s %6.2f-%-6.2f sec  %s  %s", s.Socket, role, s.Start, s.End, unitBytes(float64(s.Bytes)), t.unitBits(s.BitsPerSecond))
		switch {
		case t.udp:
			fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  sender\n", head, 0.0, 0, derefI(s.Packets), pctG(0))
		case retr:
			fmt.Fprintf(t.w, "%s  %3d             sender\n", head, derefI(s.Retransmits))
		default:
			fmt.Fprintf(t.w, "%s                  sender\n", head)
		}
	}
	if t.verbose && es.Sender != nil && t.server && !es.local {
		fmt.Fprintf(t.w, "[%3d] (sender statistics not available)\n", es.Sender.Socket)
	}
	if es.outOfOrder > 0 && es.Sender != nil && !(t.server && !es.local) {
		fmt.Fprintf(t.w, "[SUM]%s %4.1f-%4.1f sec  %d datagrams received out-of-order\n", role, es.Sender.Start, es.Sender.End, es.outOfOrder)
	}
	if d := es.Diskfile; d != nil {
		n := d.Received
		pct := d.PercentReceived
		if mode {
			n, pct = d.Sent, d.PercentSent
		}
		// iperf3's unit here has no plural: "2.86 MByte".
		fmt.Fprintf(t.w, "        Sent %s / %s (%d%%) of %s\n", strings.TrimSuffix(unitBytes(float64(n)), "s"), strings.TrimSuffix(unitBytes(float64(d.Size)), "s"), pct, d.Filename)
	}
	if t.verbose && es.Receiver != nil && t.server && es.local {
		fmt.Fprintf(t.w, "[%3d] (receiver statistics not available)\n", es.Receiver.Socket)
	}
	if s := es.Receiver; s != nil && !(t.server && es.local) {
		head := fmt.Sprintf("[%3d]%s %6.2f-%-6.2f sec  %s  %s", s.Socket, role, s.Start, s.End, unitBytes(float64(s.Bytes)), t.unitBits(s.BitsPerSecond))
		if t.udp {
			fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  receiver\n", head, derefF(s.JitterMS), derefI(s.LostPackets), derefI(s.Packets),
				pctG(lostPct(derefI(s.LostPackets), derefI(s.Packets))))
		} else {
			fmt.Fprintf(t.w, "%s                  receiver\n", head)
		}
	}
}

func (t *textWriter) summarySum(snd, rcv StreamInterval, mode, retr bool) {
	role := t.role(mode)
	line := func(s StreamInterval) string {
		return fmt.Sprintf("[SUM]%s %6.2f-%-6.2f sec  %s  %s", role, s.Start, s.End, unitBytes(float64(s.Bytes)), t.unitBits(s.BitsPerSecond))
	}
	if t.verbose && t.server && !mode {
		fmt.Fprint(t.w, "[SUM] (sender statistics not available)\n")
	}
	if !(t.server && !mode) {
		switch {
		case t.udp:
			fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  sender\n", line(snd), 0.0, 0, derefI(snd.Packets), pctG(0))
		case retr:
			fmt.Fprintf(t.w, "%s  %3d             sender\n", line(snd), derefI(snd.Retransmits))
		default:
			fmt.Fprintf(t.w, "%s                  sender\n", line(snd))
		}
	}
	if t.verbose && t.server && mode {
		fmt.Fprint(t.w, "[SUM] (receiver statistics not available)\n")
	}
	if !(t.server && mode) {
		if t.udp {
			fmt.Fprintf(t.w, "%s  %5.3f ms  %d/%d (%s%%)  receiver\n", line(rcv), derefF(rcv.JitterMS), derefI(rcv.LostPackets), derefI(rcv.Packets),
				pctG(lostPct(derefI(rcv.LostPackets), derefI(rcv.Packets))))
		} else {
			fmt.Fprintf(t.w, "%s                  receiver\n", line(rcv))
		}
	}
}

func derefU(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// Verbose output (-V): the lines iperf3 adds, where it adds them.

// verboseHello is -V's first lines: the version and the system (uname).
func (t *textWriter) verboseHello(version string) {
	if !t.verbose {
		return
	}
	fmt.Fprintf(t.w, "iperf 3.12 (linerate %s)\n%s\n", version, unameLine())
}

// verboseConnected is what -V prints once the control connection is up: the time, and
// (after the "Connecting"/"Accepted" line the caller prints between) the cookie, the
// MSS and the rate.
func (t *textWriter) verboseTime() {
	if t.verbose {
		fmt.Fprintf(t.w, "Time: %s\n", time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	}
}

// verboseTest is -V's cookie, MSS (-M's, or else the control connection's, ctrlMSS)
// and rate.
func (t *textWriter) verboseTest(cookie []byte, p *Params, ctrlMSS int) {
	if !t.verbose {
		return
	}
	fmt.Fprintf(t.w, "      Cookie: %s\n", cookie[:CookieSize-1])
	switch {
	case p.UDP:
	case p.MSS > 0:
		fmt.Fprintf(t.w, "      TCP MSS: %d\n", p.MSS)
	default:
		fmt.Fprintf(t.w, "      TCP MSS: %d (default)\n", ctrlMSS)
	}
	if p.Bandwidth > 0 {
		fmt.Fprintf(t.w, "      Target Bitrate: %d\n", p.Bandwidth)
	}
}

// verboseStarting is -V's line at TEST_START.
func (t *textWriter) verboseStarting(p *Params) {
	if !t.verbose {
		return
	}
	proto := "TCP"
	if p.UDP {
		proto = "UDP"
	}
	head := fmt.Sprintf("Starting Test: protocol: %s, %d streams, %d byte blocks, omitting %d seconds, ", proto, p.Parallel, p.Len, p.Omit)
	switch {
	case p.Bytes > 0:
		fmt.Fprintf(t.w, "%s%d bytes to send, tos %d\n", head, p.Bytes, p.TOS)
	case p.Blocks > 0:
		fmt.Fprintf(t.w, "%s%d blocks to send, tos %d\n", head, p.Blocks, p.TOS)
	default:
		fmt.Fprintf(t.w, "%s%d second test, tos %d\n", head, p.Time, p.TOS)
	}
}

// verboseMode is -V's lines after each direction's summary: CPU use where this side
// sent, and the congestion control of each end it knows (a server only its own).
func (t *textWriter) verboseMode(mode bool, e End) {
	if !t.verbose {
		return
	}
	cpu := func(local, remote string) {
		fmt.Fprintf(t.w, "CPU Utilization: local/%s %.1f%% (%.1f%%u/%.1f%%s), remote/%s %.1f%% (%.1f%%u/%.1f%%s)\n",
			local, e.CPU.HostTotal, e.CPU.HostUser, e.CPU.HostSystem, remote, e.CPU.RemoteTotal, e.CPU.RemoteUser, e.CPU.RemoteSystem)
	}
	if mode {
		cpu("sender", "receiver")
		if t.bidir {
			cpu("receiver", "sender")
		}
	}
	if t.udp {
		return
	}
	snd, rcv := e.SenderCongestion, e.ReceiverCongestion
	if t.server {
		// The server knows its own, not the client's.
		if mode {
			rcv = ""
		} else {
			snd = ""
		}
	}
	if snd != "" {
		fmt.Fprintf(t.w, "snd_tcp_congestion %s\n", snd)
	}
	if rcv != "" {
		fmt.Fprintf(t.w, "rcv_tcp_congestion %s\n", rcv)
	}
}

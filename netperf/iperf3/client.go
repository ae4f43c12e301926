package iperf3

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Client runs one test against an iperf3 server.
type Client struct {
	Host           string
	Port           int
	Bind           string // local address (-B)
	Params         Params
	Interval       time.Duration // reporting interval (-i); 0: one for the whole test (-i 0)
	ConnectTimeout time.Duration
	Version        string
	// Text, when set, receives iperf3's human output as the test runs.
	Text io.Writer
	// CopyReceived reads received TCP data (-R, --bidir) into user memory as iperf3
	// does; by default the kernel discards it (see Server.CopyReceived).
	CopyReceived bool
	// Family is "4" or "6" to use only IPv4 or IPv6 (-4, -6); empty: either.
	Family string
	// CPort binds the data streams to this local port and the ones after it (--cport).
	CPort int
	// Format is the text output's rate unit (-f): k, m, g, t for bits, K, M, G, T for
	// bytes; 0 adapts.
	Format byte
	// Verbose adds iperf3 -V's lines to the text output.
	Verbose bool
	// RcvTimeout ends a test whose receiving streams get no data for this long
	// (--rcv-timeout; iperf3's default is 120 s); 0: none.
	RcvTimeout time.Duration
}

// ServerError is the server's refusal: busy, an error number, or termination.
type ServerError struct {
	State  int8
	IErrno int32
	Errno  int32
}

// Error is the refusal in stock iperf3's words (iperf_strerror), the server's errno
// after it as iperf3 adds it.
func (e *ServerError) Error() string {
	switch e.State {
	case AccessDenied:
		return "the server is busy running a test. try again later"
	case ServerTerminate:
		return "the server has terminated"
	}
	msg := map[int32]string{ieNumStreams: "number of parallel streams too large (maximum = 128)", ieBlockSize: "block size too large (maximum = 1048576 bytes)",
		ieTotalRate: "total required bandwidth is larger than server limit", ieAffinity: "unable to set CPU affinity",
		ieAuthTest:     "test authorization failed",
		ieUDPBlockSize: "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)", ieMaxDuration: "client's requested duration exceeds the server's maximum permitted limit",
		ieRecvParams: "unable to receive parameters from client"}[e.IErrno]
	if msg == "" {
		msg = "int_errno=" + strconv.Itoa(int(e.IErrno))
	}
	if e.Errno != 0 {
		msg += ": " + capitalise(syscall.Errno(e.Errno).Error())
	}
	return msg
}

// InterruptError is a test the client was stopped in (ctx ended: Ctrl-C, SIGTERM);
// the server was told CLIENT_TERMINATE. It says so in iperf3's words.
type InterruptError struct{ Err error }

func (e *InterruptError) Error() string { return "interrupt - the client has terminated" }
func (e *InterruptError) Unwrap() error { return e.Err }

// ConnectError is a control connection that could not be made, in stock iperf3's words
// ("unable to connect to server: Connection refused"): scripts grep for them. Addr is
// the server's address, for callers that name it.
type ConnectError struct {
	Addr string
	Err  error
}

func (e *ConnectError) Error() string { return "unable to connect to server: " + Strerror(e.Err) }
func (e *ConnectError) Unwrap() error { return e.Err }

// Strerror says err as the C library does to iperf3 (strerror, gai_strerror): an errno
// as its capitalised text, a name not found as "Name or service not known", a name that
// could not be looked up (no DNS server reachable) as "Resource temporarily unavailable",
// the errno getaddrinfo leaves then; a timeout as ETIMEDOUT's text.
func Strerror(err error) string {
	var dns *net.DNSError
	var errno syscall.Errno
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "Name or service not known"
	case errors.As(err, &dns):
		return "Resource temporarily unavailable"
	case errors.As(err, &errno):
		return capitalise(errno.Error())
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return capitalise(syscall.ETIMEDOUT.Error())
	}
	return err.Error()
}

func capitalise(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func readState(c net.Conn) (int8, error) {
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, err
	}
	return int8(b[0]), nil
}

func writeState(c net.Conn, s int8) error {
	_, err := c.Write([]byte{stateByte(s)})
	return err
}

// stateByte is the wire byte of a (signed) state.
func stateByte(s int8) byte { return byte(s) }

// RunWhenFree runs the test as Run does; a server that answers busy (it takes one test
// at a time and may still be closing the last one) is asked again every half second,
// for up to ten seconds, as an operator would. A refused connection is asked again every
// 100 ms for up to two seconds: a stock iperf3 server closes its listening socket when a
// test ends and opens it anew for the next (iperf_run_server, iperf_server_listen), so a
// client that starts its next test at once can find no one listening, or its connection
// reset with the socket it was queued on (as it connects, as it sends its cookie, or as
// it waits for the server's first word).
func (c *Client) RunWhenFree(ctx context.Context) (*Report, error) {
	refusedUntil := time.Now().Add(2 * time.Second)
	for try := 0; ; try++ {
		rep, err := c.Run(ctx)
		var se *ServerError
		var ce *ConnectError
		wait := 500 * time.Millisecond
		switch {
		case ctx.Err() != nil:
			return rep, err
		case errors.As(err, &se) && se.State == AccessDenied && try < 20:
		case errors.As(err, &ce) && (errors.Is(ce.Err, syscall.ECONNREFUSED) || errors.Is(ce.Err, syscall.ECONNRESET)) && time.Now().Before(refusedUntil),
			droppedUnanswered(err) && time.Now().Before(refusedUntil):
			wait = 100 * time.Millisecond
		default:
			return rep, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// unansweredError is a control connection that failed before the server said anything:
// nothing of a test has begun on either side.
type unansweredError struct {
	what string
	err  error
}

func (e *unansweredError) Error() string { return e.what + ": " + e.err.Error() }
func (e *unansweredError) Unwrap() error { return e.err }

// droppedUnanswered says the server's side dropped the control connection before it
// said a word: reset, or closed. A stock iperf3 server that closes its listening
// socket as a test ends resets the connections still queued on it, so a client that
// connected in that instant finds its cookie's write, or the read of the server's
// first state, reset: as good as refused.
func droppedUnanswered(err error) bool {
	var ue *unansweredError
	return errors.As(err, &ue) && (errors.Is(ue.err, syscall.ECONNRESET) || errors.Is(ue.err, syscall.EPIPE) || errors.Is(ue.err, io.EOF))
}

// Run runs the test and returns its report in iperf3 -J's shape.
func (c *Client) Run(ctx context.Context) (*Report, error) {
	p := c.params()
	port := cmp.Or(c.Port, DefaultPort)
	timeout := cmp.Or(c.ConnectTimeout, 10*time.Second)
	if c.ConnectTimeout < 0 {
		timeout = 10 * time.Second
	}
	addr := net.JoinHostPort(c.Host, strconv.Itoa(port))
	rep := c.startReport(&p, port)
	text := &textWriter{w: io.Discard, format: c.Format, verbose: c.Verbose}
	text.setTest(&p, false)
	if c.Text != nil {
		text.w = c.Text
	}
	text.verboseHello(c.Version)
	ctrl, err := c.connect(ctx, &p, addr, port, timeout, rep, text)
	if err != nil {
		return rep, err
	}
	defer ctrl.Close()
	// Stopped (Ctrl-C): the reads on the control connection return at once, and it
	// stays open to tell the server CLIENT_TERMINATE.
	stopWatch := context.AfterFunc(ctx, func() { ctrl.SetReadDeadline(time.Unix(1, 0)) })
	defer stopWatch()
	cookie := NewCookie()
	rep.Start.Cookie = string(cookie[:CookieSize-1])
	_, _, ctrlMSS := socketBufs(ctrl)
	text.verboseTest(cookie, &p, ctrlMSS)
	if _, err := ctrl.Write(cookie); err != nil {
		return rep, &unansweredError{what: "send cookie", err: err}
	}
	t := newTest(&p)
	t.copyReceived = c.CopyReceived
	defer func() {
		if t.streams != nil {
			t.closeAll()
		}
	}()
	s := &clientSession{c: c, ctrl: ctrl, t: t, p: &p, addr: addr, cookie: cookie, timeout: timeout, rep: rep, text: text}
	return rep, s.exchange(ctx)
}

// params are the test's parameters with iperf3's defaults filled in.
func (c *Client) params() Params {
	p := c.Params
	if p.Parallel < 1 {
		p.Parallel = 1
	}
	if p.Len <= 0 {
		p.Len = defaultLen(p.UDP)
	}
	if p.UDP && p.Bandwidth == 0 && !p.RateGiven {
		p.Bandwidth = 1 << 20
	}
	if p.PacingTimer <= 0 {
		p.PacingTimer = 1000
	}
	if p.Bytes > 0 || p.Blocks > 0 {
		p.Time = 0
	} else if p.Time <= 0 {
		p.Time = 10
	}
	if p.ClientVersion == "" {
		p.ClientVersion = c.Version
	}
	return p
}

// startReport is the report's start as -J writes it before anything is connected.
func (c *Client) startReport(p *Params, port int) *Report {
	rep := &Report{Intervals: []Interval{}, Start: Start{Connected: []Connected{}}}
	rep.Start.Version = "linerate " + c.Version
	rep.Start.SystemInfo = runtime.GOOS + " " + runtime.GOARCH
	rep.Start.Timestamp = nowStamp(time.Now())
	rep.Start.ConnectingTo = map[string]any{"host": c.Host, "port": port}
	protocol := "TCP"
	if p.UDP {
		protocol = "UDP"
	}
	rep.Start.TestStart = TestInfo{Protocol: protocol, NumStreams: p.Parallel, Blksize: p.Len, Omit: p.Omit, Duration: p.Time,
		Bytes: p.Bytes, Blocks: p.Blocks, Reverse: b2i(p.Reverse), Bidir: b2i(p.Bidir), TOS: p.TOS, Bitrate: p.Bandwidth}
	return rep
}

// connect opens the control connection and says so as iperf3 does (a refused connection
// prints only the error); a UDP test without -l takes the path's MSS as its block.
func (c *Client) connect(ctx context.Context, p *Params, addr string, port int, timeout time.Duration, rep *Report, text *textWriter) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if c.Bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(c.Bind)}
	}
	ctrl, err := d.DialContext(ctx, "tcp"+c.Family, addr)
	if err != nil {
		return nil, &ConnectError{Addr: addr, Err: err}
	}
	_, _, ctrlMSS := socketBufs(ctrl)
	if c.Verbose {
		fmt.Fprintf(text.w, "Control connection MSS %d\n", ctrlMSS)
	}
	if p.UDP && c.Params.Len <= 0 && ctrlMSS > 0 {
		// iperf3's dynamic UDP block: a datagram of the path's MSS, so none fragments.
		p.Len = ctrlMSS
		rep.Start.TestStart.Blksize = p.Len
		if c.Verbose {
			fmt.Fprintf(text.w, "Setting UDP block size to %d\n", p.Len)
		}
	}
	text.verboseTime()
	fmt.Fprintf(text.w, "Connecting to host %s, port %d\n", c.Host, port)
	if p.Reverse && !p.Bidir {
		fmt.Fprintf(text.w, "Reverse mode, remote host %s is sending\n", c.Host)
	}
	return ctrl, nil
}

// clientSession is one test's control exchange on the client's side.
type clientSession struct {
	c       *Client
	ctrl    net.Conn
	t       *test
	p       *Params
	addr    string
	cookie  []byte
	timeout time.Duration
	rep     *Report
	text    *textWriter
	cpu     cpuMark
	// answered: the server has sent a state (a failure before it is unansweredError).
	answered bool
}

// exchange follows the server's states to the end of the test.
func (s *clientSession) exchange(ctx context.Context) error {
	var pending []int8
	for {
		var st int8
		if len(pending) > 0 {
			st, pending = pending[0], pending[1:]
		} else {
			s.ctrl.SetReadDeadline(time.Now().Add(s.timeout + 20*time.Second))
			if ctx.Err() != nil {
				s.ctrl.SetReadDeadline(time.Unix(1, 0)) // stopped since the watch set it
			}
			var err error
			if st, err = readState(s.ctrl); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !s.answered {
					return &unansweredError{what: "control connection", err: err}
				}
				return fmt.Errorf("control connection: %w", err)
			}
			s.answered = true
		}
		next, done, err := s.state(ctx, st)
		if done || err != nil {
			return err
		}
		if next != 0 {
			pending = append(pending, next)
		}
	}
}

// state acts on one state from the server: the next state it already read (0: none),
// or done at the end of the test.
func (s *clientSession) state(ctx context.Context, st int8) (next int8, done bool, err error) {
	c, ctrl, t, rep, text := s.c, s.ctrl, s.t, s.rep, s.text
	switch st {
	case ParamExchange:
		t.mssFacts(rep, ctrl)
		if err := writeJSON(ctrl, s.p.paramsJSON()); err != nil {
			return 0, false, fmt.Errorf("send parameters: %w", err)
		}
	case CreateStreams:
		if err := c.createStreams(ctx, t, s.addr, s.cookie, s.timeout, rep, text); err != nil {
			return 0, false, err
		}
		t.startFacts(rep, ctrl)
	case TestStart:
		s.cpu = markCPU()
		text.verboseStarting(s.p)
	case TestRunning:
		next, err := c.runTest(ctx, ctrl, t, rep, text)
		var se *ServerError
		if errors.As(err, &se) && se.State == ServerTerminate || errors.As(err, new(*InterruptError)) {
			// Cut short by either side: what this side counted, as iperf3 reports it.
			local := t.localResults(s.cpu, t.congestion)
			rep.End = t.buildEnd(silentPeer(local), local)
			text.otherRetr = false // no results came: the other side's retransmits unknown
			text.summary(rep)
		}
		return next, false, err
	case ExchangeResults:
		local := t.localResults(s.cpu, t.congestion)
		if err := writeJSON(ctrl, local.toJSON()); err != nil {
			return 0, false, fmt.Errorf("send results: %w", err)
		}
		remote, err := t.peerResults(ctrl, "server", local, rep)
		if err != nil {
			return 0, false, err
		}
		if s.p.GetServerOutput {
			// A server's output only when asked for (--get-server-output), as iperf3.
			if len(remote.ServerOutputJSON) > 0 {
				rep.ServerOutputJSON = remote.ServerOutputJSON
			}
			rep.ServerOutputText = remote.ServerOutputText
		}
	case DisplayResults:
		writeState(ctrl, IperfDone)
		text.summary(rep)
		if rep.ServerOutputText != "" {
			fmt.Fprintf(text.w, "\nServer output:\n%s", rep.ServerOutputText)
		}
		fmt.Fprintln(text.w, "\niperf Done.")
		return 0, true, nil
	case AccessDenied, ServerTerminate:
		return 0, false, &ServerError{State: st}
	case ServerErrorState:
		var b [8]byte
		io.ReadFull(ctrl, b[:])
		return 0, false, &ServerError{State: st, IErrno: int32(binary.BigEndian.Uint32(b[:4])), Errno: int32(binary.BigEndian.Uint32(b[4:]))}
	default:
		return 0, false, fmt.Errorf("server sent unknown state %d", st)
	}
	return 0, false, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func firstConn(t *test) net.Conn {
	for _, s := range t.streams {
		if !s.udp {
			return s.conn
		}
	}
	return nil
}

// UDP connect messages (iperf_udp.c): ints written in host order by a little-endian
// iperf3, so these byte strings on the wire.
var (
	udpConnectMsg         = []byte("9876")
	udpConnectReply       = []byte("6789")
	udpLegacyConnectReply = []byte{0xb1, 0x68, 0xde, 0x3a}
)

func (c *Client) createStreams(ctx context.Context, t *test, addr string, cookie []byte, timeout time.Duration, rep *Report, text *textWriter) error {
	p := t.p
	n := p.Parallel
	if p.Bidir {
		n *= 2
	}
	for i := 0; i < n; i++ {
		// With --bidir the client opens its sending streams first.
		sender := !p.Reverse
		if p.Bidir {
			sender = i < p.Parallel
		}
		d := net.Dialer{Timeout: timeout, Control: func(network, address string, raw syscall.RawConn) error {
			return sockOpts(raw, p, !p.UDP)
		}}
		if c.Bind != "" || c.CPort > 0 {
			port := 0
			if c.CPort > 0 {
				port = c.CPort + i
			}
			if p.UDP {
				d.LocalAddr = &net.UDPAddr{IP: net.ParseIP(c.Bind), Port: port}
			} else {
				d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(c.Bind), Port: port}
			}
		}
		var conn net.Conn
		var err error
		if p.UDP {
			conn, err = d.DialContext(ctx, "udp"+c.Family, addr)
			if err == nil {
				err = udpHandshake(conn, timeout)
			}
		} else {
			conn, err = d.DialContext(ctx, "tcp"+c.Family, addr)
			if err == nil {
				conn.(*net.TCPConn).SetNoDelay(p.NoDelay)
				_, err = conn.Write(cookie)
			}
		}
		if err != nil {
			if conn != nil {
				conn.Close()
			}
			return fmt.Errorf("create stream %d: %w", i+1, err)
		}
		t.addStream(i, sender, conn, rep, text)
	}
	return nil
}

// udpHandshake sends the UDP connect message and waits for the reply; data datagrams of a
// reverse test may arrive first.
func udpHandshake(conn net.Conn, timeout time.Duration) error {
	if _, err := conn.Write(udpConnectMsg); err != nil {
		return err
	}
	conn.SetReadDeadline(time.Now().Add(timeout))
	defer conn.SetReadDeadline(time.Time{})
	buf := make([]byte, 65536)
	for i := 0; i < 64; i++ {
		n, err := conn.Read(buf)
		if err != nil {
			return fmt.Errorf("UDP connect: no reply from the server: %w", err)
		}
		if n == 4 && (string(buf[:4]) == string(udpConnectReply) || string(buf[:4]) == string(udpLegacyConnectReply)) {
			return nil
		}
	}
	return errors.New("UDP connect: no reply among the first datagrams")
}

type stateOrErr struct {
	state int8
	err   error
}

// watchState reads the next state byte of the control connection in the background,
// with no deadline: while the test runs neither side speaks on it unless something ends.
func watchState(ctrl net.Conn) <-chan stateOrErr {
	ch := make(chan stateOrErr, 1)
	ctrl.SetReadDeadline(time.Time{})
	go func() {
		st, err := readState(ctrl)
		ch <- stateOrErr{st, err}
	}()
	return ch
}

// runTest runs from TEST_RUNNING until the client's end condition, sends TEST_END and
// returns the server's next state (EXCHANGE_RESULTS).
func (c *Client) runTest(ctx context.Context, ctrl net.Conn, t *test, rep *Report, text *textWriter) (int8, error) {
	p := t.p
	done := make(chan struct{})
	// The server speaks only on failure while the test runs; after TEST_END its next
	// state arrives on the same reader.
	ctrlCh := watchState(ctrl)
	var early *stateOrErr
	var runErr error
	// The test's time runs from here, as the streams start: not from the watcher's
	// first turn on a processor. On one core that came after the senders' first pass
	// (runStreams starts them, and they run before it): 0.1 s on the emulated ZC702,
	// a 4 s test sending for 4.1 s.
	var timer <-chan time.Time
	if p.Time > 0 {
		timer = time.After(time.Duration(p.Time+p.Omit) * time.Second)
	}
	go func() {
		defer close(done)
		// A look every 10 ms only where something is watched: the receive timeout of
		// a client that receives, or the bytes of a test it receives (-R -n/-k). Else
		// the test is left to its timer: a weak board's one core has the throughput
		// to measure.
		var pollC <-chan time.Time
		if c.RcvTimeout > 0 && anyReceiver(t) || (p.Bytes > 0 || p.Blocks > 0) && !anySender(t) {
			poll := time.NewTicker(10 * time.Millisecond)
			defer poll.Stop()
			pollC = poll.C
		}
		var lastRecv uint64
		lastMove := time.Now()
		for {
			select {
			case <-timer:
				return
			case <-t.limitHit:
				return
			case r := <-ctrlCh:
				early = &r
				return
			case <-ctx.Done():
				runErr = ctx.Err()
				return
			case now := <-pollC:
				if c.RcvTimeout > 0 {
					if got := receivedBytes(t); got != lastRecv || !anyReceiver(t) {
						lastRecv, lastMove = got, now
					} else if now.Sub(lastMove) > c.RcvTimeout {
						runErr = fmt.Errorf("receive timeout: no data for %v (--rcv-timeout)", c.RcvTimeout)
						return
					}
				}
				// With -R the client receives: it ends the test once it has the bytes.
				if (p.Bytes > 0 || p.Blocks > 0) && !anySender(t) {
					var got uint64
					for _, s := range t.streams {
						got += s.bytes.Load()
					}
					if p.Bytes > 0 && got >= p.Bytes || p.Blocks > 0 && got >= p.Blocks*uint64(p.Len) {
						return
					}
				}
			}
		}
	}()
	t.runStreams(ctx, c.Interval, done, func(iv Interval) {
		rep.Intervals = append(rep.Intervals, iv)
		text.interval(iv)
	})
	<-done // runStreams also returns on ctx's end: the watcher's verdict is read after it is written
	t.end()
	if ctx.Err() != nil {
		// Stopped: the server is told, as iperf3's client tells it on SIGINT.
		ctrl.SetWriteDeadline(time.Now().Add(time.Second))
		writeState(ctrl, ClientTerminate)
		return 0, &InterruptError{Err: ctx.Err()}
	}
	if runErr != nil {
		return 0, runErr
	}
	if early != nil {
		if early.err != nil {
			return 0, fmt.Errorf("control connection lost during the test: %w", early.err)
		}
		return 0, &ServerError{State: early.state}
	}
	if err := writeState(ctrl, TestEnd); err != nil {
		return 0, fmt.Errorf("send TEST_END: %w", err)
	}
	ctrl.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := <-ctrlCh
	if r.err != nil {
		return 0, fmt.Errorf("after TEST_END: %w", r.err)
	}
	return r.state, nil
}

func anyReceiver(t *test) bool {
	for _, s := range t.streams {
		if !s.sender {
			return true
		}
	}
	return false
}

func receivedBytes(t *test) uint64 {
	var n uint64
	for _, s := range t.streams {
		if !s.sender {
			n += s.bytes.Load()
		}
	}
	return n
}

func anySender(t *test) bool {
	for _, s := range t.streams {
		if s.sender {
			return true
		}
	}
	return false
}

package iperf3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Server serves iperf3 tests, one at a time, as iperf3 -s does.
type Server struct {
	Addr string // listen address; empty: all
	Port int
	// OneOff serves one test and returns (-1).
	OneOff bool
	// IdleTimeout drops a client that stays silent this long: no control message and
	// no data (default 30s).
	IdleTimeout time.Duration
	Version     string
	// Log receives one line per event (accepted, refused, dropped); nil: discarded.
	Log *log.Logger
	// Text, when set, receives iperf3-style output of each test; JSON, when set, gets
	// each test's report (-J).
	Text io.Writer
	JSON func(*Report)
	// CopyReceived reads received TCP data into user memory, as iperf3 does; by default
	// the kernel discards it (MSG_TRUNC), so the figure is the link's and the stack's,
	// not the receiving CPU's memory copy.
	CopyReceived bool
	// Ready, when set, is called with the bound address once the server listens.
	Ready func(net.Addr)
	// Family is "4" or "6" to listen on IPv4 or IPv6 only (-4, -6); empty: both.
	Family string
	// Format is the text output's rate unit, as Client.Format.
	Format byte
	// BindDev binds the listening and data sockets to a device (--bind-dev).
	BindDev string
	// Verbose adds iperf3 -V's lines to Text.
	Verbose bool
	// Interval is the time between interval reports (-i): 0 is iperf3's 1 s, negative
	// none but the one for the whole test (-i 0).
	Interval time.Duration
	// sendOutputUnasked sends the server's output whether asked or not: a server
	// that does (the tests' hostile peer) must not make the client print it.
	sendOutputUnasked bool
	// Errors, when set, gets a test's end in stock iperf3's words when it ends early
	// ("iperf3: the client has terminated"), as iperf3's server writes it to stderr.
	Errors io.Writer
	// Auth, when set, admits only clients whose token it accepts (IEAUTHTEST).
	Auth *Authenticator
	// BitrateLimit refuses a test whose total rate asked for, or measured over a
	// second, is above it, bit/s (--server-bitrate-limit); 0: none.
	BitrateLimit uint64

	mu     sync.Mutex
	active *serverTest
	tests  int // banners printed: the next test's number
}

// serverTest is the test in progress.
type serverTest struct {
	cookie  []byte
	streams chan acceptedConn
	ended   chan struct{} // closed once the test has let go of the server
	ending  atomic.Bool   // its results are exchanged: only the client's IPERF_DONE is left
}

// endingGrace is how long a new client waits for a test whose results are exchanged to
// let go of the server (it waits 5 s for IPERF_DONE at most): a client that runs tests
// back to back (validate's steps, -n runs) connects while the server is still finishing
// the last one, which iperf3's single-threaded server would have done before accepting
// it. A client that comes while a test runs gets ACCESS_DENIED at once, as from iperf3.
const endingGrace = 6 * time.Second

// acceptedConn is a connection with its place in accept order: cookies are read
// concurrently, so streams can reach the test out of order, and the roles (receive first,
// then send) follow the order in which the client opened them.
type acceptedConn struct {
	net.Conn
	seq uint64
}

func (s *Server) logf(format string, a ...any) {
	if s.Log != nil {
		s.Log.Printf(format, a...)
	}
}

// ListenAndServe listens on Addr:Port and serves until ctx ends (or one test, OneOff).
func (s *Server) ListenAndServe(ctx context.Context) error {
	port := s.Port
	if port == 0 {
		port = DefaultPort
	}
	addr := net.JoinHostPort(s.Addr, strconv.Itoa(port))
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		if err := reuseAddr(network, address, c); err != nil {
			return err
		}
		return bindDevice(c, s.BindDev)
	}}
	ln, err := lc.Listen(ctx, "tcp"+s.Family, addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	defer ln.Close()
	if s.Ready != nil {
		s.Ready(ln.Addr())
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	return s.Serve(ctx, ln.(*net.TCPListener))
}

func reuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	})
	return serr
}

// Serve accepts connections on ln. The first connection with a new cookie is a test's
// control channel; while it runs, connections with its cookie are its streams and any
// other client gets ACCESS_DENIED.
func (s *Server) Serve(ctx context.Context, ln *net.TCPListener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	var once sync.Once
	var seq uint64
	if s.Text != nil {
		(&textWriter{w: s.Text, verbose: s.Verbose}).verboseHello(s.Version)
	}
	s.banner(ln.Addr())
	var wait time.Duration // the back-off after an accept that ran out of descriptors
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || s.OneOff && !outOfDescriptors(err) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if outOfDescriptors(err) {
				// Idle connections can hold every descriptor the process may have: wait
				// for some to close and serve on, as net/http does, 5 ms doubling to 1 s.
				wait = min(max(2*wait, 5*time.Millisecond), time.Second)
				s.logf("accept: %v; accepting again in %v", err, wait)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
				continue
			}
			return err
		}
		wait = 0
		seq++
		ac := acceptedConn{c, seq}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.handleConn(ctx, ac, ln) && s.OneOff {
				// One test served: stop accepting (-1).
				once.Do(func() { ln.Close() })
			}
		}()
	}
}

// outOfDescriptors is an accept that failed for want of a descriptor or memory, which
// clears once connections close.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// handleConn reads a new connection's cookie and routes it; true when it ran a test.
func (s *Server) handleConn(ctx context.Context, ac acceptedConn, ln *net.TCPListener) bool {
	c := ac.Conn
	c.SetReadDeadline(time.Now().Add(s.idle()))
	cookie := make([]byte, CookieSize)
	if _, err := io.ReadFull(c, cookie); err != nil {
		s.logf("connection from %s: no cookie (%v); closed", c.RemoteAddr(), err)
		c.Close()
		return false
	}
	c.SetReadDeadline(time.Time{})
	s.mu.Lock()
	act := s.active
	if act != nil && !bytes.Equal(act.cookie, cookie) && act.ending.Load() {
		s.mu.Unlock()
		select {
		case <-act.ended:
		case <-time.After(endingGrace):
		}
		s.mu.Lock()
		act = s.active
	}
	switch {
	case act != nil && bytes.Equal(act.cookie, cookie):
		s.mu.Unlock()
		select {
		case act.streams <- ac:
		case <-time.After(s.idle()):
			c.Close()
		}
		return false
	case act != nil:
		s.mu.Unlock()
		s.logf("connection from %s refused: a test is running (ACCESS_DENIED)", c.RemoteAddr())
		c.Write([]byte{stateByte(AccessDenied)})
		c.Close()
		return false
	}
	st := &serverTest{cookie: cookie, streams: make(chan acceptedConn), ended: make(chan struct{})}
	s.active = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active = nil
		close(st.ended)
		s.mu.Unlock()
	}()
	rep, err := s.runTest(ctx, c, st, ln)
	if err != nil {
		s.logf("test from %s ended: %v", c.RemoteAddr(), err)
		if rep != nil {
			rep.Error = err.Error()
		}
		if s.Errors != nil && s.JSON == nil && !errors.Is(err, ErrServerInterrupt) {
			// The server's own interrupt is said once, by whoever stops it.
			fmt.Fprintf(s.Errors, "iperf3: %s\n", stockServerText(err))
		}
	}
	if rep != nil && s.JSON != nil {
		s.JSON(rep)
	}
	if !s.OneOff {
		s.banner(ln.Addr())
	}
	return true
}

// textOut is where the server's text goes: Text, or nowhere.
func (s *Server) textOut() io.Writer {
	if s.Text == nil {
		return io.Discard
	}
	return s.Text
}

// banner is iperf3's server heading, before each test it waits for.
func (s *Server) banner(a net.Addr) {
	if s.Text == nil {
		return
	}
	s.mu.Lock()
	s.tests++
	n := s.tests
	s.mu.Unlock()
	_, port := addrParts(a)
	fmt.Fprintf(s.Text, "-----------------------------------------------------------\nServer listening on %d (test #%d)\n-----------------------------------------------------------\n", port, n)
}

// ErrServerInterrupt ends a test the server was stopped in (SIGINT, SIGTERM): the
// client is told SERVER_TERMINATE, and iperf3 says this as the server exits.
var ErrServerInterrupt = errors.New("interrupt - the server has terminated")

// errClientTerminated is a client's CLIENT_TERMINATE (its Ctrl-C) during the test.
var errClientTerminated = errors.New("the client has terminated")

// stockServerText is a test's early end as iperf3's server prints it.
func stockServerText(err error) string {
	switch {
	case errors.Is(err, errClientTerminated):
		return err.Error()
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return "the client has unexpectedly closed the connection"
	}
	return "error - " + err.Error()
}

func (s *Server) interval() time.Duration {
	switch {
	case s.Interval < 0:
		return 0
	case s.Interval == 0:
		return time.Second
	}
	return s.Interval
}

func (s *Server) idle() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return 30 * time.Second
}

func sendServerError(c net.Conn, ierrno, errno int32) {
	b := make([]byte, 9)
	b[0] = stateByte(ServerErrorState)
	binary.BigEndian.PutUint32(b[1:], uint32(ierrno))
	binary.BigEndian.PutUint32(b[5:], uint32(errno))
	c.Write(b)
}

func (s *Server) runTest(ctx context.Context, ctrl net.Conn, st *serverTest, ln *net.TCPListener) (*Report, error) {
	defer ctrl.Close()
	idle := s.idle()
	text := &textWriter{w: io.Discard, format: s.Format, verbose: s.Verbose}
	if s.Text != nil {
		text.w = s.Text
	}
	text.verboseTime()
	// --get-server-output: the client gets all this test's text, as iperf3's server
	// collects it.
	var output bytes.Buffer
	rh, rp := addrParts(ctrl.RemoteAddr())
	fmt.Fprintf(text.w, "Accepted connection from %s, port %d\n", rh, rp)
	s.logf("accepted control connection from %s", ctrl.RemoteAddr())
	rep := s.newReport(rh, rp, st)
	p, err := exchangeParams(ctrl, idle, rep)
	if err != nil {
		return rep, err
	}
	unpin, err := s.admit(ctrl, p)
	if err != nil {
		return rep, err
	}
	defer unpin()
	text.setTest(p, true)
	_, _, ctrlMSS := socketBufs(ctrl)
	text.verboseTest(st.cookie, p, ctrlMSS)
	if p.GetServerOutput && s.JSON == nil {
		text.w = io.MultiWriter(text.w, &output)
	}
	t := newTest(p)
	t.server = true
	t.copyReceived = s.CopyReceived
	t.localHost, _ = addrParts(ctrl.LocalAddr())
	defer func() { t.closeAll() }()
	if err := s.createStreams(ctx, ctrl, t, st, ln, rep, text); err != nil {
		return rep, err
	}
	t.startFacts(rep, ctrl)
	cpu := markCPU()
	text.verboseStarting(p)
	if err := writeState(ctrl, TestStart); err != nil {
		return rep, err
	}
	if err := writeState(ctrl, TestRunning); err != nil {
		return rep, err
	}
	done := make(chan struct{})
	var endErr error
	go func() {
		defer close(done)
		endErr = waitTestEnd(ctx, ctrl, t, idle)
	}()
	t.runStreams(ctx, s.interval(), done, func(iv Interval) {
		rep.Intervals = append(rep.Intervals, iv)
		text.interval(iv)
	})
	<-done // runStreams also returns on ctx's end: the watcher's verdict is read after it is written
	if endErr == nil {
		t.settle()
	}
	t.end()
	// Close the data streams now, as iperf3's server does on TEST_END: a receiving
	// iperf3 client drains them with blocking reads of whole blocks until EOF, and would
	// never read EXCHANGE_RESULTS from a stream left open.
	t.closeAll()
	if endErr != nil {
		if ctx.Err() != nil {
			writeState(ctrl, ServerTerminate)
			endErr = ErrServerInterrupt
		}
		if errors.Is(endErr, ErrServerInterrupt) || errors.Is(endErr, errClientTerminated) {
			// What this side counted, as iperf3 reports a test cut short.
			rep.End = t.buildEnd(nil, t.localResults(cpu, t.congestion))
			text.summary(rep)
		}
		return rep, endErr
	}
	if err := s.exchangeResults(ctrl, t, cpu, idle, rep, func() string {
		// The server's whole output, its summary included, as iperf3 sends it.
		tw := *text
		var sum bytes.Buffer
		tw.w = &sum
		tw.summary(rep)
		return output.String() + sum.String()
	}); err != nil {
		return rep, err
	}
	st.ending.Store(true)
	if p.GetServerOutput && s.JSON == nil {
		text.w = s.textOut() // the summary once: the client has its copy
	}
	text.summary(rep)
	// IPERF_DONE, or the client just closes.
	ctrl.SetReadDeadline(time.Now().Add(5 * time.Second))
	readState(ctrl)
	s.logf("test from %s done", ctrl.RemoteAddr())
	return rep, nil
}

// newReport starts a test's report: who came, when, with which cookie.
func (s *Server) newReport(host string, port int, st *serverTest) *Report {
	rep := &Report{Intervals: []Interval{}, Start: Start{Connected: []Connected{}}}
	rep.Start.Version = "linerate " + s.Version
	rep.Start.SystemInfo = runtime.GOOS + " " + runtime.GOARCH
	rep.Start.Timestamp = nowStamp(time.Now())
	rep.Start.AcceptedFrom = map[string]any{"host": host, "port": port}
	rep.Start.Cookie = string(st.cookie[:CookieSize-1])
	return rep
}

// exchangeParams asks for the client's parameters and reads them; a refusal is sent to
// the client as iperf3's server sends it.
func exchangeParams(ctrl net.Conn, idle time.Duration, rep *Report) (*Params, error) {
	if err := writeState(ctrl, ParamExchange); err != nil {
		return nil, err
	}
	ctrl.SetReadDeadline(time.Now().Add(idle))
	m, err := readJSON(ctrl, MaxParamsJSON)
	if err != nil {
		sendServerError(ctrl, ieRecvParams, 0)
		return nil, fmt.Errorf("parameters: %w", err)
	}
	p, err := parseParams(m)
	if err != nil {
		var pe *paramError
		if errors.As(err, &pe) {
			sendServerError(ctrl, pe.ierrno, 0)
		}
		return nil, fmt.Errorf("parameters: %w", err)
	}
	protocol := "TCP"
	if p.UDP {
		protocol = "UDP"
	}
	rep.Start.TestStart = TestInfo{Protocol: protocol, NumStreams: p.Parallel, Blksize: p.Len, Omit: p.Omit, Duration: p.Time,
		Bytes: p.Bytes, Blocks: p.Blocks, Reverse: b2i(p.Reverse), Bidir: b2i(p.Bidir), TOS: p.TOS, Bitrate: p.Bandwidth}
	return p, nil
}

// admit applies what the server decides on a test's parameters: its bitrate limit
// (iperf3 refuses a test whose streams together ask for more, IETOTALRATE), the CPU the
// client asks it to run on (-A n,m; unpin undoes it when the test ends), and its own
// bind device.
func (s *Server) admit(ctrl net.Conn, p *Params) (unpin func(), err error) {
	if s.Auth != nil {
		user, err := s.Auth.Check(p.AuthToken, time.Now())
		if p.AuthToken == "" {
			err = errors.New("no credentials")
		}
		if err != nil {
			sendServerError(ctrl, ieAuthTest, 0)
			return nil, fmt.Errorf("test authorization failed: %w", err)
		}
		s.logf("authenticated user %s", user)
	}
	if s.BitrateLimit > 0 {
		total := p.Bandwidth * uint64(p.Parallel)
		if p.Bidir {
			total *= 2
		}
		if p.Bandwidth == 0 || total > s.BitrateLimit {
			sendServerError(ctrl, ieTotalRate, 0)
			return nil, fmt.Errorf("the client asks for %d bit/s in all (0: unlimited), above --server-bitrate-limit %d", total, s.BitrateLimit)
		}
	}
	unpin = func() {}
	if p.HasServerAffinity {
		restore, err := SetAffinity(p.ServerAffinity)
		if err != nil {
			sendServerError(ctrl, ieAffinity, 0)
			return nil, err
		}
		unpin = func() {
			if err := restore(); err != nil {
				s.logf("giving back the CPU affinity after a test pinned to CPU %d: %v", p.ServerAffinity, err)
			}
		}
	}
	p.Local.BindDev = s.BindDev
	return unpin, nil
}

// createStreams tells the client to open its streams and takes them.
func (s *Server) createStreams(ctx context.Context, ctrl net.Conn, t *test, st *serverTest, ln *net.TCPListener, rep *Report, text *textWriter) error {
	// For UDP the server port must listen before the client hears CREATE_STREAMS: its
	// first datagram follows at once.
	var udpLn *net.UDPConn
	if t.p.UDP {
		var err error
		if udpLn, err = listenUDP(ctx, ln.Addr().(*net.TCPAddr)); err != nil {
			sendServerError(ctrl, ieServerTerminal, 0)
			return err
		}
	}
	if err := writeState(ctrl, CreateStreams); err != nil {
		if udpLn != nil {
			udpLn.Close()
		}
		return err
	}
	wctx, stop := watchClosed(ctx, ctrl)
	err := s.acceptStreams(wctx, t, st, ln, udpLn, rep, text)
	closed := stop()
	if err != nil {
		if closed {
			return errors.New("the client closed its control connection before its streams came")
		}
		sendServerError(ctrl, ieServerTerminal, 0)
		return err
	}
	return nil
}

// watchClosed is ctx, cancelled the moment the client closes (or resets) its control
// connection while the server waits for its streams: a client gone after CREATE_STREAMS
// would otherwise hold the one-test server busy for the whole idle time. It peeks
// (MSG_PEEK: nothing is read) when the socket turns readable; data from the client ends
// the watch and stays for the state machine. stop ends the watch and says whether the
// connection was found closed.
func watchClosed(ctx context.Context, ctrl net.Conn) (context.Context, func() bool) {
	sc, ok := ctrl.(syscall.Conn)
	if !ok {
		return ctx, func() bool { return false }
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ctx, func() bool { return false }
	}
	wctx, cancel := context.WithCancel(ctx)
	var closed atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1)
		raw.Read(func(fd uintptr) bool {
			n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if err == unix.EAGAIN || err == unix.EINTR {
				return false // not readable yet: the poller waits
			}
			if n == 0 || err != nil {
				closed.Store(true)
				cancel()
			}
			return true
		})
	}()
	return wctx, func() bool {
		ctrl.SetReadDeadline(time.Unix(1, 0)) // wakes the peek
		<-done
		ctrl.SetReadDeadline(time.Time{})
		cancel()
		return closed.Load()
	}
}

// waitTestEnd waits for TEST_END. The client decides the end; a client that vanishes or
// stalls is dropped once neither control nor data has moved for the idle timeout.
func waitTestEnd(ctx context.Context, ctrl net.Conn, t *test, idle time.Duration) error {
	ctrlCh := watchState(ctrl)
	var last uint64
	lastMove := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-ctrlCh:
			switch {
			case r.err != nil:
				return fmt.Errorf("control connection lost: %w", r.err)
			case r.state == TestEnd:
				// The test ends now, for the figures: what arrives while the
				// receivers settle was sent before, and counts, but not its time.
				t.markEnd(time.Now())
				return nil
			case r.state == ClientTerminate:
				return errClientTerminated
			}
			return fmt.Errorf("unexpected state %d from the client during the test", r.state)
		case <-ctx.Done():
			return ctx.Err()
		case now := <-tick.C:
			var moved uint64
			for _, s := range t.streams {
				moved += s.bytes.Load()
			}
			if moved != last {
				last, lastMove = moved, now
			}
			if now.Sub(lastMove) > idle {
				return fmt.Errorf("idle for %v: no data and no TEST_END; client dropped", idle)
			}
		}
	}
}

// exchangeResults trades results with the client (with the server's output when the
// client asked for it) and tells it to display them.
func (s *Server) exchangeResults(ctrl net.Conn, t *test, cpu cpuMark, idle time.Duration, rep *Report, textOutput func() string) error {
	local := t.localResults(cpu, t.congestion)
	if err := writeState(ctrl, ExchangeResults); err != nil {
		return err
	}
	ctrl.SetReadDeadline(time.Now().Add(idle))
	if _, err := t.peerResults(ctrl, "client", local, rep); err != nil {
		return err
	}
	if t.p.GetServerOutput || s.sendOutputUnasked {
		if s.JSON != nil {
			b, _ := json.Marshal(rep)
			local.ServerOutputJSON = b
		} else {
			local.ServerOutputText = textOutput()
		}
	}
	if err := writeJSON(ctrl, local.toJSON()); err != nil {
		return fmt.Errorf("send results: %w", err)
	}
	return writeState(ctrl, DisplayResults)
}

// acceptStreams takes the client's data streams: TCP connections with the test's cookie
// (routed here by handleConn), or UDP streams on the server port. Receiving streams come
// first, then sending ones.
func (s *Server) acceptStreams(ctx context.Context, t *test, st *serverTest, ln *net.TCPListener, udpLn *net.UDPConn, rep *Report, text *textWriter) error {
	p := t.p
	n := p.Parallel
	if p.Bidir {
		n *= 2
	}
	deadline := time.Now().Add(s.idle())
	var udpConns []net.Conn
	if p.UDP {
		var err error
		udpConns, err = acceptUDP(ctx, udpLn, ln.Addr().(*net.TCPAddr), n, deadline)
		if err != nil {
			return err
		}
	}
	conns := udpConns
	if !p.UDP {
		var got []acceptedConn
		for len(got) < n {
			select {
			case c := <-st.streams:
				got = append(got, c)
			case <-time.After(time.Until(deadline)):
				for _, c := range got {
					c.Close()
				}
				return fmt.Errorf("only %d of %d streams arrived", len(got), n)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i].seq < got[j].seq })
		for _, c := range got {
			conns = append(conns, c.Conn)
		}
	}
	for i, c := range conns {
		connOpts(c, p)
		sender := p.Reverse
		if p.Bidir {
			sender = i >= p.Parallel
		}
		t.addStream(i, sender, c, rep, text)
	}
	return nil
}

func listenUDP(ctx context.Context, tcpAddr *net.TCPAddr) (*net.UDPConn, error) {
	laddr := &net.UDPAddr{IP: tcpAddr.IP, Port: tcpAddr.Port}
	lc := net.ListenConfig{Control: reuseAddr}
	pc, err := lc.ListenPacket(ctx, "udp", laddr.String())
	if err != nil {
		return nil, fmt.Errorf("UDP listen on %s: %w", laddr, err)
	}
	return pc.(*net.UDPConn), nil
}

// acceptUDP takes n UDP streams on the server port (iperf_udp_accept): each first
// datagram names a client socket; the listening socket is connected to it and becomes
// the stream, a fresh listener is bound on the same port, and only then is the reply
// sent, so the client's next stream always finds a listener.
func acceptUDP(ctx context.Context, uc *net.UDPConn, tcpAddr *net.TCPAddr, n int, deadline time.Time) ([]net.Conn, error) {
	var out []net.Conn
	fail := func(err error) ([]net.Conn, error) {
		for _, c := range out {
			c.Close()
		}
		if uc != nil {
			uc.Close()
		}
		return nil, err
	}
	for i := 0; i < n; i++ {
		buf := make([]byte, 64)
		from, err := readFirstUDP(ctx, uc, buf, deadline)
		if err != nil {
			return fail(fmt.Errorf("UDP stream %d did not arrive: %w", i+1, err))
		}
		raw, err := uc.SyscallConn()
		if err != nil {
			return fail(err)
		}
		var cerr error
		raw.Control(func(fd uintptr) {
			if ip4 := from.IP.To4(); ip4 != nil {
				sa := &unix.SockaddrInet4{Port: from.Port}
				copy(sa.Addr[:], ip4)
				cerr = unix.Connect(int(fd), sa)
				return
			}
			sa6 := &unix.SockaddrInet6{Port: from.Port}
			copy(sa6.Addr[:], from.IP.To16())
			cerr = unix.Connect(int(fd), sa6)
		})
		if cerr != nil {
			return fail(fmt.Errorf("UDP connect to %s: %w", from, cerr))
		}
		uc.SetReadDeadline(time.Time{})
		c := &connectedUDP{UDPConn: uc, remote: from}
		out = append(out, c)
		uc = nil
		if i+1 < n {
			if uc, err = listenUDP(ctx, tcpAddr); err != nil {
				return fail(err)
			}
		}
		if _, err := c.Write(udpConnectReply); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// readFirstUDP waits for a UDP stream's first datagram until deadline or ctx's end (the
// client gone: its control connection closed).
func readFirstUDP(ctx context.Context, uc *net.UDPConn, buf []byte, deadline time.Time) (*net.UDPAddr, error) {
	uc.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { uc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	_, from, err := uc.ReadFromUDP(buf) // the content is not checked, as in iperf3
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return from, err
}

// connectedUDP is a UDP socket connected with connect(2) behind Go's back: Read and
// Write (plain read(2)/write(2) in Go) go to the one peer; RemoteAddr says which.
type connectedUDP struct {
	*net.UDPConn
	remote *net.UDPAddr
}

func (c *connectedUDP) RemoteAddr() net.Addr { return c.remote }

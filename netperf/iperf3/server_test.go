package iperf3

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testServer runs a Server on an ephemeral loopback port.
func testServer(t *testing.T, idle time.Duration) (addr string, reports func() []*Report, logs func() string) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reps []*Report
	var buf bytes.Buffer
	var lmu sync.Mutex
	logs = func() string { lmu.Lock(); defer lmu.Unlock(); return buf.String() }
	srv := &Server{IdleTimeout: idle, Version: "test", Log: log.New(lockedWriter{&lmu, &buf}, "", 0),
		JSON: func(r *Report) { mu.Lock(); reps = append(reps, r); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); ln.Close(); <-done })
	return ln.Addr().String(), func() []*Report { mu.Lock(); defer mu.Unlock(); return append([]*Report(nil), reps...) }, logs
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// rawClient speaks the protocol step by step, to misbehave at chosen points.
type rawClient struct {
	t      *testing.T
	ctrl   net.Conn
	cookie []byte
	addr   string
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, ctrl: c, cookie: NewCookie(), addr: addr}
}

func (r *rawClient) state() int8 {
	r.t.Helper()
	r.ctrl.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := readState(r.ctrl)
	if err != nil {
		r.t.Fatalf("read state: %v", err)
	}
	return s
}

func (r *rawClient) expect(want int8) {
	r.t.Helper()
	if got := r.state(); got != want {
		r.t.Fatalf("state %d, want %d", got, want)
	}
}

// toRunning does the handshake of a one-stream TCP test up to TEST_RUNNING and returns
// the data connection.
func (r *rawClient) toRunning(params string) net.Conn {
	r.t.Helper()
	r.ctrl.Write(r.cookie)
	r.expect(ParamExchange)
	writeRaw(r.ctrl, []byte(params))
	r.expect(CreateStreams)
	d, err := net.Dial("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { d.Close() })
	d.Write(r.cookie)
	r.expect(TestStart)
	r.expect(TestRunning)
	return d
}

func writeRaw(w io.Writer, b []byte) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	w.Write(append(hdr[:], b...))
}

const tcpParams = `{"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":1,"len":1024,"client_version":"3.12"}`

// next proves the server is free again: a real client runs a short test to the end.
func next(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	var p int
	for _, c := range port {
		p = p*10 + int(c-'0')
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	start := time.Now()
	var rep *Report
	var err error
	for time.Since(start) < within {
		c := &Client{Host: host, Port: p, Params: Params{Bytes: 1 << 20}, Version: "test", ConnectTimeout: time.Second}
		rep, err = c.Run(ctx)
		if se, busy := err.(*ServerError); busy && se.State == AccessDenied {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
	if err != nil || rep.End.SumReceived.Bytes == 0 {
		t.Fatalf("the next client was not served within %v: %v", within, err)
	}
}

func TestServerDropsBadClients(t *testing.T) {
	idle := 400 * time.Millisecond
	for _, tc := range []struct {
		name  string
		do    func(t *testing.T, r *rawClient)
		reply int8 // what the misbehaving client reads last (0: not checked)
		log   string
	}{
		{"vanishes mid-test", func(t *testing.T, r *rawClient) {
			d := r.toRunning(tcpParams)
			d.Write(make([]byte, 4096))
			d.Close()
			r.ctrl.Close()
		}, 0, "control connection lost"},
		{"stalls before parameters", func(t *testing.T, r *rawClient) {
			r.ctrl.Write(r.cookie)
			r.expect(ParamExchange)
			time.Sleep(2 * idle)
		}, ServerErrorState, "parameters"},
		{"stalls mid-test", func(t *testing.T, r *rawClient) {
			r.toRunning(tcpParams)
			time.Sleep(3 * idle)
		}, 0, "idle for"},
		{"garbage state byte", func(t *testing.T, r *rawClient) {
			r.toRunning(tcpParams)
			r.ctrl.Write([]byte{0x77})
		}, 0, "unexpected state 119"},
		{"JSON length above the cap", func(t *testing.T, r *rawClient) {
			r.ctrl.Write(r.cookie)
			r.expect(ParamExchange)
			r.ctrl.Write([]byte{0x7f, 0xff, 0xff, 0xff})
		}, ServerErrorState, "above the size cap"},
		{"malformed JSON", func(t *testing.T, r *rawClient) {
			r.ctrl.Write(r.cookie)
			r.expect(ParamExchange)
			writeRaw(r.ctrl, []byte(`{"tcp":tru`))
		}, ServerErrorState, "malformed JSON"},
		{"parallel out of range", func(t *testing.T, r *rawClient) {
			r.ctrl.Write(r.cookie)
			r.expect(ParamExchange)
			writeRaw(r.ctrl, []byte(`{"tcp":true,"time":1,"parallel":100000}`))
		}, ServerErrorState, "parallel 100000"},
		{"short cookie", func(t *testing.T, r *rawClient) {
			r.ctrl.Write([]byte("abc"))
			time.Sleep(2 * idle)
		}, 0, "no cookie"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _, logs := testServer(t, idle)
			r := dialRaw(t, addr)
			start := time.Now()
			tc.do(t, r)
			if tc.reply != 0 {
				if got := r.state(); got != tc.reply {
					t.Errorf("got state %d, want %d", got, tc.reply)
				}
			}
			next(t, addr, 5*time.Second)
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("took %v to serve the next client", d)
			}
			if !strings.Contains(logs(), tc.log) {
				t.Errorf("log does not say %q:\n%s", tc.log, logs())
			}
		})
	}
}

// TestServerBusy: while a test runs, another client (another cookie) gets ACCESS_DENIED.
func TestServerBusy(t *testing.T) {
	addr, _, logs := testServer(t, 2*time.Second)
	r := dialRaw(t, addr)
	r.ctrl.Write(r.cookie)
	r.expect(ParamExchange)
	other := dialRaw(t, addr)
	other.ctrl.Write(NewCookie())
	if s := other.state(); s != AccessDenied {
		t.Errorf("second client got state %d, want ACCESS_DENIED", s)
	}
	if !strings.Contains(logs(), "ACCESS_DENIED") {
		t.Errorf("log: %s", logs())
	}
}

// TestServerMinusOneAsUint64: iperf3 3.12 and 3.13 print -1 as 18446744073709551615;
// such results are read as -1 and the test completes.
func TestServerMinusOneAsUint64(t *testing.T) {
	addr, reports, _ := testServer(t, 2*time.Second)
	r := dialRaw(t, addr)
	d := r.toRunning(`{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":1024,"client_version":"3.12"}`)
	d.Write(make([]byte, 65536))
	time.Sleep(100 * time.Millisecond)
	r.ctrl.Write([]byte{byte(TestEnd)})
	r.expect(ExchangeResults)
	writeRaw(r.ctrl, []byte(`{"cpu_util_total":1.5,"cpu_util_user":1,"cpu_util_system":0.5,"sender_has_retransmits":18446744073709551615,`+
		`"streams":[{"id":1,"bytes":65536,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":0.1}]}`))
	m, err := readJSON(r.ctrl, MaxResultsJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseResults(m); err != nil {
		t.Errorf("server results do not parse: %v", err)
	}
	r.expect(DisplayResults)
	r.ctrl.Write([]byte{byte(IperfDone)})
	time.Sleep(100 * time.Millisecond)
	reps := reports()
	if len(reps) != 1 || reps[0].Error != "" {
		t.Fatalf("reports: %+v", reps)
	}
	s := reps[0].End.Streams[0]
	if s.Sender == nil || s.Sender.Retransmits != nil || s.Sender.Bytes != 65536 || s.Receiver.Bytes != 65536 {
		t.Errorf("stream summary: sender %+v receiver %+v (retransmits -1 must read as not applicable)", s.Sender, s.Receiver)
	}
}

func TestNumbers(t *testing.T) {
	m, err := decodeObject([]byte(`{"a":18446744073709551615,"b":-1,"c":2.5,"d":true,"e":"x","f":9223372036854775808}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"a": -1, "b": -1, "c": 2.5, "d": 1, "f": -1} {
		if got, ok := num(m, k); !ok || got != want {
			t.Errorf("num(%s) = %v %v, want %v", k, got, ok, want)
		}
	}
	if _, ok := num(m, "e"); ok {
		t.Error("a string read as a number")
	}
	if streamID(0) != 1 || streamID(1) != 3 || streamID(2) != 4 {
		t.Error("stream ids must go 1, 3, 4")
	}
}

// FuzzControlMessages feeds arbitrary bytes to the control-message reader and both JSON
// parsers: they may refuse, never panic or read past the cap.
func FuzzControlMessages(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x10{\"tcp\":true}   "))
	f.Add(append([]byte{0, 0, 0, byte(len(tcpParams))}, tcpParams...))
	res := `{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":-1,"streams":[{"id":1,"bytes":5,"retransmits":-1,"jitter":0,"errors":0,"packets":0}]}`
	f.Add(append([]byte{0, 0, 0, byte(len(res))}, res...))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readJSON(bytes.NewReader(b), MaxParamsJSON)
		if err != nil {
			return
		}
		if p, err := parseParams(m); err == nil {
			if p.Parallel < 1 || p.Parallel > MaxParallel || p.Len <= 0 {
				t.Fatalf("accepted params out of range: %+v", p)
			}
			_ = p.paramsJSON()
		}
		if r, err := parseResults(m); err == nil {
			_ = r.toJSON()
		}
	})
}

// TestNoIntervalLost: 20 one-second tests with a quarter-second interval, one and two
// streams: every run reports four intervals on both sides, the last one ending at the
// end of the test, none lost to the end racing the last tick and none a sliver after it.
func TestNoIntervalLost(t *testing.T) {
	addr, reports, _ := testServer(t, 10*time.Second)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	for i := 0; i < 20; i++ {
		c := &Client{Host: host, Port: p, Version: "test", Interval: 250 * time.Millisecond,
			Params: Params{Time: 1, Parallel: 1 + i%2, Bandwidth: 10e6}}
		rep, err := c.Run(context.Background())
		var busy *ServerError
		for try := 0; errors.As(err, &busy) && busy.State == AccessDenied && try < 50; try++ {
			time.Sleep(100 * time.Millisecond) // the server is still closing the last test
			rep, err = c.Run(context.Background())
		}
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		// Four, the last ending at 1 s; a fifth only as the remnant of an end that a
		// loaded machine delayed past a tenth of an interval (stock prints it too).
		n := len(rep.Intervals)
		remnant := n == 5 && rep.Intervals[4].Sum.Seconds < 0.1 && rep.Intervals[3].Sum.End >= 0.95
		if n != 4 && !remnant || n > 0 && (rep.Intervals[n-1].Sum.End < 0.95 || rep.Intervals[n-1].Sum.End > 1.1) {
			t.Errorf("run %d (-P %d): %d intervals, the last ending at %.3f s; want 4, the last at 1 s", i, 1+i%2, n, lastEnd(rep))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(reports()) < 20 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for i, r := range reports() {
		// The server reports every second (iperf3's server does not take -i).
		if n := len(r.Intervals); n != 1 {
			t.Errorf("server, run %d: %d intervals, the last ending at %.3f s; want 1", i, n, lastEnd(r))
		}
	}
}

func lastEnd(r *Report) float64 {
	if len(r.Intervals) == 0 {
		return 0
	}
	return r.Intervals[len(r.Intervals)-1].Sum.End
}

// TestParamsOfEveryVersion: the parameters iperf3 3.9 to 3.18 (and its development
// branch, with gso, gro, skip_rx_copy and mptcp) send are taken; what linerate applies
// is read, the rest left alone; an SCTP test is refused with IERECVPARAMS's message.
func TestParamsOfEveryVersion(t *testing.T) {
	docs := map[string]string{
		"3.9":  `{"tcp":true,"omit":0,"time":10,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.9"}`,
		"3.12": `{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":131072,"bandwidth":50000000,"pacing_timer":1000,"zerocopy":1,"fqrate":100000000,"server_affinity":0,"extra_data":"x","client_version":"3.12"}`,
		"3.18": `{"udp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":1448,"bandwidth":1048576,"burst":10,"pacing_timer":1000,"dont_fragment":1,"udp_counters_64bit":1,"repeating_payload":1,"congestion_used":"cubic","client_version":"3.18"}`,
		"dev":  `{"udp":true,"omit":0,"time":2,"parallel":1,"len":1448,"bandwidth":1048576,"pacing_timer":1000,"gso":1,"gso_dg_size":1448,"gso_bf_size":65507,"gro":1,"gro_bf_size":65507,"skip_rx_copy":1,"mptcp":1,"client_version":"3.19+"}`,
	}
	for v, doc := range docs {
		m, err := decodeObject([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		p, err := parseParams(m)
		if err != nil {
			t.Errorf("iperf3 %s's parameters refused: %v", v, err)
			continue
		}
		switch v {
		case "3.12":
			if !p.Local.ZeroCopy || p.FQRate != 100e6 || !p.HasServerAffinity || p.ServerAffinity != 0 || p.ExtraData != "x" || p.Parallel != 2 || !p.Reverse {
				t.Errorf("3.12: %+v", p)
			}
		case "3.18":
			if p.Burst != 10 || !p.DontFragment || !p.UDPCounters64Bit || !p.RepeatingPayload || p.Len != 1448 {
				t.Errorf("3.18: %+v", p)
			}
		}
	}
	m, _ := decodeObject([]byte(`{"sctp":true,"time":1,"parallel":1}`))
	if _, err := parseParams(m); err == nil {
		t.Error("an SCTP test accepted")
	}
}

// TestServerOutputOnlyAsked: a server that sends its output unasked does not make the
// client print it (stock iperf3 prints it only with --get-server-output); asked, it does.
func TestServerOutputOnlyAsked(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var srvText bytes.Buffer
	var mu sync.Mutex
	srv := &Server{Version: "test", Text: lockedWriter{&mu, &srvText}, sendOutputUnasked: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	defer func() { cancel(); ln.Close(); <-done }()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	for _, asked := range []bool{false, true} {
		var out bytes.Buffer
		c := &Client{Host: host, Port: p, Version: "test", Text: &out, Params: Params{Time: 1, Bandwidth: 10e6, GetServerOutput: asked}}
		rep, err := c.Run(context.Background())
		var busy *ServerError
		for try := 0; errors.As(err, &busy) && busy.State == AccessDenied && try < 50; try++ {
			time.Sleep(100 * time.Millisecond)
			out.Reset()
			rep, err = c.Run(context.Background())
		}
		if err != nil {
			t.Fatalf("asked %v: %v", asked, err)
		}
		printed := strings.Contains(out.String(), "Server output:")
		if printed != asked || (rep.ServerOutputText != "") != asked {
			t.Errorf("asked %v: printed %v, in the report %q:\n%s", asked, printed, rep.ServerOutputText, out.String())
		}
	}
}

// TestServerSeesControlClosed: a client that closes its control connection once told to
// create its streams frees the one-test server at once, not after the idle time (20 s
// here; the next client is given 3).
func TestServerSeesControlClosed(t *testing.T) {
	for _, tc := range []struct{ name, params string }{
		{"tcp", tcpParams},
		{"udp", `{"udp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":1,"len":1024,"bandwidth":1000000,"client_version":"3.12"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _, logs := testServer(t, 20*time.Second)
			r := dialRaw(t, addr)
			r.ctrl.Write(r.cookie)
			r.expect(ParamExchange)
			writeRaw(r.ctrl, []byte(tc.params))
			r.expect(CreateStreams)
			start := time.Now()
			r.ctrl.Close()
			next(t, addr, 3*time.Second)
			t.Logf("next client served %v after the close", time.Since(start).Round(time.Millisecond))
			if !strings.Contains(logs(), "closed its control connection") {
				t.Errorf("log does not say the client left:\n%s", logs())
			}
		})
	}
}

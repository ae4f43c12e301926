package netboot

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tftpFixture is a server on a loopback port serving a boot directory, and what it
// reported.
type tftpFixture struct {
	dir   string
	addr  *net.UDPAddr
	srv   *TFTP
	mu    sync.Mutex
	done  []Fetch
	ended chan Fetch
}

func newTFTPFixture(t *testing.T, made map[string][]byte) *tftpFixture {
	t.Helper()
	f := &tftpFixture{dir: t.TempDir(), ended: make(chan Fetch, 256)}
	srv, err := NewTFTP(f.dir, made, func(x Fetch) {
		f.mu.Lock()
		f.done = append(f.done, x)
		f.mu.Unlock()
		f.ended <- x
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f.addr, f.srv = conn.LocalAddr().(*net.UDPAddr), srv
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conn) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return f
}

// next is the next transfer the server reported, within d.
func (f *tftpFixture) next(t *testing.T, d time.Duration) Fetch {
	t.Helper()
	select {
	case x := <-f.ended:
		return x
	case <-time.After(d):
		t.Fatalf("no transfer ended within %v", d)
		return Fetch{}
	}
}

func (f *tftpFixture) write(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(f.dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (make test installs %s)", name, pkg)
		}
		t.Skipf("no %s", name)
	}
	return p
}

// TestTFTPWithAtftp: Debian's atftp, a stock client, fetches a 10 MB image, a file of a
// whole number of blocks (an empty last block) and a file past the block number's wrap,
// with and without every option; each arrives byte for byte, and the server reports
// what it granted.
func TestTFTPWithAtftp(t *testing.T) {
	atftp := needTool(t, "atftp", "atftp")
	f := newTFTPFixture(t, map[string][]byte{"boot.scr.uimg": []byte("made in memory")})
	image := randomBytes(t, 10<<20)
	f.write(t, "linerate-zc702.itb", image)
	f.write(t, "whole.bin", randomBytes(t, 1468*3))
	f.write(t, "sub/wrap.bin", randomBytes(t, 70000*8+3))
	cases := []struct {
		name          string
		opts          []string
		blksize, wind int
	}{
		{"linerate-zc702.itb", nil, 512, 1},
		{"linerate-zc702.itb", []string{"blksize 1468", "tsize 0", "timeout 2"}, 1468, 1},
		{"linerate-zc702.itb", []string{"blksize 1468", "tsize 0", "windowsize 16"}, 1468, 16},
		{"linerate-zc702.itb", []string{"blksize 1024", "windowsize 200"}, 1024, MaxWindow},
		{"linerate-zc702.itb", []string{"blksize 65464", "windowsize 200"}, 65464, 2},
		{"whole.bin", []string{"blksize 1468"}, 1468, 1},
		{"/sub/wrap.bin", []string{"blksize 8", "windowsize 32"}, 8, 32},
		{"boot.scr.uimg", []string{"tsize 0"}, 512, 1},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "got")
		args := []string{"-g", "-r", c.name, "-l", out}
		for _, o := range c.opts {
			args = append(args, "--option", o)
		}
		args = append(args, f.addr.IP.String(), fmt.Sprint(f.addr.Port))
		start := time.Now()
		if b, err := exec.Command(atftp, args...).CombinedOutput(); err != nil {
			t.Fatalf("atftp %v: %v\n%s", c.opts, err, b)
		}
		took := time.Since(start)
		got, _ := os.ReadFile(out)
		want, _ := os.ReadFile(filepath.Join(f.dir, strings.TrimPrefix(c.name, "/")))
		if c.name == "boot.scr.uimg" {
			want = []byte("made in memory")
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s %v: got %d bytes, want %d identical", c.name, c.opts, len(got), len(want))
		}
		x := f.next(t, 5*time.Second)
		if x.Err != nil || x.Bytes != int64(len(want)) || x.BlockSize != c.blksize || x.Window != c.wind {
			t.Errorf("%s %v: reported %+v, want %d bytes, blksize %d, window %d", c.name, c.opts, x, len(want), c.blksize, c.wind)
		}
		t.Logf("%s %v: %d bytes in %v (%.1f MiB/s)", c.name, c.opts, len(got), took.Round(time.Millisecond), float64(len(got))/took.Seconds()/(1<<20))
	}
}

// TestTFTPWithCurl: curl's TFTP client (blksize, tsize) fetches the image too.
func TestTFTPWithCurl(t *testing.T) {
	curl := needTool(t, "curl", "curl")
	f := newTFTPFixture(t, nil)
	image := randomBytes(t, 3<<20+17)
	f.write(t, "linerate-zc702.itb", image)
	out := filepath.Join(t.TempDir(), "got")
	url := fmt.Sprintf("tftp://%s/linerate-zc702.itb", f.addr)
	if b, err := exec.Command(curl, "-sS", "--max-time", "30", "--tftp-blksize", "1468", "-o", out, url).CombinedOutput(); err != nil {
		t.Fatalf("curl: %v\n%s", err, b)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, image) {
		t.Errorf("curl got %d bytes, want the %d of the image", len(got), len(image))
	}
	if x := f.next(t, 5*time.Second); x.Err != nil || x.BlockSize != 1468 {
		t.Errorf("reported %+v", x)
	}
}

// rawClient speaks TFTP by hand, to send what no stock client would.
type rawClient struct {
	t    *testing.T
	c    *net.UDPConn
	srv  *net.UDPAddr
	peer *net.UDPAddr // the transfer's port, once the server answered
}

func newRawClient(t *testing.T, srv *net.UDPAddr) *rawClient {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, srv: srv}
}

func rrq(name, mode string, opts ...string) []byte {
	b := []byte{0, opRRQ}
	for _, s := range append([]string{name, mode}, opts...) {
		b = append(append(b, s...), 0)
	}
	return b
}

func (r *rawClient) send(b []byte) {
	if _, err := r.c.WriteToUDP(b, r.srv); err != nil {
		r.t.Fatal(err)
	}
}

// recv is the next packet, or nil after d.
func (r *rawClient) recv(d time.Duration) []byte {
	buf := make([]byte, 70000)
	r.c.SetReadDeadline(time.Now().Add(d))
	n, from, err := r.c.ReadFromUDP(buf)
	if err != nil {
		return nil
	}
	r.peer = from
	return buf[:n]
}

func (r *rawClient) ack(block uint16) {
	b := []byte{0, opACK, byte(block >> 8), byte(block)}
	if _, err := r.c.WriteToUDP(b, r.peer); err != nil {
		r.t.Fatal(err)
	}
}

// errorCode is a packet's TFTP error code and message, or -1 when it is no error.
func errorCode(b []byte) (int, string) {
	if len(b) < 4 || binary.BigEndian.Uint16(b) != opERROR {
		return -1, ""
	}
	return int(binary.BigEndian.Uint16(b[2:])), strings.TrimRight(string(b[4:]), "\x00")
}

// TestTFTPHostileRequests: names that lead out of the boot directory, symlinks out of
// it, long names, other modes, writes and stray packets get an error and nothing else;
// a symlink that stays inside is served.
func TestTFTPHostileRequests(t *testing.T) {
	f := newTFTPFixture(t, nil)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("not for boards"), 0o644)
	f.write(t, "ok.bin", []byte("inside"))
	os.Symlink(outside, filepath.Join(f.dir, "out-abs"))
	os.Symlink("../"+filepath.Base(filepath.Dir(outside))+"/secret", filepath.Join(f.dir, "out-rel"))
	os.Symlink("ok.bin", filepath.Join(f.dir, "in-link"))
	os.Mkdir(filepath.Join(f.dir, "adir"), 0o755)
	fifo := filepath.Join(f.dir, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pkt  []byte
		code int
		why  string
	}{
		{rrq("../secret", "octet"), errAccess, "'..'"},
		{rrq("/../../etc/passwd", "octet"), errAccess, "'..'"},
		{rrq("sub/../../x", "octet"), errAccess, "'..'"},
		{rrq("out-abs", "octet"), errAccess, "not a file of the boot directory"},
		{rrq("out-rel", "octet"), errAccess, "not a file of the boot directory"},
		{rrq("adir", "octet"), errAccess, "not a regular file"},
		{rrq("fifo", "octet"), errAccess, "not a regular file"},
		{rrq("/", "octet"), errAccess, "want a file"},
		{rrq(strings.Repeat("a", 300), "octet"), errAccess, "1..255"},
		{rrq("ok.bin\x01", "octet"), errAccess, "control characters"},
		{rrq("a\\b", "octet"), errAccess, "backslashes"},
		{rrq("missing.itb", "octet"), errNotFound, "no missing.itb"},
		{rrq("ok.bin", "netascii"), errIllegal, "octet mode only"},
		{rrq("ok.bin", "octet", "blksize"), errIllegal, "pairs"},
		{[]byte{0, opRRQ, 'x'}, errIllegal, "zero byte"},
		{[]byte{0, opWRQ, 'x', 0, 'o', 'c', 't', 'e', 't', 0}, errAccess, "read-only"},
		{[]byte{0, 9, 0, 0}, errIllegal, "unknown opcode"},
		{[]byte{0, opACK, 0, 1}, errUnknownTID, "no transfer"},
		{append(rrq("ok.bin", "octet"), make([]byte, maxRequest)...), errIllegal, "at most"},
	}
	for _, c := range cases {
		r := newRawClient(t, f.addr)
		r.send(c.pkt)
		got := r.recv(2 * time.Second)
		code, msg := errorCode(got)
		if code != c.code || !strings.Contains(msg, c.why) {
			t.Errorf("%.40q: got %q (code %d), want error %d saying %q", c.pkt, got, code, c.code, c.why)
		}
		if extra := r.recv(200 * time.Millisecond); extra != nil {
			t.Errorf("%.40q: more after the error: %q", c.pkt, extra)
		}
	}
	r := newRawClient(t, f.addr)
	r.send(rrq("in-link", "octet"))
	if got := r.recv(2 * time.Second); !bytes.Equal(got, []byte("\x00\x03\x00\x01inside")) {
		t.Errorf("a symlink inside the directory: got %q, want its file's one block", got)
	}
	r.ack(1)
}

// TestTFTPOptions: options out of the RFCs' ranges and unknown ones are left out of
// the acknowledgement; the granted ones come back, capped where the station grants less.
func TestTFTPOptions(t *testing.T) {
	f := newTFTPFixture(t, nil)
	f.write(t, "ok.bin", randomBytes(t, 100))
	cases := []struct {
		opts []string
		oack string // "" means no OACK: DATA at once
	}{
		{[]string{"blksize", "0", "windowsize", "0", "timeout", "0", "color", "blue"}, ""},
		{[]string{"blksize", "7", "timeout", "256", "windowsize", "-3", "tsize", "x"}, ""},
		{[]string{"BLKSIZE", "65535", "Timeout", "1", "tsize", "0", "windowsize", "65535"}, "blksize\x0065464\x00timeout\x001\x00tsize\x00100\x00windowsize\x002\x00"},
		{[]string{"blksize", "1468", "blksize", "8"}, "blksize\x001468\x00"},
	}
	for _, c := range cases {
		r := newRawClient(t, f.addr)
		r.send(rrq("ok.bin", "octet", c.opts...))
		got := r.recv(2 * time.Second)
		switch {
		case c.oack == "" && (len(got) < 4 || got[1] != opDATA || len(got) != 104):
			t.Errorf("%q: got %q, want the one DATA block of 100 bytes", c.opts, got)
		case c.oack != "" && string(got) != "\x00\x06"+c.oack:
			t.Errorf("%q: got %q, want OACK %q", c.opts, got, c.oack)
		}
		if c.oack != "" {
			r.ack(0)
			if d := r.recv(2 * time.Second); len(d) != 104 {
				t.Errorf("%q: after the OACK got %q, want the data", c.opts, d)
			}
		}
		r.ack(1)
		if x := f.next(t, 5*time.Second); x.Err != nil || x.Bytes != 100 {
			t.Errorf("%q: reported %+v", c.opts, x)
		}
	}
}

// TestTFTPSilentClient: a client that stops acknowledging is given the window again
// for maxRetries timeouts and dropped; duplicate acknowledgements send nothing again;
// another port's packets are told they are no part of the transfer.
func TestTFTPSilentClient(t *testing.T) {
	f := newTFTPFixture(t, nil)
	f.write(t, "big.bin", randomBytes(t, 512*10))
	r := newRawClient(t, f.addr)
	r.send(rrq("big.bin", "octet", "timeout", "1"))
	if got := r.recv(2 * time.Second); string(got) != "\x00\x06timeout\x001\x00" {
		t.Fatalf("got %q, want the OACK", got)
	}
	r.ack(0)
	if got := r.recv(2 * time.Second); len(got) != 516 || got[3] != 1 {
		t.Fatalf("got %q, want block 1", got)
	}
	r.ack(1)
	if got := r.recv(2 * time.Second); len(got) != 516 || got[3] != 2 {
		t.Fatalf("got %q, want block 2", got)
	}
	r.ack(1) // a duplicate: no block 2 at once
	if got := r.recv(500 * time.Millisecond); got != nil {
		t.Errorf("a duplicate ACK brought %d bytes at once, want nothing before the timeout", len(got))
	}
	stranger := newRawClient(t, r.peer)
	stranger.peer = r.peer
	stranger.ack(2)
	if code, _ := errorCode(stranger.recv(2 * time.Second)); code != errUnknownTID {
		t.Errorf("another port's ACK: got code %d, want %d", code, errUnknownTID)
	}
	start := time.Now()
	resent := 0
	for r.recv(3*time.Second) != nil {
		resent++
	}
	x := f.next(t, 10*time.Second)
	if x.Err == nil || !strings.Contains(x.Err.Error(), "stopped acknowledging") || x.Bytes != 512 {
		t.Errorf("reported %+v, want a transfer dropped after block 1", x)
	}
	if resent < maxRetries-1 || resent > maxRetries+1 {
		t.Errorf("block 2 sent again %d times, want about %d", resent, maxRetries)
	}
	t.Logf("dropped after %v and %d resends", time.Since(start).Round(time.Millisecond), resent)
}

// TestTFTPBusy: past MaxTransfers at once a request is told the station is busy; a
// client's own request sent twice starts one transfer; Close ends transfers at once.
func TestTFTPBusy(t *testing.T) {
	f := newTFTPFixture(t, nil)
	f.write(t, "ok.bin", randomBytes(t, 2000))
	clients := make([]*rawClient, MaxTransfers)
	for i := range clients {
		clients[i] = newRawClient(t, f.addr)
		clients[i].send(rrq("ok.bin", "octet", "timeout", "30"))
		if got := clients[i].recv(2 * time.Second); got == nil || got[1] != opOACK {
			t.Fatalf("client %d: got %q, want the OACK", i, got)
		}
	}
	clients[0].send(rrq("ok.bin", "octet", "timeout", "30"))
	if got := clients[0].recv(500 * time.Millisecond); got != nil {
		t.Errorf("the same request again: got %q, want nothing (the transfer is under way)", got)
	}
	late := newRawClient(t, f.addr)
	late.send(rrq("ok.bin", "octet"))
	if code, msg := errorCode(late.recv(2 * time.Second)); code != errNotDefined || !strings.Contains(msg, "busy") {
		t.Errorf("request %d: got code %d %q, want busy", MaxTransfers+1, code, msg)
	}
	if x := f.next(t, 2*time.Second); x.Err == nil || !strings.Contains(x.Err.Error(), "too many") {
		t.Errorf("reported %+v", x)
	}
	start := time.Now()
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v with %d transfers waiting on 30 s timeouts", d, MaxTransfers)
	}
}

// TestTFTPBadBootDir: a boot directory that is not there is an error naming it.
func TestTFTPBadBootDir(t *testing.T) {
	_, err := NewTFTP("/nonexistent/boot", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "--boot-dir /nonexistent/boot") {
		t.Errorf("got %v", err)
	}
}

// FuzzRequest: any request body parses without panic, and what is granted stays in
// the RFCs' ranges.
func FuzzRequest(f *testing.F) {
	f.Add(rrq("boot.scr.uimg", "octet", "blksize", "1468", "tsize", "0", "timeout", "5", "windowsize", "8")[2:])
	f.Add([]byte("x\x00netascii\x00"))
	f.Add([]byte("\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		if len(r.opts) > maxOptions {
			t.Fatalf("%d options", len(r.opts))
		}
		p := negotiate(r.opts, 12345)
		if p.blksize < minBlock || p.blksize > maxBlock || p.window < 1 || p.window > MaxWindow || (p.window > 1 && p.window*p.blksize > maxWindowBytes) || p.wait < time.Second || p.wait > 255*time.Second {
			t.Fatalf("granted %+v", p)
		}
		cleanName(r.name)
	})
}

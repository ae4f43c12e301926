package iperf3

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"testing"
)

// tcpPair returns the accepted end of a loopback connection whose peer sends total
// bytes and closes.
func tcpPair(t *testing.T, total int) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 100000)
		for sent := 0; sent < total; {
			n, err := c.Write(buf[:min(len(buf), total-sent)])
			if err != nil {
				return
			}
			sent += n
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRawReaders: the kernel-side discard and the pooled copy each count every byte the
// peer sent, end at the peer's close, read no more than a buffer a call, and decline
// what is not a TCP socket.
func TestRawReaders(t *testing.T) {
	const total = 24<<20 + 12345
	for _, r := range []struct {
		name string
		read func(net.Conn, func(int)) bool
		max  int
	}{{"discardTCP", discardTCP, 4 << 20}, {"copyTCP", copyTCP, 1 << 20}} {
		c := tcpPair(t, total)
		var got, calls, most int
		if !r.read(c, func(n int) { got += n; calls++; most = max(most, n) }) {
			t.Fatalf("%s declined a TCP connection", r.name)
		}
		if got != total || most > r.max {
			t.Errorf("%s: %d bytes in %d reads of at most %d, the peer sent %d (want reads of at most %d)", r.name, got, calls, most, total, r.max)
		}
		a, b := net.Pipe()
		if r.read(a, func(int) {}) {
			t.Errorf("%s took a net.Pipe", r.name)
		}
		a.Close()
		b.Close()
	}
}

// readChars is the process's rchar (/proc/self/io): bytes read through read(2) and its
// kin, which a conn.Read adds to and recv(MSG_TRUNC) does not.
func readChars(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("rchar: ")); ok {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// TestReceiveModes: a receiving stream discards in the kernel by default and reads into
// memory with copyReceived; both count the same bytes.
func TestReceiveModes(t *testing.T) {
	const total = 64 << 20
	for _, copyRecv := range []bool{false, true} {
		tt := newTest(&Params{Len: 128 << 10})
		tt.copyReceived = copyRecv
		tt.running.Store(true)
		s := &stream{conn: tcpPair(t, total), t: tt}
		before := readChars(t)
		s.recvTCP()
		read := readChars(t) - before
		if got := s.bytes.Load(); got != total {
			t.Errorf("copy=%v: counted %d bytes, the peer sent %d", copyRecv, got, total)
		}
		if copyRecv && read < total {
			t.Errorf("--copy: the process read %d bytes into memory, want all %d", read, total)
		}
		if !copyRecv && read > total/8 {
			t.Errorf("default: the process read %d of %d bytes into memory; the kernel should discard them", read, total)
		}
	}
}

// TestBufStack: the buffer given back last is lent first, at most keep are kept, and an
// empty stack makes a new buffer of its size.
func TestBufStack(t *testing.T) {
	b := &bufStack{size: 16, keep: 2}
	x, y, z := b.get(), b.get(), b.get()
	if len(x) != 16 || &x[0] == &y[0] {
		t.Fatalf("get: %d bytes, distinct %v", len(x), &x[0] != &y[0])
	}
	b.put(x)
	b.put(y)
	b.put(z) // over keep: dropped
	if got := b.get(); &got[0] != &y[0] {
		t.Error("the last buffer given back was not lent first")
	}
	if got := b.get(); &got[0] != &x[0] {
		t.Error("the stack did not keep the first buffer")
	}
	if got := b.get(); &got[0] == &z[0] {
		t.Error("a buffer over keep was kept")
	}
}

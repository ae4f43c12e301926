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

// TestDiscardTCP: the kernel-side discard counts every byte the peer sent, ends at the
// peer's close, and declines what is not a TCP socket.
func TestDiscardTCP(t *testing.T) {
	const total = 24<<20 + 12345
	c := tcpPair(t, total)
	var got, calls int
	if !discardTCP(c, func(n int) { got += n; calls++ }) {
		t.Fatal("discardTCP declined a TCP connection")
	}
	if got != total {
		t.Errorf("discarded %d bytes in %d reads, the peer sent %d", got, calls, total)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if discardTCP(a, func(int) {}) {
		t.Error("discardTCP took a net.Pipe")
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

package iperf3

import (
	"net"
	"testing"
	"time"
)

// TestSettleReadsTheQueue: what had arrived when TEST_END came is counted however slowly
// the stream reads it. 64 KiB wait in the server's socket; its reader takes them 16 KiB
// at a time, 60 ms apart (longer than the 50 ms quiet window settle once waited for,
// which returned with most of them unread); settle returns once the queue is read out,
// with every byte counted.
func TestSettleReadsTheQueue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const total = 64 << 10
	if _, err := c.Write(make([]byte, total)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		n, ok := unread(srv)
		if !ok {
			t.Fatal("SIOCINQ cannot be read on a TCP socket")
		}
		if n == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bytes queued at the server after 5 s", n, total)
		}
	}
	tt := newTest(&Params{})
	s := &stream{conn: srv, t: tt}
	tt.streams = []*stream{s}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16<<10)
		for s.bytes.Load() < total {
			time.Sleep(60 * time.Millisecond)
			n, err := srv.Read(buf)
			s.bytes.Add(uint64(n))
			if err != nil {
				return
			}
		}
	}()
	tt.settle()
	got := s.bytes.Load()
	<-done
	if got != total {
		t.Errorf("settle returned with %d of the %d bytes queued counted", got, total)
	}
	if n, _ := unread(srv); n != 0 {
		t.Errorf("%d bytes still queued after settle", n)
	}
}

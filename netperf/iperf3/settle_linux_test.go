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
	const total = 64 << 10
	tt, s, _, srv := queuedStream(t, total, &Params{})
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

// TestSettleStopsAtTEST_END: a test that ends on its time counts what had reached the
// server by TEST_END, not what the client's send buffer still held: 64 KiB wait in the
// server's socket when settle begins; a MiB more comes after (written once the reader
// has begun, after settle's look), read 16 KiB every 10 ms. Settle returns with the 64
// KiB counted, give or take the read under way, the report says that, and the stream
// reads on. Waiting for the stream to go quiet counted some 800 KiB of the MiB.
func TestSettleStopsAtTEST_END(t *testing.T) {
	const queued, more = 64 << 10, 1 << 20
	tt, s, c, srv := queuedStream(t, queued, &Params{Time: 1})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16<<10)
		for first := true; ; first = false {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			n, err := srv.Read(buf)
			s.bytes.Add(uint64(n))
			if err != nil {
				return
			}
			if first {
				go c.Write(make([]byte, more))
			}
		}
	}()
	tt.settle()
	r := s.result(time.Now())
	time.Sleep(50 * time.Millisecond)
	after := s.bytes.Load()
	close(stop)
	<-done
	if r.Bytes < queued || r.Bytes > queued+16<<10 {
		t.Errorf("settle counted %d bytes; want the %d queued at TEST_END, at most a read more", r.Bytes, queued)
	}
	if after <= r.Bytes {
		t.Errorf("the stream read %d bytes in all, the report says %d: the test wants the stream still reading after settle", after, r.Bytes)
	}
}

// TestSettleCountsAByteLimit: a test that ends on a byte count (-n) counts every byte
// the client wrote, also what arrives after TEST_END.
func TestSettleCountsAByteLimit(t *testing.T) {
	const first, later = 64 << 10, 256 << 10
	tt, s, c, srv := queuedStream(t, first, &Params{Bytes: first + later})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16<<10)
		for i := 0; s.bytes.Load() < first+later; i++ {
			time.Sleep(2 * time.Millisecond)
			n, err := srv.Read(buf)
			s.bytes.Add(uint64(n))
			if err != nil {
				return
			}
			if i == 0 {
				go c.Write(make([]byte, later))
			}
		}
	}()
	tt.settle()
	<-done
	if r := s.result(time.Now()); r.Bytes != first+later {
		t.Errorf("settle of a -n test counted %d bytes; want all %d the client wrote", r.Bytes, first+later)
	}
}

// queuedStream is a test of p with one receiving stream on a loopback connection, n
// bytes from the client (c) waiting in the server's socket (srv) and none read yet.
func queuedStream(t *testing.T, n int, p *Params) (tt *test, s *stream, c, srv net.Conn) {
	t.Helper()
	send, recv := loopbackPairs(t, 1)
	c, srv = send[0], recv[0]
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		got, ok := unread(srv)
		if !ok {
			t.Fatal("SIOCINQ cannot be read on a TCP socket")
		}
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bytes queued at the server after 5 s", got, n)
		}
	}
	tt = newTest(p)
	s = &stream{conn: srv, t: tt}
	tt.streams = []*stream{s}
	return tt, s, c, srv
}

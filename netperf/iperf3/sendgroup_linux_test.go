package iperf3

import (
	"context"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// oneProc runs the test with GOMAXPROCS 1 (every sender in one loop), and
// gives the process back what it had.
func oneProc(t *testing.T) {
	procs := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
}

// loopbackPairs makes n connected TCP pairs on loopback: the sending ends and the
// receiving ends.
func loopbackPairs(t *testing.T, n int) (send, recv []net.Conn) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		r, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		send, recv = append(send, c), append(recv, r)
		t.Cleanup(func() { c.Close(); r.Close() })
	}
	return send, recv
}

// TestSendersWriteInALoopPerProcessor: a test's TCP senders are dealt to one loop a
// processor, as many loops as streams at most; the streams the per-stream loop serves
// (paced, file, zero-copy, UDP) are in none.
func TestSendersWriteInALoopPerProcessor(t *testing.T) {
	send, _ := loopbackPairs(t, 3)
	mk := func(p Params, conns ...net.Conn) *test {
		tt := newTest(&p)
		for i, c := range conns {
			tt.streams = append(tt.streams, &stream{id: i + 1, sender: true, conn: c, t: tt})
		}
		return tt
	}
	ids := func(g [][]*stream) (s string) {
		for _, l := range g {
			s += "["
			for _, st := range l {
				s += strconv.Itoa(st.id)
			}
			s += "]"
		}
		return s
	}
	oneProc(t)
	if g := ids(mk(Params{Len: 1024}, send...).senderGroups()); g != "[123]" {
		t.Fatalf("one processor, 3 TCP senders: loops %s; want [123]", g)
	}
	mixed := mk(Params{Len: 1024}, send...)
	mixed.streams[1].sender = false // -R's other direction, --bidir
	if g := ids(mixed.senderGroups()); g != "[13]" {
		t.Errorf("--bidir: loops %s; want the two senders in one, [13]", g)
	}
	for name, p := range map[string]Params{"-b": {Bandwidth: 1e6}, "-Z": {Local: LocalOpts{ZeroCopy: true}}, "-F": {Local: LocalOpts{File: "x"}}, "-u": {UDP: true}} {
		if g := mk(p, send...).senderGroups(); g != nil {
			t.Errorf("%s: loops %s; want each stream its own goroutine", name, ids(g))
		}
	}
	if g := ids(mk(Params{}, send[0]).senderGroups()); g != "[1]" {
		t.Errorf("one stream: loops %s; want [1]", g)
	}
	runtime.GOMAXPROCS(2)
	if g := ids(mk(Params{}, send...).senderGroups()); g != "[13][2]" {
		t.Errorf("two processors, 3 senders: loops %s; want [13][2]", g)
	}
	runtime.GOMAXPROCS(4)
	if g := ids(mk(Params{}, send...).senderGroups()); g != "[1][2][3]" {
		t.Errorf("four processors, 3 senders: loops %s; want a loop a stream (iperf3 3.16+'s threads), [1][2][3]", g)
	}
}

// TestSharedLoopSendsAndEnds: the loop keeps every stream going, counts what the
// receivers get while the test runs, and ends at TEST_END even when every socket is
// full (the peers read nothing), and when a peer goes away the others go on.
func TestSharedLoopSendsAndEnds(t *testing.T) {
	oneProc(t)
	// run runs the loop for wait, then ends the test: how long the loop took to end
	// after TEST_END, and when TEST_END came.
	run := func(tt *test, wait time.Duration) (time.Duration, time.Time) {
		tt.running.Store(true)
		done := make(chan struct{})
		go func() { tt.sendGroup(context.Background(), tt.streams); close(done) }()
		time.Sleep(wait)
		start := time.Now()
		tt.end()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the loop did not end within 5 s of TEST_END")
		}
		return time.Since(start), start
	}
	t.Run("reading peers", func(t *testing.T) {
		send, recv := loopbackPairs(t, 3)
		tt := newTest(&Params{Len: 128 << 10})
		got := make([]atomic.Uint64, len(recv))
		var wg sync.WaitGroup
		for i, c := range send {
			tt.streams = append(tt.streams, &stream{id: i + 1, sender: true, conn: c, t: tt})
			wg.Add(1)
			go func() { defer wg.Done(); n, _ := io.Copy(io.Discard, recv[i]); got[i].Store(uint64(n)) }()
		}
		run(tt, 300*time.Millisecond)
		for _, c := range send {
			c.Close()
		}
		wg.Wait()
		for i, s := range tt.streams {
			if s.bytes.Load() == 0 || s.bytes.Load() > got[i].Load() {
				t.Errorf("stream %d counted %d bytes, its peer got %d; want some, and no more than it got", s.id, s.bytes.Load(), got[i].Load())
			}
			if s.end.IsZero() || s.start.IsZero() {
				t.Errorf("stream %d: start %v end %v; want both set", s.id, s.start, s.end)
			}
		}
	})
	t.Run("full sockets", func(t *testing.T) {
		send, _ := loopbackPairs(t, 3)
		tt := newTest(&Params{Len: 128 << 10})
		for i, c := range send {
			tt.streams = append(tt.streams, &stream{id: i + 1, sender: true, conn: c, t: tt})
		}
		took, _ := run(tt, 300*time.Millisecond)
		t.Logf("ended %v after TEST_END with every socket full", took)
		for _, s := range tt.streams {
			if s.bytes.Load() == 0 {
				t.Errorf("stream %d: nothing written before its socket filled", s.id)
			}
		}
	})
	t.Run("a peer gone", func(t *testing.T) {
		send, recv := loopbackPairs(t, 3)
		tt := newTest(&Params{Len: 128 << 10})
		for i, c := range send {
			tt.streams = append(tt.streams, &stream{id: i + 1, sender: true, conn: c, t: tt})
			if i != 1 {
				go io.Copy(io.Discard, recv[i])
			}
		}
		recv[1].(*net.TCPConn).SetLinger(0)
		recv[1].Close() // a reset: stream 2's next write fails
		_, ended := run(tt, 300*time.Millisecond)
		if s := tt.streams[1]; s.end.IsZero() || !s.end.Before(ended) {
			t.Errorf("the failed stream's end is %v, TEST_END came at %v; want it ended when its write failed, before", s.end, ended)
		}
		before := [3]uint64{}
		for i, s := range tt.streams {
			before[i] = s.bytes.Load()
		}
		if before[0] < 1<<20 || before[2] < 1<<20 {
			t.Errorf("streams 1 and 3 sent %d and %d bytes beside a failed stream; want them going on (over 1 MiB each)", before[0], before[2])
		}
	})
}

// TestSharedLoopLimit: -n through the loops ends the test at its byte count, over it by
// less than a block a loop, and every stream takes part: one loop on one processor, two
// on two.
func TestSharedLoopLimit(t *testing.T) {
	addr, _, _ := testServer(t, 10*time.Second)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	const limit, block = 256 << 20, 128 << 10 // long enough that a loop started late under load still gets its turns
	for _, procs := range []int{1, 2} {
		was := runtime.GOMAXPROCS(procs)
		c := &Client{Host: host, Port: p, Version: "test", ConnectTimeout: time.Second, Params: Params{Bytes: limit, Parallel: 4, Len: block}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, err := c.Run(ctx)
		cancel()
		runtime.GOMAXPROCS(was)
		if err != nil {
			t.Fatal(err)
		}
		sent := rep.End.SumSent.Bytes
		if sent < limit || sent >= limit+uint64(procs)*block {
			t.Errorf("%d processors, -n %d -P 4: %d bytes sent; want at least the limit and under a block a loop more", procs, limit, sent)
		}
		if got := rep.End.SumReceived.Bytes; got != sent {
			t.Errorf("%d processors: the server received %d bytes of the %d sent", procs, got, sent)
		}
		for i, s := range rep.End.Streams {
			if s.Sender == nil || s.Sender.Bytes == 0 {
				t.Errorf("%d processors: stream %d sent nothing; want every stream in its loop's turns", procs, i+1)
			}
		}
	}
}

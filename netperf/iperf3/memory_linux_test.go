package iperf3

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestMemoryPerStream: what a stream costs in memory, server and client together on
// loopback, is a block or two (iperf3's 128 KiB), not megabytes: a -P 128 test on a
// board must not take hundreds of MiB. Measured as the bytes allocated by a -P 64 test
// less those of a -P 1 test, per extra stream, discarding (the default) and with
// --copy. The figure is allocation, not time: no machine's load moves it.
func TestMemoryPerStream(t *testing.T) {
	for _, copyReceived := range []bool{false, true} {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		srv := &Server{IdleTimeout: 10 * time.Second, Version: "test", CopyReceived: copyReceived}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { srv.Serve(ctx, ln); close(done) }()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		p, _ := strconv.Atoi(port)
		alloc := func(parallel int) uint64 {
			c := &Client{Host: "127.0.0.1", Port: p, Version: "test", Params: Params{Time: 1, Parallel: parallel, Bandwidth: 1e6}}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			for try := 0; try < 50; try++ {
				if _, err = c.Run(context.Background()); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond) // the server still closing the last test
			}
			if err != nil {
				t.Fatalf("-P %d: %v", parallel, err)
			}
			time.Sleep(200 * time.Millisecond) // the server's end of the test
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc
		}
		one, many := alloc(1), alloc(64)
		per := (float64(many) - float64(one)) / 63
		t.Logf("copy=%v: -P 1 %.1f MiB, -P 64 %.1f MiB: %.0f KiB a stream (client and server)", copyReceived, float64(one)/(1<<20), float64(many)/(1<<20), per/1024)
		if per > 768<<10 {
			t.Errorf("copy=%v: %.0f KiB allocated a stream; want under 768 KiB (a block a side and the stream's state)", copyReceived, per/1024)
		}
		cancel()
		ln.Close()
		<-done
	}
}

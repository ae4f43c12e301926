package iperf3

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestRunWhenFreeRefused: a stock iperf3 server has no listening socket between two
// tests (it closes it when a test ends and opens it anew); RunWhenFree asks again and
// runs its test once the server listens, and where no server ever listens it gives up
// after about two seconds with iperf3's "Connection refused".
func TestRunWhenFreeRefused(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens on port now
	c := Client{Host: "127.0.0.1", Port: port, Version: "test", Params: Params{Time: 1}}
	start := time.Now()
	_, err = c.RunWhenFree(context.Background())
	var ce *ConnectError
	if !errors.As(err, &ce) || !errors.Is(ce.Err, syscall.ECONNREFUSED) || err.Error() != "unable to connect to server: Connection refused" {
		t.Fatalf("no server: %v, want unable to connect to server: Connection refused", err)
	}
	if el := time.Since(start); el < 1900*time.Millisecond {
		t.Errorf("no server: gave up after %v, without asking again for two seconds", el)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		time.Sleep(500 * time.Millisecond) // the server between two tests
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			t.Error(err)
			return
		}
		defer ln.Close()
		context.AfterFunc(ctx, func() { ln.Close() })
		(&Server{Version: "test", IdleTimeout: 5 * time.Second}).Serve(ctx, ln)
	}()
	rep, err := c.RunWhenFree(context.Background())
	if err != nil || rep.End.Received().Bytes == 0 {
		t.Fatalf("a server listening after 0.5 s: %v", err)
	}
}

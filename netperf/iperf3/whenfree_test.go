package iperf3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
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

// TestRunWhenFreeReset: a stock iperf3 server that closes its listening socket as a test
// ends resets the connections queued on it: the client's cookie, or its read of the
// server's first state, meets a reset before the server said a word. RunWhenFree asks
// again, as for a refused connection; a reset after the server has answered is the
// test's error, not asked again.
func TestRunWhenFreeReset(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); ln.Close(); <-done })
	go func() {
		defer close(done)
		// The first two connections reset at once, unanswered (SO_LINGER 0: an RST).
		for range 2 {
			c, err := ln.AcceptTCP()
			if err != nil {
				t.Error(err)
				return
			}
			c.SetLinger(0)
			c.Close()
		}
		context.AfterFunc(ctx, func() { ln.Close() })
		(&Server{Version: "test", IdleTimeout: 5 * time.Second}).Serve(ctx, ln)
	}()
	c := Client{Host: "127.0.0.1", Port: port, Version: "test", Params: Params{Time: 1}}
	rep, err := c.RunWhenFree(context.Background())
	if err != nil || rep.End.Received().Bytes == 0 {
		t.Fatalf("a server that reset two connections unanswered, then served: %v", err)
	}
	if droppedUnanswered(fmt.Errorf("control connection: %w", syscall.ECONNRESET)) {
		t.Error("a reset after the server answered taken as unanswered")
	}
	if !droppedUnanswered(&unansweredError{what: "send cookie", err: &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.ECONNRESET)}}) {
		t.Error("a reset cookie's write not taken as unanswered")
	}
}

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// ended is what one end printed and how it exited.
type ended struct {
	out, err string
	code     int
}

// started is one iperf3 end running in a namespace: stock's or linerate's.
type started struct {
	cmd         *exec.Cmd
	out, errOut *bytes.Buffer
}

func startEnd(t *testing.T, ns *nstest.NS, stock bool, args ...string) *started {
	t.Helper()
	if !stock {
		cmd, out, errOut := linerateIn(t, ns, append([]string{"iperf3"}, args...)...)
		return &started{cmd, out, errOut}
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name, "iperf3"}, args...)...)
	s := &started{cmd: cmd, out: new(bytes.Buffer), errOut: new(bytes.Buffer)}
	cmd.Stdout, cmd.Stderr = s.out, s.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// wait waits for the end (30 s at most, then kills it by PID).
func (s *started) wait(t *testing.T) ended {
	t.Helper()
	if !waitOrKill(s.cmd, 30*time.Second) {
		t.Errorf("%v did not end within 30 s of its test", s.cmd.Args)
	}
	return ended{s.out.String(), s.errOut.String(), s.cmd.ProcessState.ExitCode()}
}

// stopRun is one test in which one end is sent SIGINT 2.5 s in (ip netns exec execs
// the program: the signal reaches it). It returns the client's and the server's ends.
func stopRun(t *testing.T, cli, srv *nstest.NS, stockClient, stockServer, stopClient bool, args ...string) (client, server ended) {
	t.Helper()
	s := startEnd(t, srv, stockServer, "-s", "-1")
	waitListen(srv, "5201")
	c := startEnd(t, cli, stockClient, append([]string{"-c", "198.18.2.2", "-t", "10"}, args...)...)
	time.Sleep(2500 * time.Millisecond)
	if stopClient {
		c.cmd.Process.Signal(syscall.SIGINT)
	} else {
		s.cmd.Process.Signal(syscall.SIGINT)
	}
	client = c.wait(t)
	server = s.wait(t)
	return client, server
}

// TestIperf3StopsAsStock: a test cut short by Ctrl-C on either end ends as stock
// iperf3's does, whichever end is linerate: the interrupted end prints the interval so
// far and a summary laid out as stock's (the peer's side 0.00 Bytes when its results
// never came), says "interrupt - the client|server has terminated" on stderr and exits
// 1; the other end learns it in stock's words.
func TestIperf3StopsAsStock(t *testing.T) {
	cli, srv := iperfPair(t)
	const (
		clientStopped = "iperf3: interrupt - the client has terminated\n"
		serverStopped = "iperf3: interrupt - the server has terminated\n"
		peerClient    = "iperf3: the client has terminated\n"
		peerServer    = "iperf3: error - the server has terminated\n"
	)
	check := func(who string, got ended, code int, errText string) {
		t.Helper()
		if got.code != code || got.err != errText {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, %q\n%s", who, got.code, got.err, code, errText, got.out)
		}
	}
	for _, mode := range [][]string{{"-b", "50M"}, {"-b", "50M", "-R"}, {"-u", "-b", "10M"}, {"-b", "50M", "--bidir"}} {
		name := strings.Join(mode, " ")
		t.Run(name, func(t *testing.T) {
			// Ctrl-C on the client.
			stockC, stockS := stopRun(t, cli, srv, true, true, true, mode...)
			check("stock client stopped", stockC, 1, clientStopped)
			check("stock server of a stopped client", stockS, 0, peerClient)
			ourC, s := stopRun(t, cli, srv, false, true, true, mode...)
			check("linerate client stopped", ourC, 1, clientStopped)
			check("stock server of linerate's stopped client", s, 0, peerClient)
			sameLayout(t, "linerate client stopped", stockC.out, ourC.out, false)
			_, ourS := stopRun(t, cli, srv, true, false, true, mode...)
			check("linerate server of a stopped client", ourS, 0, peerClient)
			if !strings.Contains(ourS.out, "- - - -") {
				t.Errorf("linerate server of a stopped client: no summary\n%s", ourS.out)
			}
			if mode[len(mode)-1] == "-R" {
				// Stock's server repeats its last interval when a client it receives from
				// stops (a quirk not copied); sending, it is laid out as linerate's.
				sameLayout(t, "linerate server of a stopped client", stockS.out, ourS.out, false)
			}
		})
	}
	// Ctrl-C on the server.
	stockC, stockS := stopRun(t, cli, srv, true, true, false, "-b", "50M")
	check("stock server stopped", stockS, 1, serverStopped)
	check("stock client of a stopped server", stockC, 1, peerServer)
	c, ourS := stopRun(t, cli, srv, true, false, false, "-b", "50M")
	check("linerate server stopped", ourS, 1, serverStopped)
	check("stock client of linerate's stopped server", c, 1, peerServer)
	sameLayout(t, "linerate server stopped", stockS.out, ourS.out, false)
	ourC, _ := stopRun(t, cli, srv, false, true, false, "-b", "50M")
	check("linerate client of a stopped server", ourC, 1, peerServer)
	sameLayout(t, "linerate client of a stopped server", stockC.out, ourC.out, false)
}

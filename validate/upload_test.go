package validate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// rawStation is a hostile station: it reads the request's head and answers with what
// answer writes on the raw connection.
func rawStation(t *testing.T, answer func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err == nil {
					io.Copy(io.Discard, req.Body)
				}
				answer(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/api/reports"
}

// TestUploadHostileStations: no answer a station can give (an endless header, a chunk
// size past any slice, an endless body, informational answers, a redirect, silence)
// crashes the board's upload, grows its memory without bound or holds it past its
// timeouts; the report is then kept in the spool.
func TestUploadHostileStations(t *testing.T) {
	endless := func(c net.Conn, head string, unit []byte) {
		io.WriteString(c, head)
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, err := c.Write(unit); err != nil {
				return
			}
		}
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for _, c := range []struct {
		name      string
		answer    func(net.Conn)
		delivered bool
		say       string
	}{
		{"huge chunk size", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n")
			endless(c, "", chunk)
		}, false, "500"},
		{"endless header line", func(c net.Conn) { endless(c, "HTTP/1.1 201 Created\r\nX-Long: ", chunk) }, false, "header"},
		{"endless headers", func(c net.Conn) { endless(c, "HTTP/1.1 201 Created\r\n", []byte("X-A: b\r\n")) }, false, "header"},
		{"endless body of a refusal", func(c net.Conn) { endless(c, "HTTP/1.1 400 Bad\r\n\r\n", chunk) }, false, "answer unreadable"},
		{"endless body of a success", func(c net.Conn) { endless(c, "HTTP/1.1 201 Created\r\n\r\n", chunk) }, true, ""},
		{"1xx then the answer", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\nstored\n")
		}, true, ""},
		{"1xx and nothing more", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n") }, false, "EOF"},
		{"1xx forever", func(c net.Conn) { endless(c, "", []byte("HTTP/1.1 103 Early Hints\r\n\r\n")) }, false, "1xx"},
		{"a redirect elsewhere", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://192.0.2.1/steal\r\nContent-Length: 0\r\n\r\n")
		}, false, "307"},
		{"garbage", func(c net.Conn) { io.WriteString(c, "\x00\x01SSH-2.0-OpenSSH\r\n\r\n") }, false, "malformed"},
		{"silence", func(c net.Conn) { time.Sleep(5 * time.Second) }, false, "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spool := t.TempDir()
			var console strings.Builder
			u := &Uploader{URL: rawStation(t, c.answer), SpoolDir: spool, Window: 500 * time.Millisecond, Console: &console, Token: "0123456789abcdef",
				Client: NewClient(nil, 2*time.Second)}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			err := u.Deliver(context.Background(), "r1", []byte(`{"id":"r1"}`))
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v", took)
			}
			if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 32<<20 {
				t.Errorf("memory grew by %d bytes", grew)
			}
			_, spooled := os.Stat(filepath.Join(spool, "r1.json"))
			if _, refused := os.Stat(filepath.Join(spool, "refused", "r1.json")); refused == nil {
				spooled = nil // refused for good (a 4xx): kept aside, with the station's reason
			}
			if c.delivered {
				if err != nil || spooled == nil {
					t.Errorf("not delivered: %v (spooled: %v)", err, spooled == nil)
				}
				return
			}
			if err == nil || spooled != nil {
				t.Fatalf("delivered to a hostile station: %v, spooled %v", err, spooled == nil)
			}
			if !strings.Contains(strings.ToLower(console.String()+err.Error()), strings.ToLower(c.say)) {
				t.Errorf("the reason does not say %q: %v\n%s", c.say, err, console.String())
			}
		})
	}
}

// TestUploadAgainstNetHTTP: the client against Go's own server, as the station runs it:
// a large chunked answer is read within its bound, a refusal's reason reaches the console.
func TestUploadAgainstNetHTTP(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return
		}
		got, _ = io.ReadAll(r.Body)
		if strings.Contains(string(got), "refuse") {
			http.Error(w, "bad report: verdict", http.StatusUnprocessableEntity)
			return
		}
		w.WriteHeader(http.StatusCreated)
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(w, "%0100d", i) // chunked, 100 kB
		}
	}))
	defer srv.Close()
	u := &Uploader{URL: srv.URL, SpoolDir: t.TempDir(), Window: time.Second}
	if err := u.Deliver(context.Background(), "a", []byte(`{"id":"a"}`)); err != nil || string(got) != `{"id":"a"}` {
		t.Fatalf("%v %q", err, got)
	}
	err := u.Deliver(context.Background(), "b", []byte(`{"refuse":1}`))
	if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "bad report: verdict") {
		t.Errorf("refusal: %v", err)
	}
	if tm, ok := stationTime(context.Background(), nil, srv.URL); !ok || time.Since(tm).Abs() > 5*time.Second {
		t.Errorf("station time %v %v", tm, ok)
	}
}

// TestLiveEventsWaitForID: events queued before the run's id is known (it waits on the
// station's clock) go out with it once it is, on the sender; Live itself never waits.
func TestLiveEventsWaitForID(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	known := make(chan struct{})
	u := &Uploader{URL: srv.URL + "/api/reports", SpoolDir: t.TempDir(), LiveID: func() string { <-known; return "sn-1" }}
	t0 := time.Now()
	u.Live(plan.LiveEvent{Event: "start"})
	u.Live(plan.LiveEvent{Event: "step", Step: "link"})
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("Live waited %v for the id", d)
	}
	select {
	case b := <-got:
		t.Fatalf("an event went out before its id was known: %s", b)
	case <-time.After(100 * time.Millisecond):
	}
	close(known)
	select {
	case b := <-got:
		if !strings.Contains(b, `"id":"sn-1"`) {
			t.Fatalf("event without the run's id: %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event once the id was known")
	}
}

// TestLiveEventsOneConnection: a run's live events go to the station one after the
// other on one kept connection (each on its own was a handshake on the board's CPU);
// after the station closed the idle connection the next event still arrives, on a new
// one; the reports' client still closes its connection after each request.
func TestLiveEventsOneConnection(t *testing.T) {
	var mu sync.Mutex
	var conns int
	got := make(chan string, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/api/live" {
			got <- string(b)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	newConns := func() int { mu.Lock(); defer mu.Unlock(); n := conns; conns = 0; return n }
	u := &Uploader{URL: srv.URL + "/api/reports", SpoolDir: t.TempDir(), Window: time.Second, Client: NewClient(nil, 5*time.Second)}
	send := func(step string) {
		t.Helper()
		u.Live(plan.LiveEvent{ID: "b1", Event: "step", Step: step})
		select {
		case b := <-got:
			if !strings.Contains(b, `"`+step+`"`) {
				t.Errorf("event %s arrived as %s", step, b)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %s never arrived", step)
		}
	}
	for _, s := range []string{"link", "phy", "doctor", "tune"} {
		send(s)
	}
	if n := newConns(); n != 1 {
		t.Errorf("4 events on %d connections, want 1", n)
	}
	srv.CloseClientConnections() // the station drops the idle connection
	time.Sleep(50 * time.Millisecond)
	send("frames")
	if n := newConns(); n != 1 {
		t.Errorf("the event after the station closed the connection came on %d new ones, want 1", n)
	}
	for _, id := range []string{"a", "b"} {
		if err := u.Deliver(context.Background(), id, []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := newConns(); n != 2 {
		t.Errorf("2 reports on %d connections, want one each", n)
	}
}

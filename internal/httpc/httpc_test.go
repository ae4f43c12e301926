package httpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The client against Go's own HTTP server, as the station runs it.
func TestAgainstNetHTTP(t *testing.T) {
	var got []byte
	var gotHeader http.Header
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/reports", func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		gotHeader = r.Header
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "stored\n")
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		// Large enough that the server streams it chunked.
		for i := 0; i < 1000; i++ {
			w.Write(bytes.Repeat([]byte{'x'}, 100))
		}
	})
	mux.HandleFunc("POST /refuse", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "malformed report", http.StatusBadRequest)
	})
	for _, tlsOn := range []bool{false, true} {
		var srv *httptest.Server
		c := &Client{Timeout: 5 * time.Second}
		if tlsOn {
			srv = httptest.NewTLSServer(mux)
			c.TLS = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
		} else {
			srv = httptest.NewServer(mux)
		}
		body := []byte(`{"id":"x"}`)
		resp, err := c.Do(context.Background(), "POST", srv.URL+"/api/reports", map[string]string{"content-type": "application/json"}, body)
		if err != nil {
			t.Fatalf("tls %v: %v", tlsOn, err)
		}
		if resp.StatusCode != 201 || resp.Status != "201 Created" || string(resp.Body) != "stored\n" || !bytes.Equal(got, body) || gotHeader.Get("Content-Type") != "application/json" {
			t.Fatalf("tls %v: %d %q %q, server got %q %v", tlsOn, resp.StatusCode, resp.Status, resp.Body, got, gotHeader)
		}
		head, err := c.Do(context.Background(), "HEAD", srv.URL+"/api/reports", nil, nil)
		if err != nil || head.Header.Get("Date") == "" {
			t.Fatalf("tls %v: HEAD: %v %+v", tlsOn, err, head)
		}
		big, err := c.Do(context.Background(), "GET", srv.URL+"/big", nil, nil)
		if err != nil || len(big.Body) != 100000 || big.Header.Get("Transfer-Encoding") != "" && len(big.Body) != 100000 {
			t.Fatalf("tls %v: chunked body: %v, %d bytes", tlsOn, err, len(big.Body))
		}
		ref, err := c.Do(context.Background(), "POST", srv.URL+"/refuse", nil, []byte("{}"))
		if err != nil || ref.StatusCode != 400 || !strings.Contains(string(ref.Body), "malformed report") {
			t.Fatalf("tls %v: 400: %v %+v", tlsOn, err, ref)
		}
		srv.Close()
	}
}

func TestErrors(t *testing.T) {
	c := &Client{Timeout: 2 * time.Second}
	for _, u := range []string{"ftp://x/", "http://", "::"} {
		if _, err := c.Do(context.Background(), "GET", u, nil, nil); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	// A server that accepts and never answers: the timeout ends the request.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	c.Timeout = 300 * time.Millisecond
	if _, err := c.Do(context.Background(), "GET", "http://"+ln.Addr().String()+"/", nil, nil); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("silent server: %v after %v", err, time.Since(start))
	}
	// A cancelled context ends it at once.
	ctx, cancel := context.WithCancel(context.Background())
	c.Timeout = time.Minute
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	if _, err := c.Do(ctx, "GET", "http://"+ln.Addr().String()+"/", nil, nil); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("cancelled: %v after %v", err, time.Since(start))
	}
}

// FuzzReadResponse: any bytes from the network give a response or an error, never a
// panic, and never more body than MaxBody.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\nstored\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 400 Bad\r\n\r\nrest until close"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []string{"GET", "HEAD"} {
			resp, err := readResponse(bufioReader(b), m)
			if err == nil && len(resp.Body) > MaxBody {
				t.Fatalf("body of %d bytes", len(resp.Body))
			}
		}
	})
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

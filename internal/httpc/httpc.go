// Package httpc is the board's HTTP/1.1 client: one request on one connection (POST a
// report, HEAD the station for its Date), over TCP or TLS (crypto/tls, the system's
// roots or a given pool).
//
// Written here, not taken from net/http, for the size of the board's binary: net/http's
// client brings its transport, HTTP/2, proxies, cookies and MIME handling, 1 MB of code
// on linux/arm beside the TLS it shares with this package, on a board whose QSPI holds
// boot loader, bitstream, kernel and image in 16 MB. The station (amd64) serves with
// net/http, and the tests speak to a net/http server.
package httpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxBody is the most of a response body Do keeps; the rest is not read.
const MaxBody = 1 << 20

// Client sends requests.
type Client struct {
	// Timeout bounds a whole request, connecting included (0: 10 s).
	Timeout time.Duration
	// TLS configures https (nil: the system's roots, the URL's host as server name).
	TLS *tls.Config
}

// Response is a response with its body read (up to MaxBody).
type Response struct {
	StatusCode int
	Status     string // "201 Created"
	Header     textproto.MIMEHeader
	Body       []byte
}

// Do sends method to rawURL with the headers and body and reads the response.
func (c *Client) Do(ctx context.Context, method, rawURL string, header map[string]string, body []byte) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q: want an http:// or https:// URL", rawURL)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := c.dial(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, rawURL, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write(request(method, u, header, body)); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, rawURL, err)
	}
	resp, err := readResponse(bufio.NewReader(conn), method)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, rawURL, err)
	}
	return resp, nil
}

func (c *Client) dial(ctx context.Context, u *url.URL) (net.Conn, error) {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil || u.Scheme == "http" {
		return conn, err
	}
	cfg := &tls.Config{}
	if c.TLS != nil {
		cfg = c.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

func request(method string, u *url.URL, header map[string]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: linerate\r\nConnection: close\r\n", method, u.RequestURI(), u.Host)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", textproto.CanonicalMIMEHeaderKey(k), strings.NewReplacer("\r", "", "\n", "").Replace(v))
	}
	if body != nil || method == "POST" || method == "PUT" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

func readResponse(br *bufio.Reader, method string) (*Response, error) {
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, fmt.Errorf("no response: %w", err)
	}
	proto, status, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/1.") {
		return nil, fmt.Errorf("malformed status line %q", line)
	}
	code, err := strconv.Atoi(strings.SplitN(status, " ", 2)[0])
	if err != nil || code < 100 || code > 999 {
		return nil, fmt.Errorf("malformed status line %q", line)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("response header: %w", err)
	}
	resp := &Response{StatusCode: code, Status: status, Header: h}
	if method == "HEAD" || code == 204 || code == 304 || code/100 == 1 {
		return resp, nil
	}
	resp.Body, err = readBody(br, h)
	return resp, err
}

// readBody reads a body delimited by Content-Length, chunked encoding, or the close.
func readBody(br *bufio.Reader, h textproto.MIMEHeader) ([]byte, error) {
	if strings.EqualFold(h.Get("Transfer-Encoding"), "chunked") {
		return readChunked(br)
	}
	if cl := h.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Content-Length %q", cl)
		}
		b := make([]byte, min(n, MaxBody))
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		return b, nil
	}
	return io.ReadAll(io.LimitReader(br, MaxBody))
}

func readChunked(br *bufio.Reader) ([]byte, error) {
	var out []byte
	tp := textproto.NewReader(br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, fmt.Errorf("chunk size: %w", err)
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("chunk size %q", line)
		}
		if n == 0 {
			_, err := tp.ReadMIMEHeader() // trailers
			return out, err
		}
		if int64(len(out))+n > MaxBody {
			return out, nil
		}
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, fmt.Errorf("chunk: %w", err)
		}
		out = append(out, chunk[:n]...)
	}
}

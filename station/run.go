package station

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
)

// Config is the station's report service: where it listens, its store, who may post and
// read, and TLS. (The iperf3 server and frame reflector a line's plans measure against
// run beside it: linerate station starts them.)
type Config struct {
	Listen string // HTTP address, :8080
	Data   string // the bbolt store's directory
	// DB, when given, stores in PostgreSQL instead (postgres://USER@HOST/DB or key=value
	// settings): every station of a line on one database shares one history.
	DB string
	// Tokens and ReadTokens are tokens files ("": none): POST needs a token of Tokens,
	// every other request one of ReadTokens (or of Tokens) when it is given.
	Tokens, ReadTokens string
	// TLSCert and TLSKey (PEM files) serve https instead of http.
	TLSCert, TLSKey string
	Log             *log.Logger
	// Options: the duplicate-MAC policy and the fixture alarm's threshold.
	Options Options
	// Netboot boots the line's boards into the tester image (Iface "": off).
	Netboot NetbootConfig
}

// Run serves reports until ctx ends or the server fails.
func Run(ctx context.Context, c Config) error {
	write, read, err := c.tokens()
	if err != nil {
		return err
	}
	tlsCfg, err := c.tls()
	if err != nil {
		return err
	}
	store, where, err := OpenStore(ctx, c.Data, c.DB)
	if err != nil {
		return err
	}
	defer store.Close()
	srv, err := NewServer(store, c.Log, c.Options)
	if err != nil {
		return err
	}
	srv.RequireTokens(write, read)
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return badinput.Errorf("--listen %s: %w", c.Listen, err)
	}
	stopNetboot, err := startNetboot(ctx, c.Netboot, c.Listen, tlsCfg != nil, srv)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopNetboot()
	// A client that stalls cannot hold a connection: headers in 10 s, the body in a
	// minute, the answer written in a minute, an idle keep-alive closed after two.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, TLSConfig: tlsCfg, ErrorLog: c.Log}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	c.Log.Printf("reports on %s://%s/ (store %s)", scheme, ln.Addr(), where)
	if write == nil {
		c.Log.Printf("anyone who reaches %s may post reports: --tokens FILE locks it down", ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs.Shutdown(sctx)
		cancel()
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}

// tokens loads the write and read tokens files.
func (c Config) tokens() (write, read *Tokens, err error) {
	for _, t := range []struct {
		flag, path string
		to         **Tokens
	}{{"--tokens", c.Tokens, &write}, {"--read-tokens", c.ReadTokens, &read}} {
		if t.path == "" {
			continue
		}
		if *t.to, err = LoadTokens(t.path); err != nil {
			return nil, nil, badinput.Errorf("%s: %w", t.flag, err)
		}
	}
	return write, read, nil
}

// tls is the https configuration of TLSCert and TLSKey (nil: http).
func (c Config) tls() (*tls.Config, error) {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, badinput.Errorf("--tls-cert and --tls-key go together: give both, or neither for http")
	}
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, badinput.Errorf("--tls-cert %s --tls-key %s: %w", c.TLSCert, c.TLSKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

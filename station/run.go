package station

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// Config is a whole station: the report service, and the iperf3 server and frame
// reflector that the boards' plans measure against.
type Config struct {
	Listen string // HTTP address, :8080
	Data   string // the store's directory
	// DB, when given, stores in PostgreSQL instead (postgres://USER@HOST/DB or key=value
	// settings): every station of a line on one database shares one history.
	DB      string
	Iperf3  string // ADDR:PORT of the iperf3 server; "" or "off" for none
	Reflect string // the port to reflect test frames on; "" for none
	// Tokens and ReadTokens are tokens files ("": none): POST needs a token of Tokens,
	// every other request one of ReadTokens (or of Tokens) when it is given.
	Tokens, ReadTokens string
	// TLSCert and TLSKey (PEM files) serve https instead of http.
	TLSCert, TLSKey string
	// Duration stops the station after it; 0 runs until ctx ends.
	Duration time.Duration
	Version  string
	Log      *log.Logger
}

// Run runs the station until ctx ends, Duration passes or a part fails.
func Run(ctx context.Context, c Config) error {
	logger := c.Log
	if c.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Duration)
		defer cancel()
	}
	ip3Host, ip3Port, err := iperf3Addr(c.Iperf3)
	if err != nil {
		return err
	}
	var write, read *Tokens
	for _, t := range []struct {
		flag, path string
		to         **Tokens
	}{{"--tokens", c.Tokens, &write}, {"--read-tokens", c.ReadTokens, &read}} {
		if t.path == "" {
			continue
		}
		if *t.to, err = LoadTokens(t.path); err != nil {
			return badinput.Errorf("%s: %w", t.flag, err)
		}
	}
	var tlsCfg *tls.Config
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return badinput.Errorf("--tls-cert and --tls-key go together: give both, or neither for http")
	}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return badinput.Errorf("--tls-cert %s --tls-key %s: %w", c.TLSCert, c.TLSKey, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var store Backend
	where := c.Data
	if c.DB != "" {
		pg, err := OpenPG(ctx, c.DB)
		if err != nil {
			return err
		}
		store, where = pg, "PostgreSQL"
	} else {
		if err := os.MkdirAll(c.Data, 0o755); err != nil {
			return err
		}
		bb, err := Open(c.Data)
		if err != nil {
			return err
		}
		store = bb
	}
	defer store.Close()
	srv, err := NewServer(store, logger)
	if err != nil {
		return err
	}
	srv.RequireTokens(write, read)
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return badinput.Errorf("--listen %s: %w", c.Listen, err)
	}
	// A client that stalls cannot hold a connection: headers in 10 s, the body in a
	// minute, the answer written in a minute, an idle keep-alive closed after two.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, TLSConfig: tlsCfg, ErrorLog: logger}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("http: %w", err)
		}
	}()
	logger.Printf("reports on %s://%s/ (store %s)", scheme, ln.Addr(), where)
	if write == nil {
		logger.Printf("anyone who reaches %s may post reports: --tokens FILE locks it down", ln.Addr())
	}
	if ip3Port != 0 {
		s := &iperf3.Server{Addr: ip3Host, Port: ip3Port, Version: c.Version, Log: logger}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.ListenAndServe(ctx); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("iperf3 server: %w", err)
			}
		}()
		logger.Printf("iperf3 server on %s", c.Iperf3)
	}
	if c.Reflect != "" {
		p, err := engine.OpenReflector("/", c.Reflect, 0)
		if err != nil {
			cancel()
			hs.Close()
			wg.Wait()
			return err
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := p.Run(ctx, 0, nil)
			if err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("reflector: %w", err)
			}
			logger.Printf("reflector on %s: %d frames reflected", p.Name, st.Reflected)
		}()
		logger.Printf("reflector on %s (%s)", p.Name, p.MAC)
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	hs.Shutdown(sctx)
	scancel()
	wg.Wait()
	logger.Printf("stopped")
	return runErr
}

// iperf3Addr reads the iperf3 server's ADDR:PORT; port 0 for none.
func iperf3Addr(s string) (string, int, error) {
	if s == "off" || s == "" {
		return "", 0, nil
	}
	host, port, err := net.SplitHostPort(s)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 1 || p > 65535 {
		return "", 0, badinput.Errorf("--iperf3 %q: want ADDR:PORT, :5201, or off", s)
	}
	return host, p, nil
}

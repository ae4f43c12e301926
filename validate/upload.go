package validate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/internal/secretfile"
	"github.com/zynqnet/linerate/plan"
)

// Uploader delivers reports to the station. A report is written to the spool before the
// first attempt and removed only when the station has taken it (HTTP 2xx), so a report
// is never lost: a station that is down gets it on a later attempt within the window, or
// from the next run's Flush.
type Uploader struct {
	URL      string
	SpoolDir string
	Client   *http.Client  // nil: NewClient(nil, 10 s)
	Window   time.Duration // how long to keep retrying (backoff 1 s doubling to 15 s)
	Console  io.Writer     // progress and, on a first failure, the report between markers
	Token    string        // the station's bearer token ("": none)
	// LiveID, when set, gives a live event queued without an id its run's: called on
	// the events' sender, it may wait (for the station's clock, say).
	LiveID func() string
	// The live events: the newest not yet sent, and whether one is in flight.
	liveMu      sync.Mutex
	livePending *plan.LiveEvent
	liveBusy    bool
	liveOnce    sync.Once
	live        *http.Client
}

// StationTLS is the TLS configuration that checks an https station against the CA
// certificates (PEM) in caFile; nil (the system's roots) when caFile is "".
func StationTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", caFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// ReadToken reads a bearer token from where spec says: @NAME an environment variable,
// anything else a file; "" is no token. A token is a secret, so the file must be a
// regular file that neither its group nor others may read (as ssh holds its keys: a
// plan naming /etc/shadow or a shared file must not send its first line out), hold
// one line (a trailing newline allowed) of at most MaxTokenLen characters of RFC 6750's
// token alphabet: A-Z a-z 0-9 - . _ ~ + / and trailing '='.
func ReadToken(spec string) (string, error) {
	if spec == "" {
		return "", nil
	}
	var tok string
	if name, ok := strings.CutPrefix(spec, "@"); ok {
		tok = strings.TrimSpace(os.Getenv(name))
		if tok == "" {
			return "", fmt.Errorf("station token %s: the environment variable %s is empty or unset", spec, name)
		}
	} else {
		b, err := readTokenFile(spec)
		if err != nil {
			return "", fmt.Errorf("station token: %w", err)
		}
		tok = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if strings.ContainsAny(tok, "\r\n") {
			return "", fmt.Errorf("station token %s: the file holds more than one line; put the token alone in it", spec)
		}
	}
	if err := checkToken(tok); err != nil {
		return "", fmt.Errorf("station token %s: %v", spec, err)
	}
	return tok, nil
}

// MaxTokenLen bounds a bearer token: the station's are 32-64 characters.
const MaxTokenLen = 512

func readTokenFile(path string) ([]byte, error) {
	b, err := secretfile.Read(path, MaxTokenLen+2)
	var tl *readall.TooLarge
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("%s: longer than a token (%d characters at most): %w", path, MaxTokenLen, tl)
	}
	return b, err
}

// checkToken holds a token to RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" /
// "~" / "+" / "/" ) *"=".
func checkToken(tok string) error {
	if tok == "" || len(tok) > MaxTokenLen {
		return fmt.Errorf("want one token of 1..%d characters", MaxTokenLen)
	}
	body := strings.TrimRight(tok, "=")
	if body == "" {
		return fmt.Errorf("want a token of A-Z a-z 0-9 - . _ ~ + / (and trailing =)")
	}
	for i, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~+/", c)) {
			return fmt.Errorf("character %d (%q) is not of a token: want A-Z a-z 0-9 - . _ ~ + / (and trailing =), no blanks", i+1, c)
		}
	}
	return nil
}

// CheckTokenTransport refuses to send a token over anything but https unless the
// operator said so on the command line (insecure): on plain http anyone on the line's
// network reads it, and with it posts reports as this station's boards.
func CheckTokenTransport(token, reportURL string, insecure bool) error {
	if token == "" || reportURL == "" || insecure {
		return nil
	}
	u, err := url.Parse(reportURL)
	if err != nil {
		return fmt.Errorf("station URL %q: %v", reportURL, err)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("the station token goes only over https, and the station is %s: run the station with --tls-cert/--tls-key and give an https:// URL, or pass --insecure-token to send it in the clear", u.Redacted())
	}
	return nil
}

// Markers around a report printed on the console, for a serial logger to keep it.
const (
	ReportBegin = "==== LINERATE REPORT BEGIN"
	ReportEnd   = "==== LINERATE REPORT END"
)

// The station's answers are read this far, no further: a reason fits in a few lines.
const (
	maxAnswerBytes = 64 << 10
	// maxReportBytes bounds a spooled report read back: the station takes at most
	// 4 MiB (station.MaxReportBytes), so a larger file is not one of ours.
	maxReportBytes = 4 << 20
	maxHeaderBytes = 64 << 10
)

// NewClient is the board's HTTP client for the station (net/http's): every part of a
// request bounded (connect 5 s, TLS handshake 5 s, the answer's header within timeout,
// the whole request within timeout), the answer's header at most 64 KiB, no proxy from
// the environment, no redirect followed (a station that moved is not the one the plan
// names, and the token must not follow it), TLS 1.2 and up, checked against tc's roots
// (nil: the system's).
func NewClient(tc *tls.Config, timeout time.Duration) *http.Client {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if tc != nil {
		cfg = tc.Clone()
		cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:        cfg,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableKeepAlives:      true,
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (u *Uploader) client() *http.Client {
	if u.Client != nil {
		return u.Client
	}
	return NewClient(nil, 10*time.Second)
}

// liveClient is the live events' client: Client's, with its connection kept from one
// event to the next (NewClient closes each). A run posts one as it starts and one a
// step, beside the step: each on a connection of its own was a TCP handshake on the
// board's CPU, and a TLS one to an https station. An idle connection the station has
// closed meanwhile is not written to: net/http sends the event on a new one.
func (u *Uploader) liveClient() *http.Client {
	u.liveOnce.Do(func() {
		c := u.client()
		if tr, ok := c.Transport.(*http.Transport); ok {
			t := tr.Clone()
			t.DisableKeepAlives, t.MaxIdleConnsPerHost, t.IdleConnTimeout = false, 1, 30*time.Second
			kept := *c
			kept.Transport = t
			c = &kept
		}
		u.live = c
	})
	return u.live
}

func (u *Uploader) say(format string, a ...any) {
	if u.Console != nil {
		fmt.Fprintf(u.Console, "linerate validate: "+format+"\n", a...)
	}
}

// Spool writes a report to the spool (write, fsync, rename) and returns its path.
func (u *Uploader) Spool(id string, body []byte) (string, error) {
	if err := os.MkdirAll(u.SpoolDir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(u.SpoolDir, id+".json")
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	f.Close()
	return p, os.Rename(tmp, p)
}

// post sends one report; a 4xx other than 408/429 is final (the station refused it).
// The answer is read to at most maxAnswerBytes, whatever the station sends.
func (u *Uploader) post(ctx context.Context, body []byte) (final bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.URL, bytes.NewReader(body))
	if err != nil {
		return true, fmt.Errorf("station URL %q: %w", u.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "linerate")
	if u.Token != "" {
		req.Header.Set("Authorization", "Bearer "+u.Token)
	}
	resp, err := u.client().Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	msg, rerr := readall.Limit(resp.Body, maxAnswerBytes)
	if resp.StatusCode/100 == 2 {
		return true, nil
	}
	if rerr != nil {
		msg = []byte("(answer unreadable: " + rerr.Error() + ")")
	}
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	err = fmt.Errorf("station answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	return resp.StatusCode/100 == 4 && resp.StatusCode != 408 && resp.StatusCode != 429, err
}

// Deliver spools the report and sends it, retrying with backoff within the window. On
// the first failed attempt the report is printed on the console between markers. It
// returns nil once the station has it.
func (u *Uploader) Deliver(ctx context.Context, id string, body []byte) error {
	p, err := u.Spool(id, body)
	if err != nil {
		u.say("cannot spool the report (%v); printing it", err)
		u.print(id, body)
	}
	if u.URL == "" {
		if err == nil {
			u.say("no station URL: report kept in %s", p)
		}
		u.print(id, body)
		return fmt.Errorf("no station URL")
	}
	deadline := time.Now().Add(u.Window)
	backoff := time.Second
	printed := err != nil
	for attempt := 1; ; attempt++ {
		// The older spooled reports go first, each attempt: a board's history reaches the
		// station in the order it was made (a retest's PASS stored before the FAIL it
		// retests would be its first pass).
		final, perr := false, error(nil)
		if _, _, ferr := u.Flush(ctx, p); ferr != nil {
			perr = fmt.Errorf("older spooled reports go first: %w", ferr)
		} else {
			final, perr = u.post(ctx, body)
		}
		if perr == nil {
			if p != "" {
				os.Remove(p)
			}
			u.say("report %s delivered to %s (attempt %d)", id, u.URL, attempt)
			return nil
		}
		u.say("report %s: attempt %d: %v", id, attempt, perr)
		if !printed {
			u.print(id, body)
			printed = true
		}
		if final {
			return fmt.Errorf("the station refused report %s for good: %w (%s)", id, perr, u.refuse(p, perr))
		}
		if time.Now().Add(backoff).After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("station unreachable for %v: report %s kept in %s and printed on the console: %w", u.Window, id, p, perr)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(backoff*2, 15*time.Second)
	}
}

func (u *Uploader) print(id string, body []byte) {
	if u.Console == nil {
		return
	}
	fmt.Fprintf(u.Console, "%s %s ====\n%s\n%s %s ====\n", ReportBegin, id, strings.TrimRight(string(body), "\n"), ReportEnd, id)
}

// Flush sends every spooled report, oldest first, once each; it returns how many the
// station took and the ids of those it refused for good, which move to the spool's
// refused/ folder with the station's reason beside them, so one report the station will
// never take does not hold back the ones after it. A station that cannot be reached
// leaves the rest spooled (err). skip is a spooled report left out (the one being
// delivered, which goes after them).
func (u *Uploader) Flush(ctx context.Context, skip string) (delivered int, refused []string, err error) {
	ents, err := os.ReadDir(u.SpoolDir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	type item struct {
		path string
		mod  time.Time
	}
	var items []item
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || filepath.Join(u.SpoolDir, e.Name()) == skip {
			continue
		}
		if fi, err := e.Info(); err == nil {
			items = append(items, item{filepath.Join(u.SpoolDir, e.Name()), fi.ModTime()})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].mod.Before(items[j].mod) })
	for _, it := range items {
		body, err := readall.File(it.path, maxReportBytes)
		if err != nil {
			u.say("spool: %v: moved aside", err)
			u.refuse(it.path, err)
			continue
		}
		final, err := u.post(ctx, body)
		switch {
		case err == nil:
			os.Remove(it.path)
			delivered++
		case final:
			u.say("spool: the station refused %s for good: %v (%s)", filepath.Base(it.path), err, u.refuse(it.path, err))
			refused = append(refused, strings.TrimSuffix(filepath.Base(it.path), ".json"))
		default:
			return delivered, refused, err
		}
	}
	return delivered, refused, nil
}

// refuse moves a spooled report the station will never take to the spool's refused/
// folder, its reason in a .reason file beside it, and says where it is.
func (u *Uploader) refuse(p string, reason error) string {
	if p == "" {
		return "not spooled"
	}
	dir := filepath.Join(u.SpoolDir, "refused")
	dst := filepath.Join(dir, filepath.Base(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "kept in " + p + "; cannot make " + dir + ": " + err.Error()
	}
	if err := os.Rename(p, dst); err != nil {
		return "kept in " + p + ": " + err.Error()
	}
	atomicfile.Write(strings.TrimSuffix(dst, ".json")+".reason", []byte(reason.Error()+"\n"), 0o644)
	return "moved to " + dst
}

// Live posts a live event to the station's /api/live (beside its report URL), in the
// background and bounded (3 s each): the run never waits for it. Events that come while
// one is in flight are not queued up: the newest is sent next (the station shows where
// the board is now).
func (u *Uploader) Live(e plan.LiveEvent) {
	if u.URL == "" {
		return
	}
	u.liveMu.Lock()
	defer u.liveMu.Unlock()
	u.livePending = &e
	if u.liveBusy {
		return
	}
	u.liveBusy = true
	go u.sendLive()
}

func (u *Uploader) sendLive() {
	for {
		u.liveMu.Lock()
		e := u.livePending
		u.livePending = nil
		if e == nil {
			u.liveBusy = false
			u.liveMu.Unlock()
			return
		}
		u.liveMu.Unlock()
		u.postLive(*e)
	}
}

func (u *Uploader) postLive(e plan.LiveEvent) {
	if e.ID == "" && u.LiveID != nil {
		e.ID = u.LiveID()
	}
	lu, err := url.Parse(u.URL)
	if err != nil {
		return
	}
	lu.Path = strings.TrimSuffix(lu.Path, "/api/reports") + "/api/live"
	lu.RawQuery = ""
	body, _ := json.Marshal(e)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, lu.String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if u.Token != "" {
		req.Header.Set("Authorization", "Bearer "+u.Token)
	}
	if resp, err := u.liveClient().Do(req); err == nil {
		readall.Limit(resp.Body, maxAnswerBytes) // read to its end: the connection is kept
		resp.Body.Close()
	}
}

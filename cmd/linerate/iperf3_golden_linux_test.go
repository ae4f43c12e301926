package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// The golden comparison with stock iperf3 (Debian's 3.12): the same test run on the same
// veth by stock at both ends and by linerate in one role, stock in the other; what a
// script of stock iperf3 reads must be in linerate's output, in the same place and of
// the same type. Extra keys are allowed.

// keyPaths lists a JSON document's leaf paths with their types: .end.sum_sent.bytes:num,
// arrays as [], an empty object as {}.
func keyPaths(v any, p string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[p+"{}"] = true
		}
		for k, y := range x {
			keyPaths(y, p+"."+k, out)
		}
	case []any:
		for _, y := range x {
			keyPaths(y, p+"[]", out)
		}
	case float64:
		out[p+":num"] = true
	case string:
		out[p+":str"] = true
	case bool:
		out[p+":bool"] = true
	case nil:
		out[p+":null"] = true
	}
}

func jsonKeys(t *testing.T, who, doc string) map[string]bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: not one JSON document: %v\n%s", who, err, doc)
	}
	out := map[string]bool{}
	keyPaths(v, "", out)
	return out
}

// missingKeys is what stock has and ours lacks.
func missingKeys(stock, ours map[string]bool) []string {
	var m []string
	for k := range stock {
		if !ours[k] {
			m = append(m, k)
		}
	}
	sort.Strings(m)
	return m
}

// stockServer starts iperf3 -s -1 (with extra flags) in ns; the func waits for it and
// gives its stdout.
func stockServer(t *testing.T, ns *nstest.NS, extra ...string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, "iperf3", "-s", "-1"}, extra...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	waitListen(ns, "5201")
	return func() string { cmd.Wait(); cancel(); return out.String() }
}

var goldenModes = []struct {
	name string
	args []string
}{
	{"tcp", []string{"-t", "1", "-b", "50M"}},
	{"reverse", []string{"-t", "1", "-b", "50M", "-R"}},
	{"parallel", []string{"-t", "1", "-b", "50M", "-P", "2"}},
	{"bidir", []string{"-t", "1", "-b", "50M", "--bidir"}},
	{"udp", []string{"-t", "1", "-u", "-b", "10M"}},
	{"udp-reverse", []string{"-t", "1", "-u", "-b", "10M", "-R"}},
	{"omit", []string{"-t", "1", "-b", "50M", "-O", "1"}},
}

// TestIperf3JSONKeysAsStock: in every mode, each role, every key path of stock's -J
// output is in linerate's with the same type, and the streams' sockets are numbered as
// stock's (TestIperf3JSONErrorsAsStock has the error documents).
func TestIperf3JSONKeysAsStock(t *testing.T) {
	cli, srv := iperfPair(t)
	client := func(args ...string) string {
		var out string
		cli.Do(t, func() error {
			out, _, _ = runCLI(t, append([]string{"iperf3", "-c", "198.18.2.2", "-J"}, args...)...)
			return nil
		})
		return out
	}
	for _, m := range goldenModes {
		t.Run(m.name, func(t *testing.T) {
			wait := stockServer(t, srv, "-J")
			stock, _ := cli.Try("iperf3", append([]string{"-c", "198.18.2.2", "-J"}, m.args...)...)
			stockSrv := wait()
			wait = stockServer(t, srv, "-J")
			ours := client(m.args...)
			wait()
			if miss := missingKeys(jsonKeys(t, "stock client", stock), jsonKeys(t, "linerate client", ours)); len(miss) > 0 {
				t.Errorf("linerate client lacks:\n  %s", strings.Join(miss, "\n  "))
			}
			if s, o := sockets(t, stock), sockets(t, ours); !slices.Equal(s, o) {
				t.Errorf("linerate client's streams are %v; stock's %v", o, s)
			}
			waitOurs := runOurServer(t, srv)
			cli.Try("iperf3", append([]string{"-c", "198.18.2.2", "-J"}, m.args...)...)
			oursSrv := waitOurs()
			if miss := missingKeys(jsonKeys(t, "stock server", stockSrv), jsonKeys(t, "linerate server", oursSrv)); len(miss) > 0 {
				t.Errorf("linerate server lacks:\n  %s", strings.Join(miss, "\n  "))
			}
			if s, o := sockets(t, stockSrv), sockets(t, oursSrv); !slices.Equal(s, o) {
				t.Errorf("linerate server's streams are %v; stock's %v", o, s)
			}
		})
	}
}

// sockets is a -J document's stream numbers, start.connected[].socket in order.
func sockets(t *testing.T, doc string) []int {
	t.Helper()
	var v struct {
		Start struct {
			Connected []struct {
				Socket int `json:"socket"`
			} `json:"connected"`
		} `json:"start"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not a -J document: %v\n%s", err, doc)
	}
	var out []int
	for _, c := range v.Start.Connected {
		out = append(out, c.Socket)
	}
	return out
}

// TestIperf3JSONErrorsAsStock: with -J every error is one JSON document on stdout from
// its first byte, whose "error" is stock's word for word: nothing listening, a server
// busy with another test, no answer within --connect-timeout, a server that refuses
// the client (authentication). linerate exits 1 where stock 3.12 exits 0 (esnet/iperf
// #1405, fixed upstream since).
func TestIperf3JSONErrorsAsStock(t *testing.T) {
	cli, srv := iperfPair(t)
	priv, pubFile, users := authFiles(t)
	t.Setenv("IPERF3_PASSWORD", "wrong")

	errorOf := func(who, doc string) string {
		var v struct {
			Error *string `json:"error"`
		}
		dec := json.NewDecoder(strings.NewReader(doc))
		if !strings.HasPrefix(doc, "{") || dec.Decode(&v) != nil || dec.More() || v.Error == nil {
			t.Errorf("%s: stdout is not one JSON document with an error from its first byte:\n%s", who, doc)
			return ""
		}
		return *v.Error
	}
	for _, c := range []struct {
		name string
		args []string
		// server starts what the case needs at 198.18.2.2 and returns its stop.
		server func() func()
	}{
		{"refused", []string{"-c", "198.18.2.2", "-t", "1"}, func() func() { return func() {} }},
		{"connect-timeout", []string{"-c", "198.18.2.77", "-t", "1", "--connect-timeout", "500"}, func() func() { return func() {} }},
		{"busy", []string{"-c", "198.18.2.2", "-t", "1"}, func() func() {
			wait := stockServer(t, srv)
			first := make(chan struct{})
			go func() {
				defer close(first)
				cli.Try("iperf3", "-c", "198.18.2.2", "-t", "3", "-b", "1M")
			}()
			time.Sleep(700 * time.Millisecond)
			return func() { <-first; wait() }
		}},
		{"auth-refused", []string{"-c", "198.18.2.2", "-t", "1", "--username", "alice", "--rsa-public-key-path", pubFile}, func() func() {
			wait := stockServer(t, srv, "--rsa-private-key-path", priv, "--authorized-users-path", users)
			return func() {
				// The refusing server waits for a client it accepts.
				cli.Try("env", "IPERF3_PASSWORD=s3cret", "iperf3", "-c", "198.18.2.2", "-t", "1", "--username", "alice", "--rsa-public-key-path", pubFile)
				wait()
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-J"}, c.args...)
			stop := c.server()
			stock, _ := cli.Try("env", append([]string{"IPERF3_PASSWORD=wrong", "iperf3"}, args...)...)
			stop()
			want := errorOf("stock", stock)
			stop = c.server()
			var ours, errOut string
			var code int
			start := time.Now()
			cli.Do(t, func() error {
				ours, errOut, code = runCLI(t, append([]string{"iperf3"}, args...)...)
				return nil
			})
			took := time.Since(start)
			stop()
			if got := errorOf("linerate", ours); got != want || code != 1 || errOut != "" {
				t.Errorf("linerate -J: error %q, exit %d, stderr %q; want stock's error %q, exit 1, stderr empty", got, code, errOut, want)
			}
			if took > 10*time.Second {
				t.Errorf("linerate took %v to give up", took)
			}
			if miss := missingKeys(jsonKeys(t, "stock", stock), jsonKeys(t, "linerate", ours)); len(miss) > 0 {
				t.Errorf("linerate's error document lacks %v", miss)
			}
		})
	}
}

// maskNumbers takes the figures out of iperf3's text so layouts compare: every number,
// with the blanks that pad it to its column, becomes " # ", and units U (a figure's unit
// follows its size). Stream ids ("[  5]") become their rank of first appearance
// ("[id1]"), so a stream keeps its id through the report, or with maskIDs all become
// [ N]. The numbers themselves are stock's descriptors, which a stock end under load
// does not always give alike (a --bidir client's fourth stream 12 or 11): sameIDs
// compares them, netperf/iperf3's TestStreamSocketAsStock pins linerate's.
func maskNumbers(text string, maskIDs bool) []string {
	ids := regexp.MustCompile(`\[\s*\d+\]`)
	idPrefix := regexp.MustCompile(`^\[\s*\d+\]`)
	rank := map[string]string{}
	text = ids.ReplaceAllStringFunc(text, func(id string) string {
		if rank[id] == "" {
			rank[id] = fmt.Sprintf("[id%d]", len(rank)+1)
		}
		return rank[id]
	})
	ids = regexp.MustCompile(`\[id\d+\]`)
	idPrefix = regexp.MustCompile(`^\[id\d+\]`)
	nums := regexp.MustCompile(` *\d+(\.\d+)?(e[+-]\d+)? *`)
	units := regexp.MustCompile(`\b[KMGT]?(Bytes|bits/sec)`)
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		// -V's version line names the program; the cookie is random.
		switch {
		case strings.HasPrefix(l, "iperf 3."):
			l = "iperf 3.x"
		case strings.HasPrefix(l, "      Cookie: "):
			l = "      Cookie: x"
		}
		if maskIDs {
			l = ids.ReplaceAllString(l, "[ N]")
		}
		id := idPrefix.FindString(l) // kept whole: its padding is not a figure's
		l = id + units.ReplaceAllString(nums.ReplaceAllString(l[len(id):], " # "), "U")
		out = append(out, l)
	}
	return out
}

// isInterval is a reporting interval's line (not a summary's).
func isInterval(l string) bool {
	l = strings.TrimRight(l, " ")
	return strings.Contains(l, " sec ") && !strings.HasSuffix(l, "sender") && !strings.HasSuffix(l, "receiver")
}

// layout splits masked output into its frame (every line but the intervals and the
// separators between interval blocks) and the set of interval line shapes: how many
// intervals a run prints is timing (stock prints a last sliver of an interval when a
// byte moved in it), how each looks is not.
func layout(lines []string) (frame []string, shapes map[string]bool) {
	shapes = map[string]bool{}
	for i, l := range lines {
		switch {
		case isInterval(l):
			shapes[l] = true
		case strings.HasPrefix(l, "- - -") && i+1 < len(lines) && isInterval(lines[i+1]):
		default:
			frame = append(frame, l)
		}
	}
	return frame, shapes
}

// sameLayout compares the layouts; maskIDs for a stock UDP server with more than two
// streams, whose numbers vary from run to run (streamSocket).
func sameLayout(t *testing.T, who string, stock, ours string, maskIDs bool) {
	t.Helper()
	sf, ss := layout(maskNumbers(stock, maskIDs))
	of, os := layout(maskNumbers(ours, maskIDs))
	diff := strings.Join(sf, "\n") != strings.Join(of, "\n")
	for l := range ss {
		diff = diff || !os[l]
	}
	for l := range os {
		diff = diff || !ss[l]
	}
	if diff {
		t.Errorf("%s: the layout differs from stock's (numbers masked)\nstock:\n%s\nlinerate:\n%s", who, stock, ours)
	}
	if !maskIDs {
		sameIDs(t, who, stock, ours)
	}
}

// sameIDs reports where linerate's stream ids are not the ones stock printed. The
// first two streams' descriptors are fixed at any load and must match; later ones
// move when a stock end under load opens its descriptors in another order, which is
// logged.
func sameIDs(t *testing.T, who, stock, ours string) {
	t.Helper()
	connected := regexp.MustCompile(`(?m)^\[\s*(\d+)\] local `)
	var s, o []string
	for _, m := range connected.FindAllStringSubmatch(stock, -1) {
		s = append(s, m[1])
	}
	for _, m := range connected.FindAllStringSubmatch(ours, -1) {
		o = append(o, m[1])
	}
	if len(s) != len(o) {
		return // the layout check has said so
	}
	for i := range s {
		switch {
		case s[i] == o[i]:
		case i < 2:
			t.Errorf("%s: stream %d is [%s], stock numbered it [%s] (stock %v, linerate %v)", who, i+1, o[i], s[i], s, o)
		default:
			t.Logf("%s: stream %d is [%s], stock under this load numbered it [%s] (stock %v, linerate %v)", who, i+1, o[i], s[i], s, o)
		}
	}
}

// TestIperf3TextAsStock: in every mode, the client's and the server's text output is
// stock iperf3's line for line, trailing blanks included and stream ids as stock
// numbers them, once the figures are masked.
func TestIperf3TextAsStock(t *testing.T) {
	cli, srv := iperfPair(t)
	// Two seconds: stock prints the interval header when it prints the first interval,
	// and when that is the last one too it may come after the results, whose
	// retransmit flag then changes the header (-R): a stock quirk left out.
	modes := append(goldenModes[:len(goldenModes):len(goldenModes)],
		struct {
			name string
			args []string
		}{"parallel-bidir", []string{"-P", "2", "--bidir"}},
		struct {
			name string
			args []string
		}{"udp-parallel-bidir", []string{"-u", "-b", "10M", "-P", "2", "--bidir"}},
		struct {
			name string
			args []string
		}{"verbose", []string{"-V"}},
		struct {
			name string
			args []string
		}{"udp-reverse-verbose", []string{"-u", "-b", "10M", "-R", "-V"}},
		struct {
			name string
			args []string
		}{"no-intervals", []string{"-i", "0", "-P", "2"}})
	for _, m := range modes {
		m.args = append(append([]string(nil), m.args...), "-t", "2")
		if !slices.Contains(m.args, "-b") {
			m.args = append(m.args, "-b", "50M")
		}
		t.Run(m.name, func(t *testing.T) {
			var srvExtra []string
			if slices.Contains(m.args, "-V") {
				srvExtra = []string{"-V"}
			}
			if slices.Contains(m.args, "-i") {
				srvExtra = append(srvExtra, "-i", "0") // both ends: the whole test is one interval
			}
			wait := stockServer(t, srv, srvExtra...)
			stock, _ := cli.Try("iperf3", append([]string{"-c", "198.18.2.2"}, m.args...)...)
			stockSrv := wait()
			wait = stockServer(t, srv)
			var ours string
			cli.Do(t, func() error {
				ours, _, _ = runCLI(t, append([]string{"iperf3", "-c", "198.18.2.2"}, m.args...)...)
				return nil
			})
			wait()
			sameLayout(t, "client", stock, ours, false)

			cmd, out, _ := linerateIn(t, srv, append([]string{"iperf3", "-s", "-1"}, srvExtra...)...)
			waitListen(srv, "5201")
			cli.Try("iperf3", append([]string{"-c", "198.18.2.2"}, m.args...)...)
			waitOrKill(cmd, 30*time.Second)
			sameLayout(t, "server", stockSrv, out.String(), m.name == "udp-parallel-bidir")
		})
	}
}

// authFiles writes iperf3's authentication files: an RSA key pair (PEM) and the
// server's users file naming alice, password s3cret.
func authFiles(t *testing.T) (priv, pub, users string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p8, _ := x509.MarshalPKCS8PrivateKey(key)
	pk, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	priv, pub, users = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem"), filepath.Join(dir, "users.csv")
	os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), 0o600)
	os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pk}), 0o644)
	sum := sha256.Sum256([]byte("{alice}s3cret"))
	os.WriteFile(users, []byte("# name,sha256\nalice,"+hex.EncodeToString(sum[:])+"\n"), 0o600)
	return priv, pub, users
}

// TestIperf3AuthenticationWithStock: iperf3's RSA authentication both ways: linerate's
// client to a stock server that requires it, and a stock client to linerate's server;
// a wrong password is refused with iperf3's IEAUTHTEST in both.
func TestIperf3AuthenticationWithStock(t *testing.T) {
	cli, srv := iperfPair(t)
	priv, pubFile, users := authFiles(t)
	authArgs := []string{"-t", "1", "-b", "10M", "--username", "alice", "--rsa-public-key-path", pubFile}

	for _, c := range []struct {
		password string
		ok       bool
	}{{"s3cret", true}, {"wrong", false}} {
		t.Setenv("IPERF3_PASSWORD", c.password)
		wait := stockServer(t, srv, "--rsa-private-key-path", priv, "--authorized-users-path", users)
		var out, errOut string
		var code int
		cli.Do(t, func() error {
			out, errOut, code = runCLI(t, append([]string{"iperf3", "-c", "198.18.2.2"}, authArgs...)...)
			return nil
		})
		if c.ok && (code != 0 || !strings.Contains(out, "receiver")) || !c.ok && (code != 1 || !strings.Contains(errOut, "test authorization failed")) {
			t.Errorf("linerate client, password %q, to a stock server: exit %d\n%s%s", c.password, code, out, errOut)
		}
		if !c.ok {
			// The stock server refused and waits for the next client: one that knows.
			t.Setenv("IPERF3_PASSWORD", "s3cret")
			cli.Do(t, func() error { runCLI(t, append([]string{"iperf3", "-c", "198.18.2.2"}, authArgs...)...); return nil })
		}
		wait()

		cmd, sout, serr := linerateIn(t, srv, "iperf3", "-s", "-1", "--rsa-private-key-path", priv, "--authorized-users-path", users)
		waitListen(srv, "5201")
		stock, err := cli.Try("env", append([]string{"IPERF3_PASSWORD=" + c.password, "iperf3", "-c", "198.18.2.2"}, authArgs...)...)
		if c.ok && (err != nil || !strings.Contains(stock, "receiver")) || !c.ok && (err == nil || !strings.Contains(err.Error(), "test authorization failed")) {
			t.Errorf("stock client, password %q, to linerate's server: %v\n%s", c.password, err, stock)
		}
		if !c.ok {
			cli.Try("env", append([]string{"IPERF3_PASSWORD=s3cret", "iperf3", "-c", "198.18.2.2"}, authArgs...)...)
		}
		if !waitOrKill(cmd, 30*time.Second) {
			t.Errorf("linerate server did not end:\n%s%s", sout, serr)
		}
	}
}

// TestIperf3FileAsStock: -F sends a file (its size is the test's length) with stock's
// layout and -J keys (end.streams[].diskfile), and with -R writes what arrives into it.
func TestIperf3FileAsStock(t *testing.T) {
	cli, srv := iperfPair(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "send.bin")
	data := make([]byte, 3<<20)
	rand.Read(data)
	os.WriteFile(file, data, 0o644)
	for _, j := range []bool{false, true} {
		args := []string{"-c", "198.18.2.2", "-F", file}
		if j {
			args = append(args, "-J")
		}
		wait := stockServer(t, srv)
		stock, _ := cli.Try("iperf3", args...)
		wait()
		wait = stockServer(t, srv)
		var ours string
		cli.Do(t, func() error { ours, _, _ = runCLI(t, append([]string{"iperf3"}, args...)...); return nil })
		wait()
		if j {
			if miss := missingKeys(jsonKeys(t, "stock -F -J", stock), jsonKeys(t, "linerate -F -J", ours)); len(miss) > 0 {
				t.Errorf("-F -J lacks:\n  %s", strings.Join(miss, "\n  "))
			}
			continue
		}
		sameLayout(t, "-F", stock, ours, false)
		if !strings.Contains(ours, "Sent 3.00 MByte / 3.00 MByte (100%) of "+file) {
			t.Errorf("-F: no diskfile line:\n%s", ours)
		}
	}
	out := filepath.Join(dir, "received.bin")
	wait := stockServer(t, srv)
	var o string
	var code int
	cli.Do(t, func() error {
		o, _, code = runCLI(t, "iperf3", "-c", "198.18.2.2", "-R", "-F", out, "-t", "1", "-b", "10M", "-J")
		return nil
	})
	wait()
	var rep struct {
		End struct {
			Streams []struct {
				Diskfile struct{ Received, Size int64 }
			}
		}
	}
	json.Unmarshal([]byte(o), &rep)
	st, err := os.Stat(out)
	if code != 0 || err != nil || len(rep.End.Streams) != 1 || st.Size() == 0 || rep.End.Streams[0].Diskfile.Size != st.Size() {
		t.Errorf("-R -F: exit %d, file %v %v, report %+v", code, st, err, rep)
	}
}

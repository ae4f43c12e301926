package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
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
// output is in linerate's with the same type; so is the error document's.
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
			waitOurs := runOurServer(t, srv)
			cli.Try("iperf3", append([]string{"-c", "198.18.2.2", "-J"}, m.args...)...)
			oursSrv := waitOurs()
			if miss := missingKeys(jsonKeys(t, "stock server", stockSrv), jsonKeys(t, "linerate server", oursSrv)); len(miss) > 0 {
				t.Errorf("linerate server lacks:\n  %s", strings.Join(miss, "\n  "))
			}
		})
	}
	t.Run("connection-refused", func(t *testing.T) {
		stock, _ := cli.Try("iperf3", "-c", "198.18.2.2", "-J", "-t", "1")
		var ours, errOut string
		var code int
		cli.Do(t, func() error {
			ours, errOut, code = runCLI(t, "iperf3", "-c", "198.18.2.2", "-J", "-t", "1")
			return nil
		})
		if miss := missingKeys(jsonKeys(t, "stock", stock), jsonKeys(t, "linerate", ours)); len(miss) > 0 || code != 1 || errOut != "" {
			t.Errorf("error document: exit %d, stderr %q, lacks %v", code, errOut, miss)
		}
	})
}

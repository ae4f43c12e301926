package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/nic"
)

// exitCode is the process's exit status for run's error, as main gives it.
func exitCode(err error) int { return cli.Code(err) }

// runCLI drives the whole CLI in-process, as main does.
func runCLI(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	err := run(context.Background(), args, nil, &o, &e)
	return o.String(), e.String(), exitCode(err)
}

// showJSON runs show --json and decodes it.
func showJSON(t testing.TB, args ...string) []map[string]any {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"show", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("show %v: exit %d: %s", args, code, errOut)
	}
	var v []map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("show --json output is not JSON: %v\n%s", err, out)
	}
	return v
}

// showIfaces runs show --json and decodes it into the nic types.
func showIfaces(t testing.TB, args ...string) []nic.Interface {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"show", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("show %v: exit %d: %s", args, code, errOut)
	}
	var v []nic.Interface
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("show --json output does not decode: %v", err)
	}
	return v
}

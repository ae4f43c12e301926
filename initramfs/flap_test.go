package initramfs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// flapAt is when the host flaps the GEM's link: after the console shows step's BEGIN
// marker, wait, then down for down.
type flapAt struct {
	step       string
	wait, down time.Duration
}

// bootFlapping runs scripts/board-up BOARD with args and, while QEMU runs, flaps the
// GEM's link through its monitor with scripts/board-link (off, then on) at each flap's
// step, as a bad cable would. It returns board-up's output; the serial log is in logFile.
func bootFlapping(t *testing.T, timeout time.Duration, logFile, sock string, flaps []flapAt, board string, args ...string) string {
	t.Helper()
	// A log of an earlier run holds the markers already: gone before QEMU starts.
	if err := os.Remove(logFile); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "board-up"), append([]string{board}, append(args, "--log", logFile, "--monitor", sock)...)...)
	stopGently(cmd)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "BOARD_UP_STDIN=/dev/null")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	next := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if next < len(flaps) {
				t.Errorf("the board never began step %s: no flap", flaps[next].step)
			}
			if err != nil {
				t.Fatalf("scripts/board-up %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
			return out.String()
		case <-tick.C:
			if next == len(flaps) {
				continue
			}
			f := flaps[next]
			if log, _ := os.ReadFile(logFile); !strings.Contains(string(log), "==== LINERATE BEGIN "+f.step+":") {
				continue
			}
			next++
			time.Sleep(f.wait)
			for _, state := range []string{"off", "on"} {
				if state == "on" {
					time.Sleep(f.down)
				}
				if out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "board-link"), board, state, "--monitor", sock).CombinedOutput(); err != nil {
					t.Errorf("board-link %s %s: %v\n%s", board, state, err, out)
				}
			}
			t.Logf("flapped the link during %s: down %v after %v", f.step, f.down, f.wait)
		}
	}
}

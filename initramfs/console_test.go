package initramfs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/station"
)

// TestConsole drives the emulated board's serial console as an operator does: board-up
// with no options in a terminal (a pty of 80 columns), the prompt, a command typed at a
// time and its answer read back, Ctrl-A X to end. For both emulated boards.
func TestConsole(t *testing.T) {
	need(t)
	for _, b := range []string{"zc702", "zcu102"} {
		t.Run(b, func(t *testing.T) {
			script(t, 30*time.Minute, "build-image", b)
			c := startConsole(t, b)
			prompt := c.waitPrompt(t, 0, 180*time.Second)
			time.Sleep(time.Second) // the line editor sets itself up after drawing the prompt
			t.Logf("%s: power-on to prompt %.1fs (QEMU start to the shell's first prompt, wall clock)", b, prompt.Seconds())
			c.transcript.WriteString(fmt.Sprintf("(power-on to prompt: %.1f s)\n", prompt.Seconds()))

			out := c.run(t, "linerate")
			wantAll(t, "linerate alone", out, "linerate show eth0", "linerate doctor eth0", "linerate tune eth0 --profile "+b, "linerate revert eth0", "linerate iperf3 -c 198.18.5.1 -t 10")
			out = c.run(t, "linerate show eth0")
			wantAll(t, "show", out, "eth0 (index", "driver                         macb", "rings                          rx 512/8192")
			out = c.run(t, "linerate doctor eth0")
			wantAll(t, "doctor", out, "eth0 (macb, board "+b, "why:", "fix:")
			out = c.run(t, "linerate tune eth0 --profile "+b)
			wantAll(t, "tune", out, "tune eth0 with profile "+b, "applied ")
			out = c.run(t, "linerate iperf3 -c 198.18.5.1 -t 3")
			wantAll(t, "iperf3", out, "Connecting to host 198.18.5.1, port 5201", "sender", "receiver")
			out = c.run(t, "linerate revert eth0")
			wantAll(t, "revert", out, "reverted eth0")

			c.quit(t)
			os.MkdirAll(filepath.Join(repoRoot(t), "out"), 0o755)
			tr := filepath.Join(repoRoot(t), "out", "console-"+b+".txt")
			os.WriteFile(tr, []byte(c.transcript.String()), 0o644)
			t.Logf("transcript in %s", tr)
		})
	}
}

// console is board-up running in a pty, and everything it printed.
type console struct {
	cmd        *exec.Cmd
	pty        *os.File
	start      time.Time
	mu         sync.Mutex
	buf        []byte
	done       chan struct{} // closed when board-up has ended, with exitErr set
	exitErr    error
	transcript strings.Builder
}

func startConsole(t *testing.T, board string, args ...string) *console {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "board-up"), append([]string{board, "--log", filepath.Join(t.TempDir(), "serial.log")}, args...)...)
	cmd.Dir = repoRoot(t)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	c := &console{cmd: cmd, pty: f, start: time.Now(), done: make(chan struct{})}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			c.mu.Lock()
			c.buf = append(c.buf, b[:n]...)
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { c.exitErr = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			// By PID, with TERM: board-up's trap tears QEMU and its namespace down
			// (KILL would leave them); KILL only if it has not ended in 20 s.
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-c.done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-c.done
			}
		}
		f.Close()
	})
	return c
}

// dump keeps the console's bytes as they came, escape sequences and all, in out/ (not
// in git) for the next reader of a failure: the screen tail alone cannot say why a
// prompt was not seen.
func (c *console) dump(t *testing.T) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := filepath.Join(repoRoot(t), "out", "console-failed-"+strings.ReplaceAll(t.Name(), "/", "-")+".raw")
	if err := os.WriteFile(p, c.buf, 0o644); err != nil {
		return err.Error()
	}
	return p
}

// The shell's line editor draws its prompt after this (cursor hidden, then "> ").
const promptMark = "\x1b[?25l>"

// strayLine is a whole line printed between the editor's cursor-hide and its '>': a
// kernel message (the emulated ZCU102's "hrtimer: interrupt took" came there once) or
// the command's last stderr line, which the serial console may deliver after the shell
// has begun to draw (seen on the emulated ZCU102: "linerate doctor: a finding failed").
// Either way a prompt is drawn.
var strayLine = regexp.MustCompile(`^[^\x1b\n]{0,512}\n`)

// drawing is what a terminal's drawing may put between the cursor-hide and the '>': a
// carriage return or a CSI sequence other than one that shows text.
var drawing = regexp.MustCompile(`^(\r|\x1b\[[0-9;?]*[A-Za-z])`)

// promptAt is where in s a prompt's drawing begins, stray lines printed right inside
// it aside; -1 before there is one. It looks only at what follows each
// cursor-hide (the console test polls it while QEMU runs: it must stay cheap).
func promptAt(s string) int {
	const hide = "\x1b[?25l"
	for k := 0; k < len(s); {
		p := strings.Index(s[k:], hide)
		if p < 0 {
			return -1
		}
		p += k
		rest := s[p+len(hide):]
		for n := 0; n < 8 && !strings.HasPrefix(rest, promptMark[len(hide):]); n++ {
			loc := strayLine.FindStringIndex(rest[:min(len(rest), 600)])
			if loc == nil {
				// The editor's own moves (a carriage return, a cursor move, a line
				// cleared) before its '>' after a long answer scrolled the screen.
				loc = drawing.FindStringIndex(rest[:min(len(rest), 64)])
			}
			if loc == nil {
				break
			}
			rest = rest[loc[1]:]
		}
		if strings.HasPrefix(rest, promptMark[len(hide):]) {
			return p
		}
		k = p + 1
	}
	return -1
}

// waitPrompt waits for a prompt drawn after offset and returns the time since start.
func (c *console) waitPrompt(t *testing.T, offset int, timeout time.Duration) time.Duration {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		i := promptAt(string(c.buf[offset:]))
		c.mu.Unlock()
		if i >= 0 {
			return time.Since(c.start)
		}
		select {
		case <-c.done:
			t.Fatalf("board-up ended before the prompt (%v):\n%s", c.exitErr, c.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("no prompt within %v (the console's bytes in %s):\n%s", timeout, c.dump(t), c.tail())
	return 0
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// run types a command, waits for the next prompt and returns what the command printed,
// with the line editor's drawing taken out; it checks the answer fits 80 columns and
// holds no kernel message.
func (c *console) run(t *testing.T, line string) string {
	t.Helper()
	c.mu.Lock()
	from := len(c.buf)
	c.mu.Unlock()
	// Type as a person does, a key at a time, look at the screen, press Enter. Keys typed
	// while the emulated board is busy can be lost (a late driver probe; the line editor
	// starting up): when the line is not taken, do what a person does, Ctrl-C (the
	// editor's clear) and type it again.
	seg := func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return string(c.buf[from:])
	}
	const editEnd = "\x1b[?1003l" // the line editor hands the line over
	taken := false
	for attempt := 0; attempt < 3 && !taken; attempt++ {
		if attempt > 0 {
			c.pty.Write([]byte{3}) // Ctrl-C
			time.Sleep(time.Second)
			from = c.length()
		}
		for _, r := range line {
			c.pty.Write([]byte(string(r)))
			time.Sleep(120 * time.Millisecond) // a person's pace: the emulated UARTs drop keys that come faster
		}
		for end := time.Now().Add(10 * time.Second); !strings.Contains(ansi.ReplaceAllString(seg(), ""), line) && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
		c.pty.Write([]byte("\r"))
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if strings.Contains(seg(), editEnd) {
				taken = true
				break
			}
		}
	}
	if !taken {
		t.Fatalf("%q: typed three times, never taken:\n%s", line, c.tail())
	}
	deadline := time.Now().Add(120 * time.Second)
	var out string
	for {
		s := seg()
		i := strings.Index(s, editEnd)
		// The answer runs from the line handed over to the next prompt.
		if j := promptAt(s[i:]); j >= 0 {
			out = s[i+len(editEnd) : i+j]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q: no prompt after 120s (the console's bytes in %s):\n%s", line, c.dump(t), c.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out = strings.ReplaceAll(ansi.ReplaceAllString(out, ""), "\r", "")
	c.transcript.WriteString("> " + line + "\n" + out)
	kernel := regexp.MustCompile(`^\[\s*\d+\.\d+\]`)
	lines := strings.Split(out, "\n")
	// The command's output runs from its first line to its last; the kernel may print
	// before it (between Enter and linerate holding its messages off) and after it
	// (once linerate has given the level back, before the shell draws its prompt: the
	// emulated ZCU102's "hrtimer: interrupt took" came there once), within it never.
	first, last := -1, -1
	for i, l := range lines {
		if !kernel.MatchString(l) && strings.TrimSpace(l) != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i, l := range lines {
		if kernel.MatchString(l) {
			if i > first && i < last {
				t.Errorf("%q: a kernel message in the answer: %q", line, l)
			}
			continue
		}
		if n := len([]rune(l)); n > 80 {
			t.Errorf("%q: a line of %d columns on an 80-column console: %q", line, n, l)
		}
	}
	return out
}

// quit types Ctrl-A X, QEMU's quit, and checks that board-up ends and leaves nothing.
func (c *console) quit(t *testing.T) {
	t.Helper()
	c.pty.Write([]byte{1, 'x'})
	select {
	case <-c.done:
		if c.exitErr != nil {
			t.Errorf("board-up after Ctrl-A X: %v", c.exitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("board-up still running 30s after Ctrl-A X:\n%s", c.tail())
	}
	ns := "lrboard-" + strconv.Itoa(c.cmd.Process.Pid)
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), ns) {
		t.Errorf("namespace %s left behind", ns)
	}
}

// waitFor waits for text (terminal drawing aside) after offset; it returns the offset
// after it.
func (c *console) waitFor(t *testing.T, offset int, text string, timeout time.Duration) int {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		c.mu.Lock()
		s := string(c.buf[offset:])
		c.mu.Unlock()
		if i := strings.Index(s, text); i >= 0 {
			return offset + i + len(text)
		}
		select {
		case <-c.done:
			c.mu.Lock()
			s = string(c.buf[offset:])
			c.mu.Unlock()
			if i := strings.Index(s, text); i >= 0 {
				return offset + i + len(text)
			}
			t.Fatalf("board-up ended before %q (%v):\n%s", text, c.exitErr, c.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("no %q within %v:\n%s", text, timeout, c.tail())
	return 0
}

// typeLine types a line as a barcode scanner does (its characters, then Enter), at the
// pace the emulated UART takes.
func (c *console) typeLine(line string) {
	for _, r := range line {
		c.pty.Write([]byte(string(r)))
		time.Sleep(60 * time.Millisecond)
	}
	c.pty.Write([]byte("\r"))
}

// TestOperatorPrompt: the tester image with linerate.prompt=operator,serial asks the
// operator for their id and the board's serial at the console before the validate job; a
// serial off the plan's serial_pattern is asked again, the one that fits goes into the
// verdict line and the report. The report the station stores says what produced it: the
// image's build (the build file make image wrote into it), the running kernel, the
// plan's hash, the operator.
func TestOperatorPrompt(t *testing.T) {
	need(t)
	script(t, 30*time.Minute, "build-image", "zc702")
	data := filepath.Join(t.TempDir(), "station")
	c := startConsole(t, "zc702", "--job", "validate", "--plan", "qemu-zc702", "--peer", "station", "--station-data", data,
		"--timeout", "400", "--append", "linerate.prompt=operator,serial")
	const askOp, ask = "scan or type your operator id, then Enter: ", "scan or type the board's serial, then Enter: "
	at := c.waitFor(t, 0, askOp, 180*time.Second)
	c.typeLine("ann-7")
	at = c.waitFor(t, at, ask, 60*time.Second)
	c.typeLine("ab") // too short for the plan's serial_pattern
	at = c.waitFor(t, at, `"ab" does not match the plan's serial_pattern; again`, 60*time.Second)
	at = c.waitFor(t, at, ask, 30*time.Second)
	c.typeLine("ZC702-0042")
	at = c.waitFor(t, at, "LINERATE PASS board=zc702 serial=ZC702-0042 ", 300*time.Second)
	c.waitFor(t, at, "delivered to http://198.18.5.1:8080/api/reports", 60*time.Second)
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Error("the board did not end after its validate job")
	}
	checkTrace(t, data, "zc702", "ann-7", "")
}

// checkTrace reads the one report the station stored in data and holds what it says
// produced it to the image make image built for board: its build, the plan, the kernel,
// the operator, and the U-Boot that loaded the kernel (uboot; "" when QEMU did).
func checkTrace(t *testing.T, data, board, operator, uboot string) *plan.Report {
	t.Helper()
	var build plan.Build
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "out", "linerate-"+board+".build.json"))
	if err != nil || json.Unmarshal(b, &build) != nil || build.ID == "" {
		t.Fatalf("the image's build file: %v %s", err, b)
	}
	st, err := station.OpenBolt(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("stored: %d reports, %v", len(list), err)
	}
	body, err := st.Get(list[0].ID)
	var r plan.Report
	if err != nil || json.Unmarshal(body, &r) != nil {
		t.Fatalf("report %s: %v", list[0].ID, err)
	}
	text, _ := os.ReadFile(filepath.Join(repoRoot(t), "validate", "plans", "qemu-"+board+".yaml"))
	sum := sha256.Sum256(text)
	if r.Build == nil || *r.Build != build || r.Operator != operator || r.PlanSHA256 != hex.EncodeToString(sum[:]) || !strings.HasPrefix(r.Kernel, "6.1.") ||
		r.UBoot != uboot || r.Linerate != build.Linerate {
		t.Errorf("the stored report's trace: build %+v (image %+v), operator %q, plan %s, kernel %q, U-Boot %q, linerate %q",
			r.Build, build, r.Operator, r.PlanSHA256, r.Kernel, r.UBoot, r.Linerate)
	}
	t.Logf("%s: build %s, kernel %s, U-Boot %q, plan %.12s, operator %s", board, build.ID, r.Kernel, r.UBoot, r.PlanSHA256, r.Operator)
	return &r
}

func (c *console) length() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf)
}

func (c *console) tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ReplaceAll(ansi.ReplaceAllString(string(c.buf), ""), "\r", "")
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}

func wantAll(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: no %q in:\n%s", what, w, out)
		}
	}
}

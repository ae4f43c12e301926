package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zynqnet/linerate/netperf/rawsock"
)

// RunReflectors runs a reflector on each of ifaces until ctx ends or one fails, each in
// a process of its own: this binary's reflect command, in the kernel (--bpf: no thread
// to wake or to schedule, nothing the station's load can hold up but the softirq that
// receives the frame) where the kernel takes it, else real-time (--realtime). A
// process of its own, because in the station's the reflecting thread would wait on the
// Go scheduler for a P whenever the station's HTTP and iperf3 work holds them all, and
// stop with every collection of the station's heap: the round trips a board measures
// would follow what the station does for other boards; and for one in the kernel, the
// program stays attached exactly as long as the process lives. When the machine has
// CPUs to spare (two left for the station after one per reflecting thread), each
// thread gets one of its own, which the station's threads leave, and busy-polls it.
// logf gets each reflector's lines (how it runs, its errors, its count at the end).
func RunReflectors(ctx context.Context, ifaces []string, duration time.Duration, logf func(string, ...any)) error {
	if len(ifaces) == 0 {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("reflectors: this binary's path: %w", err)
	}
	if duration <= 0 {
		duration = 24 * 365 * time.Hour // until the station stops it
	}
	args, kept, err := planReflectors(ifaces, duration, ProbeInKernel, rawsock.KeepCPUs, logf)
	if err != nil {
		return fmt.Errorf("reflectors: %w", err)
	}
	if kept != nil {
		if err := rawsock.KeepOff(kept); err != nil {
			return fmt.Errorf("reflectors: %w", err)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	for i, name := range ifaces {
		g.Go(func() error { return runReflector(ctx, exe, args[i], name, logf) })
	}
	return g.Wait()
}

// planReflectors is each of ifaces' reflect command line, and the CPUs kept for the
// reflecting threads (nil: none): in the kernel where probe attaches one (and the log
// says why not where it does not), else a real-time thread, on a CPU of its own (keep:
// rawsock.KeepCPUs, leaving two to the station) where the machine has them to spare.
func planReflectors(ifaces []string, duration time.Duration, probe func(string) error, keep func(n, leave int) ([]int, error), logf func(string, ...any)) ([][]string, []int, error) {
	var threads []int // indexes in ifaces
	for i, name := range ifaces {
		if err := probe(name); err != nil {
			logf("reflector on %s: not in the kernel (%v): on a thread", name, err)
			threads = append(threads, i)
		}
	}
	kept, err := keep(len(threads), 2)
	if err != nil {
		return nil, nil, err
	}
	args := make([][]string, len(ifaces))
	for i, name := range ifaces {
		args[i] = []string{"reflect", name, "--bpf", "--duration", duration.String(), "--json"}
		if k := slices.Index(threads, i); k >= 0 {
			rt := "on"
			if kept != nil {
				rt = strconv.Itoa(kept[k])
			}
			args[i] = []string{"reflect", name, "--realtime", rt, "--duration", duration.String(), "--json"}
		}
	}
	return args, kept, nil
}

// runReflector runs one reflector process until it ends, or until ctx ends (SIGTERM,
// then SIGKILL 5 s later). The goroutine keeps its thread for the child's life: the
// child's Pdeathsig fires when the thread that started it ends, which then is only
// with the station.
func runReflector(ctx context.Context, exe string, args []string, name string, logf func(string, ...any)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: 1 << 20}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reflector on %s: %w", name, err)
	}
	// Its lines but the progress a second and the command line's pointer to its help
	// (the station's, not the operator's to run); its error is the one that names it.
	last := ""
	sc := bufio.NewScanner(io.LimitReader(stderr, 1<<20))
	for sc.Scan() {
		line := sc.Text()
		if progressLine.MatchString(line) || strings.HasPrefix(line, "Run 'linerate ") {
			continue
		}
		if e, ok := strings.CutPrefix(line, "linerate reflect: "); ok {
			line, last = e, e
		}
		logf("reflector on %s: %s", name, line)
	}
	io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	var res ReflectResult
	if json.Unmarshal(out.Bytes(), &res) == nil && res.Interface != "" {
		logf("reflector on %s: %d frames reflected, %d dropped", name, res.Reflected, res.Dropped)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("reflector on %s: %s (%w)", name, cmp.Or(last, "ended"), err)
	}
	return nil
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	k := min(len(p), l.n)
	l.n -= k
	l.w.Write(p[:k])
	return len(p), nil
}

// CheckReflectors says which of ifaces cannot take a reflector (no such interface, not
// Ethernet), before a station starts one in a process of its own.
func CheckReflectors(root string, ifaces []string) error {
	for _, name := range ifaces {
		if _, err := LookupPort(root, name, 1); err != nil {
			return fmt.Errorf("--reflect %s: %w", name, err)
		}
	}
	return nil
}

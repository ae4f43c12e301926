package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/internal/console"
	"github.com/zynqnet/linerate/internal/printable"
)

// errUsage marks a usage error: the subcommand's usage is printed and linerate exits 2.
var errUsage = cli.ErrUsage

// usageError wraps errUsage with what was wrong.
func usageError(format string, a ...any) error { return cli.Usagef(format, a...) }

// parseFlags parses flags that may stand before, between or after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) { return cli.Parse(fs, args) }

// flagGiven reports whether the flag was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool { return cli.Given(fs, name) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error { return cli.WriteJSON(w, v) }

// exitError carries an explicit exit code (doctor's 1 for a failing finding, say).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode maps run's error to the process exit code: 0 ok, an explicit code (doctor's 1
// for a failing finding), 2 for bad input (internal/badinput: usage, an unknown
// interface, a bad file), 1 otherwise.
func exitCode(err error) int {
	var ee *exitError
	var rep *cli.Reported
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &rep):
		return rep.Code
	case badinput.Is(err):
		return 2
	}
	return 1
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	cs := []command{
		showCommand(),
		doctorCommand(),
		snapshotCommand(),
		tuneCommand(),
		revertCommand(),
		profileCommand(),
		dtsCommand(),
		boardCommand(),
	}
	cs = append(cs, genCommands()...)
	return append(cs, iperf3Command(), sweepCommand(), autotuneCommand(), compareCommand(), validateCommand(), stationCommand(), versionCommand())
}

const topUsage = `linerate brings a Zynq board's Ethernet to line rate and proves it.

Usage: linerate COMMAND [ARGS]

Commands:
%s
Run 'linerate COMMAND --help' for a command's flags.
`

func printTopUsage(w io.Writer) {
	var b strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, topUsage, b.String())
}

// run is the whole CLI; main only maps its error to an exit code. Tests call it directly.
// What it prints is made printable: text from files (a DTB, a captured tree) cannot
// drive the operator's terminal.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	// Text for a person's terminal or serial console is wrapped to its width, and on the
	// console kernel messages are held off while the command runs; JSON, YAML and shell
	// output is left as it is.
	stdout, flushOut := console.ForTerminal(stdout, !machineOutput(args), true)
	defer flushOut()
	stderr, flushErr := console.ForTerminal(stderr, true, false)
	defer flushErr()
	stdout, stderr = printable.Writer(stdout), printable.Writer(stderr)
	if len(args) == 0 {
		if t := board.ReadTester("/"); t.OnTester() {
			// At the tester image's console: what an operator runs, ready to type.
			prof := "throughput"
			if b := board.Detect(board.ReadIdentity("/").Compatible); b != nil {
				prof = b.Name
			}
			t.WriteOperatorList(stdout, prof)
			return nil
		}
		printTopUsage(stderr)
		return usageError("no command given")
	}
	switch args[0] {
	case "-h", "--help", "help":
		printTopUsage(stdout)
		return nil
	case "-v", "--version":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fmt.Fprint(stdout, c.usage)
			return nil
		case err == nil:
		case errors.As(err, new(*cli.Reported)):
			// The command said it in its own words.
		case badinput.Is(err):
			// One line naming the input and what to do, then where the usage is.
			msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
			fmt.Fprintf(stderr, "linerate %s: %s\nRun 'linerate %s --help' for its usage.\n", c.name, msg, c.name)
		default:
			fmt.Fprintf(stderr, "linerate %s: %v\n", c.name, err)
		}
		return err
	}
	fmt.Fprintf(stderr, "linerate: unknown command %q\nRun 'linerate --help' for the commands.\n", args[0])
	return usageError("unknown command %q", args[0])
}

// machineOutput reports whether the command writes for a program (JSON, YAML, shell
// assignments), which wrapping would break.
func machineOutput(args []string) bool {
	for _, a := range args {
		switch a {
		case "--json", "-json", "-J", "--env", "-env":
			return true
		}
	}
	return len(args) >= 2 && args[0] == "profile" && args[1] == "show"
}

package main

import (
	"context"
	"io"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/internal/console"
	"github.com/zynqnet/linerate/internal/printable"
	"github.com/zynqnet/linerate/tune"
	"github.com/zynqnet/linerate/validate"
)

// usageError is a usage error saying what was wrong (exit 2, the command's name and
// where its usage is).
func usageError(format string, a ...any) error { return cli.Usagef(format, a...) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error { return cli.WriteJSON(w, v) }

// app is linerate's command line: every command described once; its help, completion
// and manual pages come from these descriptions and the commands' flag sets.
func app() *cli.App {
	return &cli.App{Prog: "linerate", About: "linerate brings a Zynq board's Ethernet to line rate and proves it.", Files: tune.StateFiles, Values: validate.CompletionValues, Commands: []*cli.Command{
		showCommand(), doctorCommand(), snapshotCommand(), tuneCommand(), revertCommand(), profileCommand(), dtsCommand(),
		boardCommand(), phyCommand(), watchCommand(), genCommand(), sinkCommand(), reflectCommand(), rfc2544Command(), iperf3Command(), sweepCommand(),
		autotuneCommand(), compareCommand(), validateCommand(), stationCommand(), versionCommand(), helpCommand(), completionCommand(),
	}}
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
	std := cli.IO{Stdin: stdin, Stdout: printable.Writer(stdout), Stderr: printable.Writer(stderr)}
	// At the tester image's console, linerate alone lists what an operator runs there.
	return app().Main(ctx, args, std, func() bool { return board.OperatorList("/", std.Stdout) })
}

// machineOutput reports whether the command writes for a program (JSON, YAML, shell
// assignments, completion scripts), which wrapping would break.
func machineOutput(args []string) bool {
	for _, a := range args {
		switch a {
		case "--json", "-json", "-J", "--env", "-env", "--print", "-print":
			return true
		}
	}
	return len(args) >= 2 && (args[0] == "profile" && args[1] == "show" || args[0] == "completion" || args[0] == "help" && args[1] == "--man")
}

// one checks a command's positional arguments: exactly one, named what.
func one(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", usageError("want exactly one %s, have %d", what, len(pos))
	}
	return pos[0], nil
}

// none checks that a command was given no positional argument.
func none(pos []string) error {
	if len(pos) > 0 {
		return usageError("unexpected argument %q", pos[0])
	}
	return nil
}

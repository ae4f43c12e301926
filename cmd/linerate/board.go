package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/cli"
	iperf3cmd "github.com/zynqnet/linerate/netperf/iperf3/command"
)

func boardCommand() *cli.Command {
	return &cli.Command{
		Name: "board", Summary: "the boards linerate knows, and each one's facts",
		Usage: []string{"board [NAME] [--json | --env]"},
		About: `Lists the boards linerate knows, or one board's facts: its SoC, the Go target of its
tester image, the QEMU machine that emulates it, its console and its GEM.`,
		Examples: []cli.Example{cli.Ex("board", "the boards: SoC, GEM, max MTU, model"), cli.Ex("board zcu102 --env", "the facts as shell assignments, for scripts")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			asJSON := fs.Bool("json", false, "the board's profile and facts as JSON")
			env := fs.Bool("env", false, "the facts as shell assignments (LINERATE_SOC='zynq-7000' ...), for scripts")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				switch {
				case len(pos) > 1:
					return usageError("give at most one board")
				case *asJSON && *env:
					return usageError("--json and --env exclude each other")
				case len(pos) == 0 && (*asJSON || *env):
					return usageError("--json and --env take a board name")
				case len(pos) == 0:
					board.WriteTable(std.Stdout)
					return nil
				}
				b, err := board.Lookup(pos[0])
				if err != nil {
					return usageError("%v", err)
				}
				if !*env {
					return b.WriteJSON(std.Stdout)
				}
				f, err := b.Facts()
				if err != nil {
					return err
				}
				return f.WriteEnv(std.Stdout)
			}
		},
	}
}

// version is stamped at build time: -ldflags "-X main.version=$(git describe)".
var version = "dev"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name: "version", Summary: "print the version and build of this binary", Usage: []string{"version"},
		Flags: func(fs *flag.FlagSet) cli.Run {
			return func(ctx context.Context, pos []string, std cli.IO) error {
				if len(pos) > 0 {
					return usageError("version takes no arguments")
				}
				fmt.Fprintf(std.Stdout, "linerate %s %s/%s %s\n", version, runtime.GOOS, runtime.GOARCH, runtime.Version())
				return nil
			}
		},
	}
}

func iperf3Command() *cli.Command {
	return &cli.Command{
		Name: "iperf3", Summary: "iperf3-compatible client and server (a stock iperf3 is the peer)",
		Usage: []string{"iperf3 -s [options]", "iperf3 -c HOST[%DEV] [options]"},
		Own: func(ctx context.Context, args []string, std cli.IO) error {
			err := iperf3cmd.Run(ctx, args, std.Stdout, std.Stderr, version)
			if errors.Is(err, flag.ErrHelp) {
				_, err = io.WriteString(std.Stdout, iperf3cmd.Usage())
			}
			return err
		},
		OwnHelp: iperf3cmd.UsageAt, OwnFlags: iperf3cmd.Options(),
	}
}

package main

import (
	"context"
	"flag"
	"io"

	"github.com/zynqnet/linerate/board"
)

const boardUsage = `Usage: linerate board [NAME] [--json | --env]

Lists the boards linerate knows, or one board's facts: its SoC, the Go target of its
tester image, the QEMU machine that emulates it, its console and its GEM.

Flags:
  --json   the board's profile and facts as JSON
  --env    the facts as shell assignments (LINERATE_SOC='zynq-7000' ...), for scripts
`

func boardCommand() command {
	return command{
		name:    "board",
		summary: "the boards linerate knows, and each one's facts",
		usage:   boardUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("board", flag.ContinueOnError)
			asJSON := fs.Bool("json", false, "")
			env := fs.Bool("env", false, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			switch {
			case len(pos) > 1:
				return usageError("give at most one board")
			case *asJSON && *env:
				return usageError("--json and --env exclude each other")
			case len(pos) == 0 && (*asJSON || *env):
				return usageError("--json and --env take a board name")
			case len(pos) == 0:
				board.WriteTable(stdout)
				return nil
			}
			b, err := board.Lookup(pos[0])
			if err != nil {
				return usageError("%v", err)
			}
			f, err := b.Facts()
			if err != nil {
				return err
			}
			if *env {
				return f.WriteEnv(stdout)
			}
			return writeJSON(stdout, struct {
				*board.Board
				Facts board.Facts `json:"facts"`
			}{b, f})
		},
	}
}

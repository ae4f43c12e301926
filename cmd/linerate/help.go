package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/validate"
)

func helpCommand() *cli.Command {
	return &cli.Command{
		Name: "help", Summary: "a command's help; with --man DIR, every manual page",
		Usage: []string{"help [COMMAND [SUBCOMMAND]]", "help plan [--markdown]", "help --man DIR"},
		About: "Prints the help of a command (as 'linerate COMMAND --help' does), or the list of commands. 'help plan' prints the plan reference: every key of a plan and every step kind's fields, with their values, units and defaults (docs/plans.md is the same in Markdown). With --man, writes the manual pages (linerate.1, linerate-COMMAND.1) into DIR; read one with 'man -l DIR/linerate-show.1'.",
		Examples: []cli.Example{cli.Ex("help tune", "the flags of tune"), cli.Ex("help dts overlay", "a subcommand's flags"),
			cli.Ex("help plan", "how to write a plan: every step kind's fields"),
			cli.Ex("help --man out/man", "what 'make man' runs")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			man := fs.String("man", "", "write the manual pages into `DIR` (created)")
			markdown := fs.Bool("markdown", false, "with 'help plan': the reference in Markdown, as docs/plans.md holds it")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				a := app()
				if len(pos) == 1 && pos[0] == "plan" {
					return validate.WriteReference(std.Stdout, *markdown)
				} else if *markdown {
					return cli.Usagef("--markdown is for 'help plan'")
				}
				if *man != "" {
					if err := none(pos); err != nil {
						return err
					}
					n, err := a.WriteManPages(*man, version, time.Now())
					if err == nil {
						fmt.Fprintf(std.Stdout, "wrote %d manual pages to %s (man -l %s)\n", n, *man, filepath.Join(*man, "linerate.1"))
					}
					return err
				}
				h, err := a.HelpOf(pos)
				if err == nil {
					_, err = io.WriteString(std.Stdout, h)
				}
				return err
			}
		},
	}
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name: "completion", Summary: "a bash or zsh completion script for linerate",
		Usage: []string{"completion bash|zsh"},
		About: "Prints a completion script made from linerate's commands and flags: the commands, their subcommands, every flag, and the words a flag takes (--ethtool-api auto, netlink, ioctl).",
		Examples: []cli.Example{cli.Ex("completion bash > /etc/bash_completion.d/linerate", "bash, for every user"),
			cli.Ex("completion zsh > \"${fpath[1]}/_linerate\"", "zsh")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			return func(ctx context.Context, pos []string, std cli.IO) error {
				shell, err := one(pos, "shell (bash or zsh)")
				if err != nil {
					return err
				}
				s, err := app().Completion(shell)
				if err != nil {
					return err
				}
				_, err = io.WriteString(std.Stdout, s)
				return err
			}
		},
	}
}

package main

import (
	"context"
	"flag"
	"io"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/snapshot"
)

// apiFlag is --ethtool-api, which every command that reads a port takes.
func apiFlag(fs *flag.FlagSet) *string {
	return cli.Choice(fs, "ethtool-api", nic.APIAuto, "how ethtool's answers are read: auto (netlink, the ioctl where netlink lacks a message), netlink, or ioctl (the path kernels before 5.6 take)",
		nic.APIAuto, nic.APINetlink, nic.APIIoctl)
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name: "show", Summary: "read everything that decides an interface's throughput",
		Usage: []string{"show [IFACE...] [--json] [--root DIR | --from FILE]"},
		About: `Reads everything that decides an interface's throughput: driver, link, MTU and flags,
channels, rings, coalescing, pause, offloads, counters, queues with RPS/XPS, IRQs with
their per-CPU counts and affinity, NAPI knobs, network sysctls, CPU power states, PCIe
link and the device tree. Without IFACE: every interface but loopback.`,
		Examples: []cli.Example{cli.Ex("show eth0", "the port as text, for a person"), cli.Ex("show eth0 --json", "the same as JSON, for a program"),
			cli.Ex("show --from board.tar.gz", "what a board had, from its snapshot")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			asJSON := fs.Bool("json", false, "print a JSON array, one object per interface")
			root := fs.String("root", "", "read a captured tree (`DIR`/sys, DIR/proc and DIR/linerate/kernel.json) instead of this machine")
			from := fs.String("from", "", "read a snapshot archive `FILE` ('linerate snapshot'; its second sample)")
			api := apiFlag(fs)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				if *from != "" && *root != "" {
					return usageError("--from and --root exclude each other")
				}
				return show(std.Stdout, pos, *root, *from, *api, *asJSON)
			}
		},
	}
}

func show(stdout io.Writer, ifaces []string, root, from, api string, asJSON bool) error {
	ifcs, err := snapshot.Source{From: from, Root: root, API: api}.Interfaces(ifaces)
	if err != nil {
		return err
	}
	return nic.WriteAll(stdout, ifcs, asJSON)
}

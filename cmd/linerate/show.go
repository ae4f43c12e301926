package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/snapshot"
)

const showUsage = `Usage: linerate show [IFACE...] [--json] [--root DIR] [--ethtool-api auto|netlink|ioctl]

Reads everything that decides an interface's throughput: driver, link, MTU and flags,
channels, rings, coalescing, pause, offloads, counters, queues with RPS/XPS, IRQs with
their per-CPU counts and affinity, NAPI knobs, network sysctls, CPU power states, PCIe
link and the device tree. Without IFACE: every interface but loopback.

Flags:
  --json               print a JSON array, one object per interface
  --root DIR           read a captured tree (DIR/sys, DIR/proc and DIR/linerate/kernel.json)
                       instead of this machine
  --from FILE          read a snapshot archive ('linerate snapshot'; its second sample)
  --ethtool-api API    auto (netlink, ioctl where netlink lacks a message), netlink, or
                       ioctl (the path kernels before 5.6 take)
`

// showConfig is what one show call asks for.
type showConfig struct {
	json   bool
	root   string
	from   string
	api    string
	ifaces []string
}

func showCommand() command {
	return command{
		name:    "show",
		summary: "read everything that decides an interface's throughput",
		usage:   showUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			var c showConfig
			fs := flag.NewFlagSet("show", flag.ContinueOnError)
			fs.BoolVar(&c.json, "json", false, "")
			fs.StringVar(&c.root, "root", "", "")
			fs.StringVar(&c.from, "from", "", "")
			fs.StringVar(&c.api, "ethtool-api", nic.APIAuto, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			c.ifaces = pos
			if c.from != "" && c.root != "" {
				return usageError("--from and --root exclude each other")
			}
			switch c.api {
			case nic.APIAuto, nic.APINetlink, nic.APIIoctl:
			default:
				return usageError("--ethtool-api %q: want auto, netlink or ioctl", c.api)
			}
			return c.run(stdout)
		},
	}
}

func (c *showConfig) run(stdout io.Writer) error {
	root := c.root
	if c.from != "" {
		r, cleanup, err := snapshot.OpenLast(c.from)
		if err != nil {
			return err
		}
		defer cleanup()
		root = r
	}
	r, closeFn, err := nic.Open(root, c.api)
	if err != nil {
		return err
	}
	defer closeFn()
	ifcs, err := r.Read(c.ifaces...)
	if err != nil {
		return err
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ifcs)
	}
	for i, ifc := range ifcs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		nic.WriteText(stdout, ifc)
	}
	return nil
}

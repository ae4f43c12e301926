package main

import (
	"context"
	"io"

	iperf3cmd "github.com/zynqnet/linerate/netperf/iperf3/command"
)

func iperf3Command() command {
	return command{
		name:    "iperf3",
		summary: "iperf3-compatible client and server (a stock iperf3 is the peer)",
		usage:   iperf3cmd.Usage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return iperf3cmd.Run(ctx, args, stdout, stderr, version)
		},
	}
}

// Command linerate reads, diagnoses, tunes and measures the Ethernet of Xilinx Zynq boards
// (Cadence GEM, Linux macb driver) and of any Linux interface. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zynqnet/linerate/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.Code(err))
}

//go:build arm || arm64

package main

import (
	"context"
	"errors"
	"flag"

	"github.com/zynqnet/linerate/internal/cli"
)

// The board images are built without the station (its store, page and metrics stay on
// the line's PC); the command says where it is.
func stationCommand() *cli.Command {
	return &cli.Command{
		Name: "station", Summary: "the line's station (in the amd64 build of linerate)", Usage: []string{"station ..."},
		About: "The station runs on the line's PC: use the amd64 build (bin/linerate-linux-amd64).",
		Flags: func(*flag.FlagSet) cli.Run {
			return func(context.Context, []string, cli.IO) error {
				return errors.New("the station is not in this build (arm boards); run the amd64 build of linerate on the line's PC")
			}
		},
	}
}

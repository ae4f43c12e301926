//go:build arm || arm64

package main

import (
	"context"
	"errors"
	"io"
)

// The board images are built without the station (its store, page and metrics stay on
// the line's PC); the command says where it is.
func stationCommand() command {
	return command{
		name:    "station",
		summary: "the line's station (in the amd64 build of linerate)",
		usage:   "Usage: linerate station ...\n\nThe station runs on the line's PC: use the amd64 build (bin/linerate-linux-amd64).\n",
		run: func(context.Context, []string, io.Reader, io.Writer, io.Writer) error {
			return errors.New("the station is not in this build (arm boards); run the amd64 build of linerate on the line's PC")
		},
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
)

// version is stamped at build time: -ldflags "-X main.version=$(git describe)".
var version = "dev"

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version and build of this binary",
		usage:   "Usage: linerate version\n",
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("version", flag.ContinueOnError)
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) > 0 {
				return usageError("version takes no arguments")
			}
			// runtime.Version is the toolchain's, as the build info says it, without the
			// build-info parser (5 KB of a board's binary).
			fmt.Fprintf(stdout, "linerate %s %s/%s %s\n", version, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
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
			goVer := runtime.Version()
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVer = bi.GoVersion
			}
			fmt.Fprintf(stdout, "linerate %s %s/%s %s\n", version, runtime.GOOS, runtime.GOARCH, goVer)
			return nil
		},
	}
}

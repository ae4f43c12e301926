//go:build !linux || arm || arm64

package engine

import (
	"context"
	"errors"
	"io"
	"time"
)

// ReflectInKernel is in the station's (amd64) build: the boards' images leave the BPF
// loader out of their footprint, and their reflector is the thread.
func ReflectInKernel(context.Context, string, string, time.Duration, io.Writer) (*ReflectResult, error) {
	return nil, errors.New("reflect --bpf is in the station's build of linerate (amd64); here, reflect without --bpf")
}

// ProbeInKernel: not in this build (ReflectInKernel).
func ProbeInKernel(string) error {
	return errors.New("the in-kernel reflector is in the station's build of linerate (amd64)")
}

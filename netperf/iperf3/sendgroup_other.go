//go:build !linux

package iperf3

import "context"

// groupSenders: the shared sending loop is Linux's (sendgroup_linux.go); elsewhere each
// stream has its own goroutine.
func (t *test) groupSenders() []*stream { return nil }

func (t *test) sendGroup(ctx context.Context, ss []*stream) {}

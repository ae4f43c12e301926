//go:build !linux

package iperf3

import "context"

// senderGroups: the sending loops are Linux's (sendgroup_linux.go); elsewhere each
// stream has its own goroutine.
func (t *test) senderGroups() [][]*stream { return nil }

func (t *test) sendGroup(ctx context.Context, ss []*stream) {}

//go:build !linux

package nic

import (
	"context"
	"errors"
	"runtime"
	"time"
)

// Watcher watches a port's link; it is Linux's.
type Watcher struct {
	Iface, API string
	Interval   time.Duration
	Excuse     func(time.Time) string
}

// Watch says it is Linux's.
func (w Watcher) Watch(ctx context.Context, onEvent func(LinkEvent)) (*WatchSummary, error) {
	return nil, errors.New("watching a link is Linux's, not " + runtime.GOOS + "/" + runtime.GOARCH)
}

//go:build !linux

package nic

import (
	"context"
	"errors"
	"runtime"
)

// Watch says it is Linux's.
func (w Watcher) Watch(ctx context.Context, onEvent func(LinkEvent)) (*WatchSummary, error) {
	return nil, errors.New("watching a link is Linux's, not " + runtime.GOOS + "/" + runtime.GOARCH)
}

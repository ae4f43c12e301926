package validate

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"
)

// stationTime reads the time of day from the station's HTTP Date header.
func stationTime(ctx context.Context, tc *tls.Config, urls ...string) (time.Time, bool) {
	c := NewClient(tc, 3*time.Second)
	for _, u := range urls {
		if u == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			continue
		}
		resp, err := c.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

package factory

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A board without a clock takes the time of day from the station's Date header.
func TestStationTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "HEAD" {
			t.Errorf("method %s, want HEAD", r.Method)
		}
	}))
	defer srv.Close()
	got, ok := stationTime(context.Background(), "", srv.URL+"/api/reports")
	if !ok || time.Since(got).Abs() > 5*time.Second {
		t.Fatalf("station time %v %v, want about now", got, ok)
	}
	if _, ok := stationTime(context.Background(), "http://127.0.0.1:1/"); ok {
		t.Fatal("a station that is down gave a time")
	}
}

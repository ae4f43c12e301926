package station

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// scaleReport is a generated board report as a line makes them: a plan's eleven steps,
// their figures, no show or doctor (those are per-board kilobytes the page never reads).
func scaleReport(i int, at time.Time, rng *rand.Rand) (*plan.Report, []byte) {
	boards := []string{"zc702", "zcu102", "zcu104"}
	serial := i
	if rng.IntN(10) == 0 && i > 10 {
		serial = i - 1 - rng.IntN(10) // a retest of a board tested a little before
	}
	mac := fmt.Sprintf("00:0a:35:%02x:%02x:%02x", serial>>16&0xff, serial>>8&0xff, serial&0xff)
	if rng.IntN(2000) == 0 {
		mac = "00:0a:35:00:01:22" // an unprogrammed EEPROM now and then
	}
	r := &plan.Report{Schema: plan.SchemaVersion, ID: fmt.Sprintf("SN%07d-%d", serial, i), Board: boards[serial%3], Serial: fmt.Sprintf("SN%07d", serial), MAC: mac,
		Interface: "eth0", Linerate: "bench", Started: at.Add(-40 * time.Second), Seconds: 35 + rng.Float64()*15, Fixture: fmt.Sprintf("fixture-%d", rng.IntN(8)),
		Figures: map[string]float64{}, Failed: []string{}, Verdict: "PASS"}
	for _, id := range []string{"link", "identity", "phy", "doctor", "tune", "tcp-up", "tcp-down", "udp-up", "frames", "stability", "counters"} {
		st := plan.StepResult{ID: id, Type: id, Pass: true, Summary: id + " as expected", Seconds: rng.Float64() * 10, Measured: map[string]float64{}}
		switch id {
		case "tcp-up", "tcp-down":
			st.Type = "iperf3"
			v := 900 + rng.Float64()*40
			st.Measured["mbps"], r.Figures[id+"_mbps"] = v, v
		case "frames":
			r.Figures["frames_p99_us"] = 200 + rng.Float64()*100
		}
		if rng.IntN(60) == 0 {
			st.Pass, st.Reason = false, "below the threshold"
			r.Failed, r.Verdict = append(r.Failed, id), "FAIL"
		}
		r.Steps = append(r.Steps, st)
	}
	b, _ := json.Marshal(r)
	return r, b
}

// BenchmarkLineScale is the station at a line's scale (scripts/bench-station): a million
// reports (LINERATE_SCALE) in PostgreSQL written through the store's own Put, then the
// page, a day's CSV and the alarms, each timed over HTTP, and 50 boards posting at once
// for 10 s. It is a measurement, not a test: it runs only when asked.
func BenchmarkLineScale(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("LINERATE_SCALE"))
	if n <= 0 {
		b.Skip("LINERATE_SCALE=N (scripts/bench-station) sets how many reports")
	}
	conn := startPostgres(b)
	st, err := OpenPG(b.Context(), conn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	say := func(format string, a ...any) {
		line := fmt.Sprintf(format, a...)
		b.Log(line)
		fmt.Fprintln(os.Stderr, line)
	}
	// A year of a line, oldest first.
	end := time.Now().Truncate(24 * time.Hour).Add(-time.Hour)
	year := 365 * 24 * time.Hour
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				at := end.Add(-year + time.Duration(float64(year)*float64(i)/float64(n)))
				r, body := scaleReport(i, at, rng)
				if _, err := st.Put(r, body, at, Meta{Fixture: r.Fixture}, Rules{}); err != nil {
					b.Error(err)
					return
				}
				if i%100000 == 0 && i > 0 {
					say("generated %d reports in %.0fs", i, time.Since(start).Seconds())
				}
			}
		}(w)
	}
	wg.Wait()
	say("generated %d reports through PGStore.Put in %.0fs (%.0f reports/s with 8 writers)", n, time.Since(start).Seconds(), float64(n)/time.Since(start).Seconds())

	t0 := time.Now()
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		b.Fatal(err)
	}
	say("station start (index of %d reports read from PostgreSQL): %.1fs", n, time.Since(t0).Seconds())
	hs := httptest.NewServer(srv)
	defer hs.Close()
	day := end.Add(-24 * time.Hour).Local().Format("2006-01-02")
	timeGet := func(name, path string) {
		var ds []time.Duration
		size := 0
		for i := 0; i < 5; i++ {
			t0 := time.Now()
			resp, err := http.Get(hs.URL + path)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("%s: %s", path, resp.Status)
			}
			ds = append(ds, time.Since(t0))
			size = len(body)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		say("%-28s median %6.0f ms (min %.0f, max %.0f), %d bytes", name, float64(ds[2].Microseconds())/1000, float64(ds[0].Microseconds())/1000, float64(ds[4].Microseconds())/1000, size)
	}
	timeGet("page /", "/")
	timeGet("page / board=zcu102", "/?board=zcu102")
	timeGet("CSV of one day", "/api/reports.csv?from="+day+"&to="+day)
	timeGet("alarms", "/api/alarms")

	// 50 boards posting at once for 10 s.
	var posted atomic.Int64
	stop := time.Now().Add(10 * time.Second)
	for w := 0; w < 50; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(100+w), 9))
			c := &http.Client{Timeout: 30 * time.Second}
			for i := 0; time.Now().Before(stop); i++ {
				r, body := scaleReport(n+w*1_000_000+i, time.Now(), rng)
				r.ID = fmt.Sprintf("post-%d-%d", w, i)
				body, _ = json.Marshal(r)
				resp, err := c.Post(hs.URL+"/api/reports", "application/json", strings.NewReader(string(body)))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("POST: %s", resp.Status)
					return
				}
				posted.Add(1)
			}
		}(w)
	}
	wg.Wait()
	say("50 boards posting at once: %d reports in 10 s, %.0f reports/s", posted.Load(), float64(posted.Load())/10)
	out := filepath.Join("..", "out")
	os.MkdirAll(out, 0o755)
}

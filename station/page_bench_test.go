package station

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkPageMillion: the page's work over a million reports in the index (the store
// holds none of them: the rows shown cost one read of 200 summaries, measured apart in
// scripts/bench-station).
func BenchmarkPageMillion(b *testing.B) {
	st, err := OpenBolt(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Now().Add(-365 * 24 * time.Hour)
	steps := []string{"link", "identity", "phy", "doctor", "tune", "tcp-up", "tcp-down", "udp-up", "frames", "stability", "counters"}
	for i := 0; i < 1_000_000; i++ {
		rec := record{Summary: Summary{ID: fmt.Sprintf("r%d", i), Board: []string{"zc702", "zcu102", "zcu104"}[i%3], Serial: fmt.Sprintf("SN%07d", i-i%10*rng.IntN(2)),
			MAC: "00:0a:35:00:00:01", Verdict: "PASS", Failed: []string{}, Received: t0.Add(time.Duration(i) * 31 * time.Second), Seconds: 40 + rng.Float64()*10,
			TCP: map[string]float64{"up": 930, "down": 940}, Meta: Meta{Fixture: fmt.Sprintf("fixture-%d", i%8)}}}
		if rng.IntN(50) == 0 {
			rec.Verdict, rec.Failed = "FAIL", []string{steps[rng.IntN(len(steps))]}
		}
		for _, s := range steps {
			rec.Steps = append(rec.Steps, brief{ID: s, Pass: true, Seconds: rng.Float64() * 10})
		}
		srv.idx.mu.Lock()
		srv.take(&rec)
		srv.idx.mu.Unlock()
	}
	for _, path := range []string{"/", "/?board=zcu102", "/?from=" + time.Now().Add(-48*time.Hour).Format("2006-01-02")} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

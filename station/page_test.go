package station

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The chart's time axis: as fine as its span needs, no two ticks alike (a run of
// reports within one minute once had both ends read the same minute).
func TestTimeTicks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	for _, c := range []struct {
		span time.Duration
		want []string
	}{
		{40 * time.Second, []string{"10:00:00", "10:00:10", "10:00:20", "10:00:30", "10:00:40"}},
		{3 * time.Hour, []string{"10:00", "10:45", "11:30", "12:15", "13:00"}},
		{3 * 24 * time.Hour, []string{"12-01 10:00", "12-02 04:00", "12-02 22:00", "12-03 16:00", "12-04 10:00"}},
		{60 * 24 * time.Hour, []string{"12-01", "12-16", "12-31", "01-15", "01-30"}},
		{0, []string{"10:00:00"}},
		{2 * time.Second, []string{"10:00:00", "10:00:01", "10:00:02"}},
	} {
		var got []string
		for _, tk := range timeTicks(t0, t0.Add(c.span), 5) {
			got = append(got, tk.label)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("span %v: %v, want %v", c.span, got, c.want)
		}
	}
}

func TestFigureText(t *testing.T) {
	for k, want := range map[string]string{"tcp-up_mbps": "tcp-up 941.2\u00a0Mbit/s", "frames_p99_us": "frames p99 2361\u00a0µs", "frames_loss_pct": "frames loss 0.5\u00a0%",
		"speed_mbps": "speed 1000\u00a0Mbit/s", "carrier_s": "carrier 2\u00a0s", "retransmits": "retransmits 3"} {
		v := map[string]float64{"tcp-up_mbps": 941.2, "frames_p99_us": 2361, "frames_loss_pct": 0.5, "speed_mbps": 1000, "carrier_s": 2, "retransmits": 3}[k]
		if got := figureText(k, v); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// The chart's legend is under the plot, within the drawing, however long a board's name;
// a year of reports is drawn as a few hundred points, not one per report.
func TestChartLegendAndPoints(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows []row
	for i := 0; i < 20000; i++ {
		b := "zc702"
		if i%2 == 1 {
			b = "a-board-with-a-rather-long-name-rev-b"
		}
		rows = append(rows, row{Board: b, Verdict: "PASS", Received: t0.Add(time.Duration(i) * 26 * time.Minute), TCPUp: 900, TCPDown: math.NaN()})
	}
	svg := string(chart(filterRows(rows, map[string]string{})))
	h, _ := strconv.ParseFloat(regexp.MustCompile(`<svg [^>]*height="(\d+)"`).FindStringSubmatch(svg)[1], 64)
	for _, m := range regexp.MustCompile(`<text x="[\d.]+" y="([\d.]+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		if y, _ := strconv.ParseFloat(m[1], 64); y > h {
			t.Errorf("%q drawn at y %v, below the drawing's height %v", m[2], y, h)
		}
	}
	if !strings.Contains(svg, "a-board-with-a-rather-long-name-rev-b TCP up (10000 reports)") {
		t.Error("the legend does not name the long board with its count")
	}
	if n := strings.Count(svg, "<circle"); n > 2*300+1 {
		t.Errorf("%d points drawn for 20,000 reports", n)
	}
	if len(svg) > 200_000 {
		t.Errorf("the chart is %d bytes", len(svg))
	}
}

// Pace: the median and p90 from the 1% buckets, close to the exact ones.
func TestPaceQuantiles(t *testing.T) {
	var rows []row
	for i := 1; i <= 1000; i++ {
		rows = append(rows, row{Board: "zc702", Seconds: float64(i) / 10, Steps: []stepTime{{0, float32(i) / 100}}})
	}
	boards, steps := paces(filterRows(rows, map[string]string{}), []string{"link"})
	if len(boards) != 1 || math.Abs(boards[0].Median-50)/50 > 0.01 || math.Abs(boards[0].P90-90)/90 > 0.01 || boards[0].Reports != 1000 {
		t.Errorf("board pace %+v, want median 50 s and p90 90 s within 1%%", boards)
	}
	if len(steps) != 1 || math.Abs(steps[0].Median-5)/5 > 0.01 || steps[0].Runs != 1000 {
		t.Errorf("step pace %+v", steps)
	}
}

// A serial's first and latest reports as they arrive out of order (one station heard of
// a retest before its first test): the first-pass and final verdicts follow the times.
func TestIndexHistoryOutOfOrder(t *testing.T) {
	x := newIndex(newAlarms(3, nil))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	add := func(id, verdict string, at time.Duration) {
		x.add(&record{Summary: Summary{ID: id, Board: "zc702", Serial: "A", Verdict: verdict, Received: t0.Add(at)}})
	}
	add("retest", "FAIL", time.Hour)
	add("first", "PASS", 0)
	add("third", "PASS", 2*time.Hour)
	add("late-second", "FAIL", 90*time.Minute)
	if x.rows[0].ID != "first" || !x.rows[0].First || x.rows[1].First || !x.rows[0].FinalPass {
		t.Errorf("rows %+v", x.rows)
	}
	y := yields(filterRows(x.rows, map[string]string{}))
	if len(y) != 1 || y[0].Tested != 1 || y[0].Passed != 1 || y[0].FinalPassed != 1 {
		t.Errorf("yields %+v", y)
	}
	for i, id := range []string{"first", "retest", "late-second", "third"} {
		if x.rows[i].ID != id || x.byID[id] != i {
			t.Errorf("row %d: %s (byID %d), want %s", i, x.rows[i].ID, x.byID[id], id)
		}
	}
}

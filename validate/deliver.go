package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/plan"
)

// The report's way out: the spool of earlier runs first, the first offer before the
// verdict line, the files in the report directory, then delivery until the station
// takes it.

func (r *run) uploader() *Uploader {
	dir := r.ReportDir
	if dir == "" {
		dir = defaultReportDir()
		r.ReportDir = dir
	}
	up := &Uploader{URL: r.Plan.Station.ReportURL, SpoolDir: filepath.Join(dir, "spool"), Window: r.UploadWindow, Console: r.Console, Token: r.StationToken,
		Client: NewClient(r.StationTLS, 10*time.Second)}
	if r.StationURL != "" {
		up.URL = r.StationURL
	}
	return up
}

// flushSpool sends the reports an earlier run could not deliver first.
func (r *run) flushSpool(ctx context.Context, up *Uploader) {
	if up.URL == "" {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, refused, err := up.Flush(fctx, ""); n > 0 || len(refused) > 0 || err != nil {
		suffix := ""
		if len(refused) > 0 {
			suffix = fmt.Sprintf("; %d refused for good (%s), moved to %s", len(refused), strings.Join(refused, ", "), filepath.Join(up.SpoolDir, "refused"))
		}
		if err != nil {
			suffix += "; the rest stay spooled: " + err.Error()
		}
		fmt.Fprintf(r.Console, "linerate validate: spool: %d earlier report(s) delivered%s\n", n, suffix)
	}
}

// finish offers the report to the station, writes the reports, prints the verdict line,
// calls afterVerdict (the run gives back its tune) and delivers the JSON.
func (r *run) finish(ctx context.Context, rep *plan.Report, up *Uploader, afterVerdict func()) (*Result, error) {
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		// Nothing settle knows of; the verdict line and a report still go out.
		rep.Steps = append(rep.Steps, plan.StepResult{ID: "internal", Type: "internal", Summary: "the report could not be encoded", Reason: "internal error: " + err.Error()})
		rep.Doctor, rep.Show = nil, nil
		for i := range rep.Steps {
			rep.Steps[i].Detail = nil
		}
		settle(rep)
		if body, err = json.MarshalIndent(rep, "", "  "); err != nil {
			return nil, err
		}
	}
	delivered, refused, body := r.offer(ctx, rep, up, body)
	junit, err := rep.JUnit()
	if err != nil {
		junit = nil
		fmt.Fprintf(r.Console, "linerate validate: JUnit report: %v\n", err)
	}
	dir := r.ReportDir
	werr := os.MkdirAll(dir, 0o755)
	if werr == nil {
		werr = atomicfile.Write(filepath.Join(dir, rep.ID+".json"), body, 0o644)
		if junit != nil {
			werr = errors.Join(werr, atomicfile.Write(filepath.Join(dir, rep.ID+".xml"), junit, 0o644))
		}
	}
	if werr != nil {
		fmt.Fprintf(r.Console, "linerate validate: cannot write the reports to %s: %v\n", dir, werr)
	} else {
		fmt.Fprintf(r.Console, "linerate validate: reports %s.json and %s.xml in %s\n", rep.ID, rep.ID, dir)
	}
	fmt.Fprintln(r.Console, rep.VerdictLine())
	afterVerdict()
	switch {
	case delivered:
		fmt.Fprintf(r.Console, "linerate validate: report %s delivered to %s (attempt 1)\n", rep.ID, up.URL)
	case refused:
	case up.URL != "" || werr != nil:
		if err := up.Deliver(ctx, rep.ID, body); err != nil {
			fmt.Fprintf(r.Console, "linerate validate: %v\n", err)
		}
	}
	return &Result{Report: rep, JSON: body, WriteErr: werr}, nil
}

// offer is the report's first delivery, before the verdict: a station that refuses it
// for a reason (a duplicate MAC under --mac-policy reject) fails the run, and the
// verdict line names why; a station it cannot reach leaves the verdict as it is, and the
// report is spooled and re-sent after it.
func (r *run) offer(ctx context.Context, rep *plan.Report, up *Uploader, body []byte) (delivered, refused bool, out []byte) {
	if up.URL == "" {
		return false, false, body
	}
	// Older spooled reports first, so a board's history reaches the station in order:
	// while they cannot go, this one waits behind them in the spool (Deliver).
	if _, _, err := up.Flush(ctx, ""); err != nil {
		return false, false, body
	}
	final, err := up.post(ctx, body)
	switch {
	case err == nil:
		return true, false, body
	case !final:
		return false, false, body
	}
	id := "station-refused"
	if strings.Contains(err.Error(), "duplicate MAC") {
		id = "duplicate-mac"
	}
	fmt.Fprintf(r.Console, "linerate validate: the station refused report %s: %v\n", rep.ID, err)
	rep.Steps = append(rep.Steps, plan.StepResult{ID: id, Type: "station", Summary: "the station refused the report", Reason: err.Error()})
	settle(rep)
	if b, jerr := json.MarshalIndent(rep, "", "  "); jerr == nil {
		body = b
	}
	return false, true, body
}

func defaultReportDir() string {
	for _, d := range []string{"/var/lib/linerate", "/run/linerate"} {
		if err := os.MkdirAll(filepath.Join(d, "reports"), 0o755); err == nil {
			probe := filepath.Join(d, "reports", ".probe")
			if f, err := os.Create(probe); err == nil {
				f.Close()
				os.Remove(probe)
				return filepath.Join(d, "reports")
			}
		}
	}
	return filepath.Join(os.TempDir(), "linerate-reports")
}

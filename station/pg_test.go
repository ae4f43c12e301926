package station

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/plan"
)

// startPostgres starts a PostgreSQL server of Debian's postgresql package for the test:
// initdb and pg_ctl as the postgres user in a directory of its own, listening on a Unix
// socket there only; stopped when the test ends. It returns the connection string.
func startPostgres(t testing.TB) string {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 || os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL is not installed (make test installs it) or not root")
		}
		t.Skip("needs Debian's postgresql package and root")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	dir, err := os.MkdirTemp("", "linerate-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	as := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	os.Chmod(dir, 0o755)
	data := filepath.Join(dir, "data")
	as(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	as(filepath.Join(bin, "pg_ctl"), "-D", data, "-w", "-l", filepath.Join(dir, "log"), "-o", "-k "+dir+" -p "+port+" -c listen_addresses= -c fsync=on", "start")
	t.Cleanup(func() {
		exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop").Run()
	})
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", dir, port)
}

func pgServer(t *testing.T, conn string) *httptest.Server {
	t.Helper()
	st, err := OpenPG(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

// TestPostgres: two stations on one PostgreSQL database share one history: a report
// posted to either is listed, served and charted by both; an id is written once across
// them (same body 200, another 409); the door's checks hold; the schema is versioned.
func TestPostgres(t *testing.T) {
	conn := startPostgres(t)
	a, b := pgServer(t, conn), pgServer(t, conn)
	r1, r2 := report("p1", "zc702", "PASS", 941), report("p2", "zcu102", "FAIL", 500)
	if code, msg := post(t, a.URL, r1); code != 201 {
		t.Fatal(code, msg)
	}
	if code, msg := post(t, b.URL, r2); code != 201 {
		t.Fatal(code, msg)
	}
	for _, hs := range []*httptest.Server{a, b} {
		_, list := get(t, hs.URL+"/api/reports")
		if !strings.Contains(list, `"id": "p1"`) || !strings.Contains(list, `"id": "p2"`) || strings.Index(list, `"p1"`) > strings.Index(list, `"p2"`) {
			t.Errorf("a station's list: %s", list)
		}
		if code, body := get(t, hs.URL+"/api/reports/p2"); code != 200 || !asPosted(body, r2) {
			t.Errorf("GET p2: %d", code)
		}
		if code, page := get(t, hs.URL+"/"); code != 200 || !strings.Contains(page, "SN-p1") || !strings.Contains(page, "SN-p2") {
			t.Errorf("page: %d", code)
		}
	}
	if code, _ := post(t, b.URL, r1); code != http.StatusOK {
		t.Errorf("the same report again, to the other station: %d", code)
	}
	if code, msg := post(t, b.URL, report("p1", "zc702", "PASS", 10)); code != http.StatusConflict {
		t.Errorf("another report under p1: %d %s", code, msg)
	}
	if code, _ := post(t, a.URL, mutate("p3", func(r *plan.Report) { r.Steps[1].Pass = false })); code != 422 {
		t.Errorf("an inconsistent verdict: %d", code)
	}
	tok, _ := ParseTokens([]byte("0123456789abcdef0123 fixture-1\n"), "tokens")
	a.Config.Handler.(*Server).RequireTokens(tok, nil)
	if code, _ := postAs(t, a.URL, "", report("p4", "zc702", "PASS", 1)); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := postAs(t, a.URL, "0123456789abcdef0123", report("p4", "zc702", "PASS", 1)); code != 201 {
		t.Errorf("a token: %d", code)
	}
	if _, list := get(t, b.URL+"/api/reports"); !strings.Contains(list, `"posted_by": "fixture-1"`) {
		t.Errorf("the other station does not see who posted p4: %s", list)
	}
	// A store that cannot answer is a 500, not a report that is not there.
	gone, _ := OpenPG(context.Background(), conn)
	gs, _ := NewServer(gone, log.New(io.Discard, "", 0), Options{})
	gone.Close()
	ghs := httptest.NewServer(gs)
	defer ghs.Close()
	if code, _ := get(t, ghs.URL+"/api/reports/p1"); code != 500 {
		t.Errorf("a store that cannot answer: %d, want 500", code)
	}
	// A station finding a schema newer than it knows refuses to run on it.
	st, _ := OpenPG(context.Background(), conn)
	st.pool.Exec(context.Background(), `UPDATE linerate_schema SET version = 99`)
	st.Close()
	if _, err := OpenPG(context.Background(), conn); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("a newer schema: %v", err)
	}
}

// TestPostgresKillDuringBurst: as TestKillDuringBurst, on PostgreSQL.
func TestPostgresKillDuringBurst(t *testing.T) {
	killDuringBurst(t, startPostgres(t))
}

package station

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/plan"
)

// The plans a line runs: a station given them (--plans DIR) knows each by the hash of
// its text, and a report judged by another plan (a board with a stale image, a plan
// edited on the bench) is flagged, or rejected with --plan-policy reject.

// Plans are the plans a station expects, by the SHA-256 of their text (hex).
type Plans map[string]string

// LoadPlans reads the plans in dir: every regular *.yaml or *.yml file in it (not its
// subdirectories), at most plan.MaxBytes each.
func LoadPlans(dir string) (Plans, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	ps := Plans{}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			continue
		}
		b, err := readall.File(filepath.Join(dir, name), plan.MaxBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		sum := sha256.Sum256(b)
		ps[hex.EncodeToString(sum[:])] = name
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s holds no plan (*.yaml)", dir)
	}
	return ps, nil
}

// names are the plans' file names, sorted.
func (ps Plans) names() string {
	var n []string
	for _, v := range ps {
		n = append(n, v)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// checkPlan says which rule of the station's plans a report breaks ("" none).
func (s *Server) checkPlan(r *plan.Report) string {
	ps := s.opts.Plans
	if ps == nil {
		return ""
	}
	if _, ok := ps[r.PlanSHA256]; ok {
		return ""
	}
	name := "?"
	if r.Plan != nil {
		name = r.Plan.Name
	}
	sha := r.PlanSHA256
	if sha == "" {
		sha = "none given"
	}
	return fmt.Sprintf("plan %s (sha256 %.12s) is not one of the station's plans (%s)", name, sha, ps.names())
}

package station

import (
	"context"
	"errors"
	"flag"
	"unicode/utf8"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/internal/cli"
)

// PolicyFlags registers the line's policies on a command's flags (linerate station
// --plans ...) and returns what checks them and fills o once they are parsed; the
// station owns its options, the command only wires them.
func PolicyFlags(fs *flag.FlagSet, o *Options) func() error {
	macPolicy := cli.Choice(fs, "mac-policy", "flag", "a report whose MAC another serial reported: flag it (page, list, metrics) or reject it (409: the board's run fails)", "flag", "reject")
	fs.IntVar(&o.FixtureAlarm, "fixture-alarm", DefaultFixtureAlarm, "raise a fixture alarm when one step fails on `N` different boards in a row on one fixture")
	plans := fs.String("plans", "", "the plans the line runs: the *.yaml files in `DIR`; a report of another plan (its plan_sha256) is flagged, or rejected with --plan-policy reject")
	planPolicy := cli.Choice(fs, "plan-policy", "flag", "a report of a plan not in --plans: flag it, or reject it (409: the board's run fails)", "flag", "reject")
	fs.IntVar(&o.MaxAttempts, "max-attempts", 0, "a board (serial and MAC) whose reports failed `N` times is for repair: its next report is flagged, or rejected with --retest-policy reject (default: no limit)")
	fs.BoolVar(&o.RetestElsewhere, "retest-elsewhere", false, "a retest after a failure must come from another fixture than the failure's")
	retestPolicy := cli.Choice(fs, "retest-policy", "flag", "a report that breaks --max-attempts or --retest-elsewhere: flag it, or reject it (409: the board's run fails)", "flag", "reject")
	golden := fs.String("golden", "", "the line's golden boards: `FILE` of lines \"BOARD SERIAL\"; a fixture is verified once one passes on it, for --golden-every boards and --golden-hours hours, and a report from an unverified fixture is flagged (or rejected with --golden-policy reject); a golden board that fails raises the fixture's alarm")
	fs.IntVar(&o.GoldenEvery, "golden-every", DefaultGoldenEvery, "a fixture needs a golden board again after `N` boards")
	fs.Float64Var(&o.GoldenHours, "golden-hours", DefaultGoldenHours, "a fixture needs a golden board again after `H` hours")
	goldenPolicy := cli.Choice(fs, "golden-policy", "flag", "a report from a fixture not verified by a golden board: flag it, or reject it (409: the board's run fails)", "flag", "reject")
	fs.IntVar(&o.Population, "population", DefaultPopulation, "each measurement's population: the last `N` passing boards of a type")
	fs.Float64Var(&o.Sigmas, "sigmas", DefaultSigmas, "the population's limits: median +- `K` robust sigma (AEC-Q001's part average testing)")
	fs.StringVar(&o.Line, "line", "", "the line's `NAME`, the page's header")
	fs.Float64Var(&o.Target, "target", 0, "the tests an hour the line should reach (`N`): a tile against it and the hour chart's target line")
	outlierPolicy := cli.Choice(fs, "outlier-policy", "flag", "a passing board outside its population's limits: flag it (marginal, with the reason), or fail it (409: the board's run fails)", "flag", "fail")
	return func() error {
		o.MACPolicy, _ = ParseMACPolicy(*macPolicy)
		o.GoldenPolicy, _ = ParsePolicy(*goldenPolicy)
		o.OutlierPolicy, _ = ParsePolicy(*outlierPolicy)
		if len(o.Line) > 64 || !utf8.ValidString(o.Line) || !plain(o.Line) {
			return badinput.Errorf("--line %q: want at most 64 characters of text, no control characters", o.Line)
		}
		if !(o.Target >= 0 && o.Target <= 100_000) {
			return badinput.Errorf("--target %g: want 0..100000 tests an hour", o.Target)
		}
		if o.Population < MinPopulation || o.Population > 1_000_000 || !(o.Sigmas >= 1 && o.Sigmas <= 20) {
			return badinput.Errorf("--population %d --sigmas %g: want %d..1000000 boards and 1..20 sigma", o.Population, o.Sigmas, MinPopulation)
		}
		if *golden != "" {
			var err error
			if o.Golden, err = LoadGolden(*golden); err != nil {
				return badinput.Errorf("--golden: %v", err)
			}
		}
		if o.GoldenEvery < 1 || o.GoldenEvery > 100000 || !(o.GoldenHours > 0 && o.GoldenHours <= 24*365) {
			return badinput.Errorf("--golden-every %d --golden-hours %g: want 1..100000 boards and a positive number of hours", o.GoldenEvery, o.GoldenHours)
		}
		o.RetestPolicy, _ = ParsePolicy(*retestPolicy)
		if o.MaxAttempts < 0 || o.MaxAttempts > 1000 {
			return badinput.Errorf("--max-attempts %d: want 1..1000 failures, or 0 for no limit", o.MaxAttempts)
		}
		if o.FixtureAlarm < 2 || o.FixtureAlarm > 100 {
			return badinput.Errorf("--fixture-alarm %d: want 2..100 boards", o.FixtureAlarm)
		}
		var err error
		if o.PlanPolicy, err = ParsePolicy(*planPolicy); err != nil {
			return badinput.Errorf("--plan-policy %v", err)
		}
		if *plans != "" {
			if o.Plans, err = LoadPlans(*plans); err != nil {
				return badinput.Errorf("--plans: %v", err)
			}
		} else if *planPolicy != "flag" {
			return badinput.Errorf("--plan-policy %s needs --plans DIR (the plans the line runs)", *planPolicy)
		}
		return nil
	}
}

// LimitsCommand is 'linerate station limits': a board type's measurements from a store,
// with the limits the population proposes.
func LimitsCommand() *cli.Command {
	return &cli.Command{
		Name: "limits", Summary: "a board type's measurements: population, Cpk, proposed limits",
		Usage:    []string{"station limits --type BOARD [--data DIR | --db URL] [--population N] [--sigmas K] [--json]"},
		About:    "Reads the store's passing boards of a type and, per measurement that has a limit in the plans, prints its population (how many boards, from when to when), median, robust sigma, p1 and p99, the plan's limit and the process's Cpk against it, the population's part-average limits (median +- K robust sigma, AEC-Q001) and the limit it proposes for the plan, as a limits: line.",
		Examples: []cli.Example{cli.Ex("station limits --type zc702", "the ZC702's measurements from /var/lib/linerate-station")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			typ := fs.String("type", "", "the board `TYPE` (default: every type)")
			data := fs.String("data", "/var/lib/linerate-station", "the bbolt store's `DIR`")
			db := fs.String("db", "", "the PostgreSQL store's `URL` instead")
			n := fs.Int("population", DefaultPopulation, "the last `N` passing boards")
			k := fs.Float64("sigmas", DefaultSigmas, "the population's limits at `K` robust sigma")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				caps, err := Limits(ctx, *data, *db, *typ, *n, *k)
				if err != nil || *asJSON {
					return errors.Join(err, cli.WriteJSON(std.Stdout, caps))
				}
				WriteLimits(std.Stdout, caps, *k)
				return nil
			}
		},
	}
}

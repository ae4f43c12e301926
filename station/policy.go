package station

import "fmt"

// The line's policies each flag a report that breaks a rule of theirs (it is stored,
// and the page, the list and the report say so), or reject it (HTTP 409 with the
// reason; the board's run fails saying why). Each is one file: policy_plans.go, ...

// Policy is what the station does with a report that breaks a line's rule.
type Policy int

const (
	// Flag stores the report with the rule it broke.
	Flag Policy = iota
	// Reject refuses it: the board's run fails with the reason.
	Reject
)

// ParsePolicy reads a --*-policy flag's value: flag, or reject (fail for the outliers).
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "flag", "":
		return Flag, nil
	case "reject", "fail":
		return Reject, nil
	}
	return 0, fmt.Errorf("%q: want flag or reject", s)
}

// Flag kinds: the rules a stored report broke.
const (
	FlagUnknownPlan = "unknown-plan"
	FlagUnverified  = "fixture-unverified"
)

// ReportFlag is a rule a stored report broke, and how.
type ReportFlag struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// PolicyError is a report a policy rejects (HTTP 409): the rule and the reason.
type PolicyError struct {
	Kind, Text string
}

func (e *PolicyError) Error() string { return e.Text }

// judge applies a policy to a rule broken (text "" for none): the flag to store, or the
// rejection.
func judge(p Policy, kind, text string) (*ReportFlag, error) {
	switch {
	case text == "":
		return nil, nil
	case p == Reject:
		return nil, &PolicyError{Kind: kind, Text: text}
	}
	return &ReportFlag{Kind: kind, Text: text}, nil
}

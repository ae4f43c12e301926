package srcerr

import "testing"

func TestError(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Source: "plan.yaml", Line: 7, Msg: "steps: want a list"}, "plan.yaml:7: steps: want a list"},
		{Error{Source: "x.yaml", Msg: "no such file"}, "x.yaml: no such file"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

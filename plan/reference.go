package plan

import (
	"reflect"
	"strings"
)

// FieldDoc is one field of a plan as its reference shows it: its key, the values it
// takes, its unit and default, and what it does.
type FieldDoc struct {
	Key, Type, Unit, Default, Doc string
}

// Fields are the fields of a struct (a step kind's Params) that carry a doc tag, in
// their order, those of an inline struct in its place. A field's key is its yaml name;
// its type is said from its Go type; its unit and default are its unit and default tags.
func Fields(v any) []FieldDoc {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []FieldDoc
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		yt := f.Tag.Get("yaml")
		if strings.Contains(yt, ",inline") {
			out = append(out, Fields(reflect.New(f.Type).Interface())...)
			continue
		}
		doc, ok := f.Tag.Lookup("doc")
		if !ok {
			continue
		}
		key, _, _ := strings.Cut(yt, ",")
		out = append(out, FieldDoc{Key: key, Type: typeText(f.Type), Unit: f.Tag.Get("unit"), Default: f.Tag.Get("default"), Doc: doc})
	}
	return out
}

// typeText says what values a Go type takes in a plan.
func typeText(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(Duration(0)):
		return "duration (10s, 2m)"
	case t == reflect.TypeOf(Window{}):
		return "duration (10s, 2m; 0s: none)"
	case t == reflect.TypeOf(Station{}):
		return "mapping (station fields)"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint16, reflect.Uint32:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "text"
	case reflect.Slice:
		return "list of " + strings.TrimPrefix(typeText(t.Elem()), "list of ")
	}
	return t.Kind().String()
}

// PlanFields are a plan's own keys.
func PlanFields() []FieldDoc {
	return []FieldDoc{
		{Key: "name", Type: "text", Doc: "the plan's name, in the report and the station's page"},
		{Key: "board", Type: "text", Doc: "a board profile (zc702, zcu102, ...) or auto: from the device tree's compatible"},
		{Key: "interface", Type: "text", Default: "eth0", Doc: "the one port under test (or ports:, not both)"},
		{Key: "ports", Type: "list of interfaces, or of mappings of interface and station", Doc: "every port under test, each measured against the plan's station or against the station fields it gives of its own; at most 16"},
		{Key: "station", Type: "mapping (station fields)", Doc: "what the board measures against and reports to"},
		{Key: "budget", Type: "duration (10s, 2m)", Default: "10m", Doc: "the whole plan's time, at most 24h: a step the budget cannot hold fails"},
		{Key: "fixture", Type: "text", Doc: "the test fixture (validate --fixture and linerate.fixture= override it; the station names its port otherwise)"},
		{Key: "operator", Type: "text", Doc: "who runs the tests (the console prompt, validate --operator and linerate.operator= override it)"},
		{Key: "steps", Type: "list of steps", Doc: "what runs, in order: at least one"},
	}
}

// StationFields are the keys of station: (the plan's, or a port's own).
func StationFields() []FieldDoc {
	return []FieldDoc{
		{Key: "address", Type: "text", Doc: "the station's IPv4 address: its iperf3 server and reflector (needed by the steps that measure against it)"},
		{Key: "port", Type: "integer", Default: "5201", Doc: "its iperf3 port, 1..65535"},
		{Key: "report_url", Type: "text", Doc: "where the JSON report is POSTed (http:// or https://); none: the report is written and spooled only"},
		{Key: "reflector_mac", Type: "text", Default: "auto", Doc: "the reflector's MAC, or auto: ARP for address"},
		{Key: "token", Type: "text", Doc: "where the station's bearer token is: FILE, or @NAME for an environment variable (never the token itself: the plan goes into the report)"},
	}
}

// StepFields are the keys every step has, whatever its type.
func StepFields() []FieldDoc {
	return []FieldDoc{
		{Key: "id", Type: "text", Doc: "the step's name, unique in the plan: A-Z a-z 0-9 . _ - (its results and figures are named after it, with .IFACE in a multi-port plan)"},
		{Key: "type", Type: "text", Doc: "the step kind (below)"},
		{Key: "timeout", Type: "duration (10s, 2m)", Default: "the kind's", Doc: "how long the step may run, at most 24h: past it, it fails"},
		{Key: "retry", Type: "integer", Default: "0", Doc: "how many times a failed step runs again, 0..10; the report keeps each attempt"},
		{Key: "concurrent", Type: "true or false", Default: "true", Doc: "with several ports: every port at once (true) or one after the other (false)"},
		{Key: "limits", Type: "list of limits", Doc: "limits of the step's measurements (below): a measurement outside its limit fails the step, one in its marginal band passes as marginal"},
	}
}

// LimitFields are the keys of a limit (limits:).
func LimitFields() []FieldDoc {
	return []FieldDoc{
		{Key: "measurement", Type: "text", Doc: "one of the measurements the step's kind gives (each kind's list below); required"},
		{Key: "unit", Type: "text", Default: "the measurement's", Doc: "the measurement's unit, checked against it (Mbit/s, %, µs, s, frames/s, packets/s; none for a count)"},
		{Key: "low", Type: "number", Doc: "the least value that passes"},
		{Key: "high", Type: "number", Doc: "the most value that passes"},
		{Key: "marginal_low", Type: "number", Doc: "from low up to it, a value passes as marginal"},
		{Key: "marginal_high", Type: "number", Doc: "from it up to high, a value passes as marginal"},
	}
}

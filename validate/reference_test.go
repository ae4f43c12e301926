package validate

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// TestReferenceFromKinds: every field a step kind reads from a plan has its description
// (the reference is made from them: a field without one would be missing from it), and
// every default the reference states is the one the kind's Check gives a step that
// leaves the field out.
func TestReferenceFromKinds(t *testing.T) {
	// The least each kind takes: the defaults of every other field are its Check's.
	minimal := map[string]map[string]string{
		"link": {}, "identity": {}, "phy": {"loopback": "true"}, "doctor": {}, "tune": {"profile": "zc702"},
		"iperf3": {"min_mbps": "1"}, "frames": {"rate": "5%", "max_loss_pct": "1"}, "loop": {"ports": "[eth0, eth1]", "rate": "5%", "max_loss_pct": "1"},
		"stability": {}, "counters": {}, "sweep": {"knob": "rings.rx", "values": "64..128", "measure": "[tcp, frames]"},
	}
	for _, k := range kinds {
		fields := plan.Fields(k.new())
		keys := map[string]plan.FieldDoc{}
		for _, f := range fields {
			keys[f.Key] = f
		}
		walkYAMLFields(reflect.TypeOf(k.new()).Elem(), func(key string) {
			if _, ok := keys[key]; !ok {
				t.Errorf("step type %s: field %s has no doc tag: the plan reference would leave it out", k.name, key)
			}
		})
		y, ok := minimal[k.name]
		if !ok {
			t.Fatalf("no minimal step of type %s in the test", k.name)
		}
		step := "  - id: s\n    type: " + k.name + "\n"
		for key, v := range y {
			step += "    " + key + ": " + v + "\n"
		}
		p, err := Parse([]byte("board: zc702\nstation: {address: 198.18.5.1}\nports: [eth0, eth1]\nsteps:\n"+step), k.name)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		got := reflect.ValueOf(p.Steps[0].Params).Elem()
		for _, f := range fields {
			if _, given := y[f.Key]; given || f.Default == "" || strings.ContainsAny(f.Default, " ") {
				continue // given, none, or a default with a condition ("1000 with loopback")
			}
			v := fieldByYAML(got, f.Key)
			if !v.IsValid() {
				t.Errorf("%s: no field %s", k.name, f.Key)
				continue
			}
			if v.Kind() == reflect.Pointer && v.IsNil() {
				continue // an optional field whose absence the kind reads as its default (eeprom: true)
			}
			if w, ok := v.Interface().(*plan.Window); ok {
				v = reflect.ValueOf(w.Duration)
			}
			if w, ok := v.Interface().(plan.Window); ok {
				v = reflect.ValueOf(w.Duration)
			}
			if d, ok := v.Interface().(plan.Duration); ok {
				if want, err := time.ParseDuration(f.Default); err != nil || d.D() != want {
					t.Errorf("step type %s: %s defaults to %v, the reference says %q", k.name, f.Key, d.D(), f.Default)
				}
				continue
			}
			if s := valueText(v); s != f.Default {
				t.Errorf("step type %s: %s defaults to %q, the reference says %q", k.name, f.Key, s, f.Default)
			}
		}
	}
}

// walkYAMLFields calls fn with the yaml key of every exported field of t (inline
// structs' in their place).
func walkYAMLFields(t reflect.Type, fn func(key string)) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		yt := f.Tag.Get("yaml")
		switch {
		case !f.IsExported() || yt == "-":
		case strings.Contains(yt, ",inline"):
			walkYAMLFields(f.Type, fn)
		default:
			key, _, _ := strings.Cut(yt, ",")
			fn(key)
		}
	}
}

func fieldByYAML(v reflect.Value, key string) reflect.Value {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		yt := f.Tag.Get("yaml")
		if strings.Contains(yt, ",inline") {
			if x := fieldByYAML(v.Field(i), key); x.IsValid() {
				return x
			}
			continue
		}
		if k, _, _ := strings.Cut(yt, ","); k == key {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// valueText is a field's value as the reference writes a default.
func valueText(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case []string:
		return "[" + strings.Join(x, " ") + "]"
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v.Interface())
}

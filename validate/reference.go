package validate

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/plan"
)

// The plan reference (linerate help plan, docs/plans.md): the plan's keys, the
// station's, every step's, then every step kind's own, each made from the kind's field
// descriptions (their doc, unit and default tags), as the manual pages are made from the
// flags. A test holds docs/plans.md to what this writes.

// KindDoc is a step kind as the reference shows it.
type KindDoc struct {
	Name, About string
	// Measures are the measurements a plan's limits may bound, with their units.
	Measures string
	Fields   []plan.FieldDoc
}

// KindDocs are the step kinds, in the registry's order.
func KindDocs() []KindDoc {
	out := make([]KindDoc, len(kinds))
	for i, k := range kinds {
		out[i] = KindDoc{Name: k.name, About: k.about, Fields: plan.Fields(k.new())}
		if m, ok := k.new().(plan.Measurer); ok {
			var l []string
			for _, name := range slices.Sorted(maps.Keys(m.Measures())) {
				if u := m.Measures()[name]; u != "" {
					name += " (" + u + ")"
				}
				l = append(l, name)
			}
			out[i].Measures = strings.Join(l, ", ")
		}
	}
	return out
}

const referenceIntro = `A plan is YAML: the board, the port or ports under test, the station, the budget and
the steps, in order. Built-in plans: %s (linerate validate NAME); a file otherwise.
Every value is checked when the plan is read, each error naming the file and line.
YAML anchors, aliases and merge keys work anywhere in a plan (a step's fields given once
as &base and merged into the next steps with "<<: *base", their own keys winning),
expanded once when the plan is read and bounded to 100,000 nodes.`

// WriteReference writes the reference as text for a terminal, wrapped to 80 columns, or
// in Markdown as docs/plans.md holds it.
func WriteReference(w io.Writer, markdown bool) error {
	if markdown {
		return writeReferenceMarkdown(w)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LINERATE PLANS\n\n%s", wrap(fmt.Sprintf(referenceIntro, strings.Join(BuiltinNames(), ", ")), cli.Width, ""))
	section := func(title string, fields []plan.FieldDoc) {
		b.WriteString("\n" + title + "\n")
		for _, f := range fields {
			b.WriteString("  " + f.Key + ": " + f.Type + "\n")
			b.WriteString(wrap(fieldText(f), cli.Width, "      "))
		}
	}
	section("PLAN KEYS", plan.PlanFields())
	section("STATION KEYS (station:, or a port's own)", plan.StationFields())
	section("EVERY STEP", plan.StepFields())
	section("A LIMIT (limits:)", plan.LimitFields())
	for _, k := range KindDocs() {
		b.WriteString("\nSTEP TYPE " + k.Name + "\n" + wrap(k.About, cli.Width, "  "))
		if k.Measures != "" {
			b.WriteString(wrap("Measures: "+k.Measures+".", cli.Width, "  "))
		}
		if len(k.Fields) == 0 {
			b.WriteString("  (no fields of its own)\n")
		}
		for _, f := range k.Fields {
			b.WriteString("  " + f.Key + ": " + f.Type + "\n")
			b.WriteString(wrap(fieldText(f), cli.Width, "      "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeReferenceMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Plan reference\n\n<!-- Made by `linerate help plan --markdown` from the step kinds' field descriptions; `make docs` writes it, and `make test` fails when it is out of date. -->\n\n")
	b.WriteString(fmt.Sprintf(referenceIntro, "`"+strings.Join(BuiltinNames(), "`, `")+"`") + "\n\nHow to write and run one: [validate.md](validate.md).\n")
	table := func(title string, fields []plan.FieldDoc) {
		b.WriteString("\n## " + title + "\n\n| key | values | unit | default | what it does |\n|---|---|---|---|---|\n")
		for _, f := range fields {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Key, cell(f.Type), cell(f.Unit), cell(f.Default), cell(f.Doc))
		}
	}
	table("Plan keys", plan.PlanFields())
	table("Station keys (`station:`, or a port's own)", plan.StationFields())
	table("Every step", plan.StepFields())
	table("A limit (`limits:`)", plan.LimitFields())
	for _, k := range KindDocs() {
		b.WriteString("\n## Step type `" + k.Name + "`\n\n" + k.About + "\n")
		if k.Measures != "" {
			b.WriteString("\nMeasures: " + k.Measures + ".\n")
		}
		if len(k.Fields) == 0 {
			b.WriteString("\nNo fields of its own.\n")
			continue
		}
		b.WriteString("\n| key | values | unit | default | what it does |\n|---|---|---|---|---|\n")
		for _, f := range k.Fields {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Key, cell(f.Type), cell(f.Unit), cell(f.Default), cell(f.Doc))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fieldText is a field's description with its unit and default.
func fieldText(f plan.FieldDoc) string {
	s := f.Doc
	if f.Unit != "" {
		s += "; in " + f.Unit
	}
	if f.Default != "" {
		s += "; default " + f.Default
	}
	return s
}

// cell is text for a Markdown table cell ("" a dash).
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// wrap is text wrapped to width with every line indented.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	for _, l := range cli.Wrap(s, width-len(indent)) {
		b.WriteString(indent + l + "\n")
	}
	return b.String()
}

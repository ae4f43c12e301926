package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// IO is a command's standard streams.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run runs a command with its positional arguments, its flags parsed.
type Run func(ctx context.Context, args []string, io IO) error

// Example is one line a command's help shows, with what it does.
type Example struct{ Cmd, What string }

// Command is one command, or one subcommand (dts overlay). Its help, its completion and
// its manual page are made from these fields and its flag set, so what they say is what
// the command parses.
type Command struct {
	Name    string
	Summary string // one line, for the list of commands
	// Usage are the synopses after the program's name: "show [IFACE...]".
	Usage []string
	// About says what it does: paragraphs separated by blank lines, kept as written.
	About    string
	Examples []Example
	// Flags registers the command's flags on fs, each with its usage text (a word in
	// backquotes names the flag's value: "read a `DIR`"), and returns what runs with the
	// positional arguments.
	Flags func(fs *flag.FlagSet) Run
	// Subs are subcommands (linerate dts overlay); a command with Subs has no Flags.
	Subs []*Command
	// Own is for a command that parses its own arguments as another tool does
	// (iperf3's getopt_long); OwnHelp is then its help, every line within width
	// columns, and OwnFlags its options.
	Own      func(ctx context.Context, args []string, io IO) error
	OwnHelp  func(width int) string
	OwnFlags []OwnFlag
	// Hidden commands are left out of the list (they are still run and helped).
	Hidden bool
}

// OwnFlag is one option of a command that parses its own arguments. A refused option
// (one another tool has and this one does not) says why in Refused; it is not offered
// for completion.
type OwnFlag struct {
	Long    string
	Short   rune
	Help    string
	Refused string
}

// FlagSet is the command's flags, registered, with what runs once they are parsed.
func (c *Command) FlagSet() (*flag.FlagSet, Run) {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.Flags == nil {
		return fs, nil
	}
	return fs, c.Flags(fs)
}

// Sub is the subcommand called name.
func (c *Command) Sub(name string) *Command {
	for _, s := range c.Subs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Width is the help's line width: what a serial console shows without wrapping.
const Width = 80

// Help is the command's help: its usage, what it does, its flags and its examples.
func (c *Command) Help(prog string) string {
	if c.Own != nil {
		return c.OwnHelp(Width)
	}
	var b strings.Builder
	for i, u := range c.Usage {
		lead := "Usage: "
		if i > 0 {
			lead = "       "
		}
		fmt.Fprintf(&b, "%s%s %s\n", lead, prog, u)
	}
	if c.About != "" {
		b.WriteString("\n" + strings.TrimRight(c.About, "\n") + "\n")
	}
	if len(c.Subs) > 0 {
		b.WriteString("\nCommands:\n")
		for _, s := range c.Subs {
			writeTerm(&b, s.Name, s.Summary)
		}
		fmt.Fprintf(&b, "\nRun '%s %s COMMAND --help' for a command's flags.\n", prog, c.Name)
	}
	if flags := c.Flagged(); len(flags) > 0 {
		b.WriteString("\nFlags:\n")
		for _, f := range flags {
			writeTerm(&b, f.Term, f.Help)
		}
	}
	if len(c.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range c.Examples {
			fmt.Fprintf(&b, "  %s %s\n", prog, e.Cmd)
			if e.What != "" {
				for _, l := range Wrap(e.What, Width-6) {
					b.WriteString("      " + l + "\n")
				}
			}
		}
	}
	return b.String()
}

// FlagDoc is one flag as help, completion and manual pages show it.
type FlagDoc struct {
	Name  string // without dashes
	Term  string // "--root DIR", "-o FILE", "--json"
	Value string // the value's name ("" for a boolean flag)
	Help  string // its usage text without the backquotes, with the default
	// Choices are the values a Choice flag takes.
	Choices []string
}

// Flagged is the command's flags in name order, documented.
func (c *Command) Flagged() []FlagDoc {
	if c.Own != nil {
		var out []FlagDoc
		for _, o := range c.OwnFlags {
			if o.Refused != "" {
				continue
			}
			t := "--" + o.Long
			if o.Short != 0 {
				t = fmt.Sprintf("-%c, --%s", o.Short, o.Long)
			}
			out = append(out, FlagDoc{Name: o.Long, Term: t, Help: o.Help})
		}
		return out
	}
	fs, _ := c.FlagSet()
	var out []FlagDoc
	fs.VisitAll(func(f *flag.Flag) { out = append(out, docOf(f)) })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func docOf(f *flag.Flag) FlagDoc {
	name, usage := flag.UnquoteUsage(f)
	d := FlagDoc{Name: f.Name, Help: usage}
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	d.Term = dash + f.Name
	if !isBool(f) {
		if ch, ok := f.Value.(*choice); ok && !strings.Contains(f.Usage, "`") {
			name = strings.Join(ch.options, "|")
		} else if !strings.Contains(f.Usage, "`") {
			name = valueName(f)
		}
		d.Value = name
		d.Term += " " + name
	}
	if ch, ok := f.Value.(*choice); ok {
		d.Choices = ch.options
	}
	if def := f.DefValue; def != "" && def != "0" && def != "false" && def != "0s" && !strings.Contains(usage, "(default") {
		d.Help += " (default " + def + ")"
	}
	return d
}

// valueName names a flag's value by its type when its usage does not.
func valueName(f *flag.Flag) string {
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "D"
		case int, int64, uint, uint64, float64:
			return "N"
		}
	}
	return "S"
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// writeTerm writes a term and its text: the term on its own line when it is long, the
// text wrapped at Width under a hanging indent.
func writeTerm(b *strings.Builder, term, text string) {
	const indent = 24
	lines := Wrap(text, Width-indent)
	if len(term) > indent-4 || len(lines) == 0 {
		b.WriteString("  " + term + "\n")
	} else {
		fmt.Fprintf(b, "  %-*s%s\n", indent-2, term, lines[0])
		lines = lines[1:]
	}
	for _, l := range lines {
		b.WriteString(strings.Repeat(" ", indent) + l + "\n")
	}
}

// Wrap breaks text into lines of at most width characters at spaces.
func Wrap(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) > width:
			out = append(out, line)
			line = w
		default:
			line += " " + w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// choice is a flag that takes one of a few words.
type choice struct {
	value   *string
	options []string
}

func (c *choice) String() string {
	if c.value == nil {
		return ""
	}
	return *c.value
}

func (c *choice) Set(s string) error {
	for _, o := range c.options {
		if s == o {
			*c.value = s
			return nil
		}
	}
	return fmt.Errorf("want %s", orList(c.options))
}

func (c *choice) Get() any { return *c.value }

// Choice registers a flag that takes one of options, defaulting to def.
func Choice(fs *flag.FlagSet, name, def, usage string, options ...string) *string {
	v := def
	fs.Var(&choice{value: &v, options: options}, name, usage)
	return &v
}

// orList is "a, b or c".
func orList(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " or " + l[len(l)-1]
}

// Ex is an example: the command line after the program's name, and what it does.
func Ex(cmd, what string) Example { return Example{Cmd: cmd, What: what} }

package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/badinput"
)

// App is a program's commands.
type App struct {
	Prog     string
	About    string // what the program does, for its help and manual page
	Commands []*Command
	// Files says, for the program's manual page, where it keeps its state (each
	// command's page lists the paths its flags name).
	Files string
	// Values are the live words completion offers for a kind of value (interfaces,
	// plans, profiles, knobs, steps, boards): the scripts ask 'PROG __complete KIND'.
	Values func(kind string) []string
}

// Command is the command called name ("" when there is none).
func (a *App) Command(name string) *Command {
	for _, c := range a.Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Main is the whole command line: the command args name, run, and its error told in one
// line that names the command and where its usage is (a usage error or bad input), or
// as it is. alone runs when no command is given; when it did nothing, the commands are
// listed and that is a usage error.
func (a *App) Main(ctx context.Context, args []string, std IO, alone func() bool) error {
	if len(args) == 0 {
		if alone != nil && alone() {
			return nil
		}
		io.WriteString(std.Stderr, a.Help())
		return Usagef("no command given")
	}
	switch args[0] {
	case "__complete": // the completion scripts' question: one word a line
		if len(args) == 2 && a.Values != nil {
			for _, w := range a.Values(args[1]) {
				fmt.Fprintln(std.Stdout, w)
			}
		}
		return nil
	case "-h", "--help":
		_, err := io.WriteString(std.Stdout, a.Help())
		return err
	case "-v", "--version":
		args = []string{"version"}
	}
	c := a.Command(args[0])
	if c == nil {
		fmt.Fprintf(std.Stderr, "%s: unknown command %q\nRun '%s --help' for the commands.\n", a.Prog, args[0], a.Prog)
		return Usagef("unknown command %q", args[0])
	}
	err := a.Run(ctx, c, args[1:], std)
	name := c.Name // the subcommand's full name when one ran: "dts overlay"
	if len(args) > 1 && c.Sub(args[1]) != nil {
		name += " " + args[1]
	}
	switch {
	case err == nil:
	case errors.As(err, new(*Reported)):
		// The command said it in its own words.
	case badinput.Is(err):
		msg := strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")
		fmt.Fprintf(std.Stderr, "%s %s: %s\nRun '%s %s --help' for its usage.\n", a.Prog, name, msg, a.Prog, name)
	default:
		fmt.Fprintf(std.Stderr, "%s %s: %v\n", a.Prog, name, err)
	}
	return err
}

// Run runs a command (or the subcommand args name) with its flags parsed; --help prints
// the help its description and flags make. A command with subcommands and flags of its
// own (linerate station, and station limits) runs itself unless args name a subcommand.
func (a *App) Run(ctx context.Context, c *Command, args []string, std IO) error {
	if len(c.Subs) > 0 && (c.Flags == nil || len(args) > 0 && c.Sub(args[0]) != nil) {
		var names []string
		for _, s := range c.Subs {
			names = append(names, s.Name)
		}
		switch {
		case len(args) == 0:
			return Usagef("give %s", strings.Join(names, ", "))
		case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
			_, err := io.WriteString(std.Stdout, c.Help(a.Prog))
			return err
		case c.Sub(args[0]) == nil:
			return Usagef("unknown %s command %q: give %s", c.Name, args[0], strings.Join(names, ", "))
		}
		c, args = c.Sub(args[0]), args[1:]
	}
	if c.Own != nil {
		return c.Own(ctx, args, std)
	}
	fs, run := c.FlagSet()
	pos, err := Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		_, err = io.WriteString(std.Stdout, c.Help(a.Prog))
		return err
	}
	if err != nil {
		return err
	}
	return run(ctx, pos, std)
}

// HelpOf is the help that names asks for: the list of commands for none, a command's,
// or a subcommand's ("dts", "overlay").
func (a *App) HelpOf(names []string) (string, error) {
	if len(names) == 0 {
		return a.Help(), nil
	}
	c := a.Command(names[0])
	if c == nil {
		return "", Usagef("unknown command %q", names[0])
	}
	if len(names) > 1 {
		if c = c.Sub(names[1]); c == nil || len(names) > 2 {
			return "", Usagef("%s has no command %q", names[0], strings.Join(names[1:], " "))
		}
	}
	return c.Help(a.Prog), nil
}

// Help lists the commands.
func (a *App) Help() string {
	var b strings.Builder
	b.WriteString(a.About + "\n\nUsage: " + a.Prog + " COMMAND [ARGS]\n\nCommands:\n")
	for _, c := range a.Commands {
		if !c.Hidden {
			writeTerm(&b, c.Name, c.Summary)
		}
	}
	fmt.Fprintf(&b, "\nRun '%s help COMMAND' (or '%s COMMAND --help') for a command's flags.\n", a.Prog, a.Prog)
	return b.String()
}

// each calls fn for every command and subcommand, with its full name ("dts overlay").
func (a *App) each(fn func(path string, c *Command)) {
	for _, c := range a.Commands {
		fn(c.Name, c)
		for _, s := range c.Subs {
			fn(c.Name+" "+s.Name, s)
		}
	}
}

// Completion is a completion script for shell (bash or zsh): the commands, their
// subcommands, their flags and the values of flags that take one of a few words.
func (a *App) Completion(shell string) (string, error) {
	switch shell {
	case "bash":
		return a.bash(), nil
	case "zsh":
		return a.zsh(), nil
	}
	return "", Usagef("completion %q: want bash or zsh", shell)
}

// shellWords quotes nothing: every word here is the program's own (command and flag
// names, choices), checked to be plain by the tests.
func (a *App) names() []string {
	var out []string
	for _, c := range a.Commands {
		out = append(out, c.Name)
	}
	return out
}

func flagWords(c *Command) []string {
	var out []string
	for _, f := range c.Flagged() {
		out = append(out, dashed(f.Name))
	}
	return append(out, "--help")
}

// valueKind is what completion offers for a flag's value: a live kind (interfaces,
// knobs, boards, profiles; "+files" when a file does too), "" for a file.
func valueKind(f FlagDoc) string {
	switch {
	case f.Value == "IFACE" || f.Value == "IFACE2":
		return "interfaces"
	case f.Value == "KNOB":
		return "knobs"
	case f.Value == "BOARD":
		return "boards"
	case f.Name == "profile":
		return "profiles+files"
	case strings.Contains(f.Value, "FILE") || strings.Contains(f.Value, "DIR") || strings.Contains(f.Value, "PATH"):
		return ""
	}
	return "none" // a number, a duration, an address: nothing to offer
}

// positional is what completion offers for a command's first positional argument and
// (after one of the first's words) its second: a live kind, or "words:" and the words.
func positional(path string, c *Command) (first, second string) {
	if len(c.Usage) == 0 {
		return "", ""
	}
	words := strings.Fields(c.Usage[0])
	n := len(strings.Fields(path))
	if len(words) <= n {
		return "", ""
	}
	switch w := strings.Trim(words[n], "[]."); {
	case w == "IFACE":
		return "interfaces", ""
	case w == "PLAN":
		return "plans+files", ""
	case w == "NAME" && path == "board":
		return "boards", ""
	case path == "profile":
		var lits []string
		for _, u := range c.Usage {
			lits = append(lits, strings.Fields(u)[1])
		}
		return "words:" + strings.Join(lits, " "), "profiles"
	}
	return "", ""
}

// bashOffer is the bash that fills COMPREPLY with what a kind offers.
func bashOffer(prog, kind string) string {
	switch {
	case kind == "":
		return `COMPREPLY=($(compgen -f -- "$cur"))`
	case kind == "none":
		return "COMPREPLY=()"
	case strings.HasPrefix(kind, "words:"):
		return fmt.Sprintf("COMPREPLY=($(compgen -W %q -- \"$cur\"))", strings.TrimPrefix(kind, "words:"))
	}
	live, files := strings.CutSuffix(kind, "+files")
	out := fmt.Sprintf("COMPREPLY=($(compgen -W \"$(_%s_values %s)\" -- \"$cur\"))", prog, live)
	if files {
		out += `; COMPREPLY+=($(compgen -f -- "$cur"))`
	}
	return out
}

// bashFlagValues is a command's case on the previous word: each flag that takes a value
// offers its choices, its live kind or files.
func bashFlagValues(prog string, c *Command) string {
	var b strings.Builder
	for _, f := range c.Flagged() {
		if f.Value == "" {
			continue
		}
		offer := bashOffer(prog, valueKind(f))
		if len(f.Choices) > 0 {
			offer = bashOffer(prog, "words:"+strings.Join(f.Choices, " "))
		}
		fmt.Fprintf(&b, "\t\t%s) %s; return;;\n", dashed(f.Name), offer)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\t\tcase \"$prev\" in\n" + b.String() + "\t\tesac\n"
}

func (a *App) bash() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s (%s completion bash)\n", a.Prog, a.Prog)
	// The live values come from the program itself, asked as the user typed it.
	fmt.Fprintf(&b, "_%s_values() { \"${COMP_WORDS[0]}\" __complete \"$1\" 2>/dev/null; }\n", a.Prog)
	fmt.Fprintf(&b, "_%s() {\n\tlocal cur prev cmd sub opts p1 p2 k\n\tcur=\"${COMP_WORDS[COMP_CWORD]}\"\n\tprev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n", a.Prog)
	fmt.Fprintf(&b, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(a.names(), " "))
	b.WriteString("\tcmd=\"${COMP_WORDS[1]}\"; sub=\"${COMP_WORDS[2]}\"\n\tcase \"$cmd\" in\n")
	arm := func(path string, c *Command, indent string) {
		b.WriteString(strings.ReplaceAll(bashFlagValues(a.Prog, c), "\t\t", indent))
		p1, p2 := positional(path, c)
		fmt.Fprintf(&b, "%sopts=%q; p1=%q; p2=%q\n", indent, strings.Join(flagWords(c), " "), p1, p2)
	}
	for _, c := range a.Commands {
		fmt.Fprintf(&b, "\t%s)\n", c.Name)
		switch {
		case len(c.Subs) > 0:
			var subs []string
			b.WriteString("\t\tcase \"$sub\" in\n")
			for _, s := range c.Subs {
				subs = append(subs, s.Name)
				fmt.Fprintf(&b, "\t\t%s)\n", s.Name)
				arm(c.Name+" "+s.Name, s, "\t\t\t")
				b.WriteString("\t\t\t;;\n")
			}
			b.WriteString("\t\t*)\n")
			if c.Flags != nil { // its own flags too, and its subcommands as a first word
				arm(c.Name, c, "\t\t\t")
			}
			fmt.Fprintf(&b, "\t\t\tif [ \"$COMP_CWORD\" -eq 2 ] && [[ \"$cur\" != -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi;;\n\t\tesac;;\n", strings.Join(subs, " "))
		case c.Name == "help":
			fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(a.names(), " "))
		default:
			arm(c.Name, c, "\t\t")
			b.WriteString("\t\t;;\n")
		}
	}
	b.WriteString("\tesac\n\tif [[ \"$cur\" == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n\t\treturn\n\tfi\n")
	// The second positional's kind once the first is one of its words (profile show NAME).
	b.WriteString("\tk=\"$p1\"\n\tif [ -n \"$p2\" ] && [[ \" ${p1#words:} \" == *\" $prev \"* ]]; then k=\"$p2\"; fi\n\tcase \"$k\" in\n")
	for _, k := range []string{"interfaces", "plans+files", "boards", "profiles", "profiles+files", "knobs"} {
		fmt.Fprintf(&b, "\t%s) %s;;\n", k, bashOffer(a.Prog, k))
	}
	b.WriteString("\twords:*) COMPREPLY=($(compgen -W \"${k#words:}\" -- \"$cur\"));;\n\t*) COMPREPLY=($(compgen -f -- \"$cur\"));;\n\tesac\n}\n")
	fmt.Fprintf(&b, "complete -o filenames -F _%s %s\n", a.Prog, a.Prog)
	return b.String()
}

// zshText escapes text for an _arguments spec's description: brackets, colons and
// quotes.
var zshText = strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:")

func (a *App) zsh() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (%s completion zsh)\n\n", a.Prog, a.Prog, a.Prog)
	// An action for a kind: its words, the live values the program gives, files.
	action := func(kind string) string {
		switch {
		case kind == "":
			return "_files"
		case kind == "none":
			return " "
		case strings.HasPrefix(kind, "words:"):
			return "(" + strings.TrimPrefix(kind, "words:") + ")"
		}
		live, files := strings.CutSuffix(kind, "+files")
		if files {
			return "_" + a.Prog + "_live " + live + " files"
		}
		return "_" + a.Prog + "_live " + live
	}
	spec := func(path string, c *Command) string {
		var parts []string
		for _, f := range c.Flagged() {
			d := zshText.Replace(firstSentence(f.Help))
			switch {
			case f.Value == "":
				parts = append(parts, fmt.Sprintf("'%s[%s]'", dashed(f.Name), d))
			case len(f.Choices) > 0:
				parts = append(parts, fmt.Sprintf("'%s=[%s]:%s:(%s)'", dashed(f.Name), d, strings.ToLower(f.Value), strings.Join(f.Choices, " ")))
			default:
				parts = append(parts, fmt.Sprintf("'%s=[%s]:%s:%s'", dashed(f.Name), d, strings.ToLower(f.Value), action(valueKind(f))))
			}
		}
		switch p1, p2 := positional(path, c); {
		case p2 != "":
			parts = append(parts, "'1:argument:"+action(p1)+"'", "'2:argument:"+action(p2)+"'")
		default:
			parts = append(parts, "'*:argument:"+action(p1)+"'")
		}
		return strings.Join(parts, " \\\n\t\t\t")
	}
	// The live values come from the program itself, as the user typed it.
	fmt.Fprintf(&b, "_%s_live() {\n\tlocal -a w\n\tw=(${(f)\"$(${words[1]} __complete $1 2>/dev/null)\"})\n\tcompadd -a w\n\t[[ $2 == files ]] && _files\n}\n\n", a.Prog)
	fmt.Fprintf(&b, "_%s() {\n\tlocal -a cmds\n\tcmds=(\n", a.Prog)
	for _, c := range a.Commands {
		fmt.Fprintf(&b, "\t\t'%s:%s'\n", c.Name, zshText.Replace(c.Summary))
	}
	b.WriteString("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe command cmds\n\t\treturn\n\tfi\n\tcase $words[2] in\n")
	for _, c := range a.Commands {
		if len(c.Subs) > 0 {
			var subs []string
			for _, s := range c.Subs {
				subs = append(subs, s.Name)
			}
			fmt.Fprintf(&b, "\t%s)\n\t\tif (( CURRENT == 3 )) && [[ $PREFIX != -* ]]; then\n\t\t\tcompadd %s\n\t\t\treturn\n\t\tfi\n\t\tcase $words[3] in\n", c.Name, strings.Join(subs, " "))
			for _, s := range c.Subs {
				fmt.Fprintf(&b, "\t\t%s) _arguments \\\n\t\t\t%s;;\n", s.Name, spec(c.Name+" "+s.Name, s))
			}
			if c.Flags != nil {
				fmt.Fprintf(&b, "\t\t*) _arguments \\\n\t\t\t%s;;\n", spec(c.Name, c))
			}
			b.WriteString("\t\tesac;;\n")
			continue
		}
		if c.Name == "help" {
			fmt.Fprintf(&b, "\thelp) compadd %s;;\n", strings.Join(a.names(), " "))
			continue
		}
		fmt.Fprintf(&b, "\t%s) _arguments \\\n\t\t\t%s;;\n", c.Name, spec(c.Name, c))
	}
	fmt.Fprintf(&b, "\tesac\n}\n\n_%s \"$@\"\n", a.Prog)
	return b.String()
}

func firstSentence(s string) string {
	if i := strings.Index(s, ": "); i > 0 && i < 60 {
		return s[:i]
	}
	if len(s) > 70 {
		return s[:70]
	}
	return s
}

// ManPages are the manual pages: NAME.1 for the program and NAME-CMD.1 for each command
// (NAME-CMD-SUB.1 for a subcommand), in roff's man macros (man -l reads them).
func (a *App) ManPages(version string, date time.Time) map[string][]byte {
	out := map[string][]byte{}
	d := date.Format("2006-01-02")
	var top strings.Builder
	manHead(&top, a.Prog, a.Prog, a.About, version, d)
	top.WriteString(".SH SYNOPSIS\n.B " + a.Prog + "\n.I COMMAND\n[ARGS]\n.SH COMMANDS\n")
	for _, c := range a.Commands {
		fmt.Fprintf(&top, ".TP\n.BR %s-%s (1)\n%s\n", a.Prog, c.Name, roff(c.Summary))
	}
	top.WriteString(".SH EXIT STATUS\n" + exitStatus(&Command{}) + ".SH FILES\n" + roffParagraphs(cmp.Or(a.Files, "See each command's page.")))
	out[a.Prog+".1"] = []byte(top.String())
	a.each(func(path string, c *Command) {
		name := a.Prog + "-" + strings.ReplaceAll(path, " ", "-")
		var b strings.Builder
		manHead(&b, name, name, c.Summary, version, d)
		b.WriteString(".SH SYNOPSIS\n")
		for _, u := range c.Usage {
			fmt.Fprintf(&b, ".B %s\n%s\n.br\n", a.Prog, roff(u))
		}
		if c.Own != nil {
			b.WriteString(".SH DESCRIPTION\n.nf\n" + roffLines(c.OwnHelp(manText)) + ".fi\n")
		} else if c.About != "" {
			b.WriteString(".SH DESCRIPTION\n" + roffParagraphs(c.About))
		}
		if fl := c.Flagged(); len(fl) > 0 && c.Own == nil {
			b.WriteString(".SH OPTIONS\n")
			for _, f := range fl {
				fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(f.Term), roff(f.Help))
			}
		}
		if len(c.Examples) > 0 {
			b.WriteString(".SH EXAMPLES\n")
			for _, e := range c.Examples {
				fmt.Fprintf(&b, ".TP\n.B %s %s\n%s\n", a.Prog, roff(e.Cmd), roff(e.What))
			}
		}
		b.WriteString(".SH EXIT STATUS\n" + exitStatus(c) + ".SH FILES\n" + files(c))
		fmt.Fprintf(&b, ".SH SEE ALSO\n.BR %s (1)\n", a.Prog)
		out[name+".1"] = []byte(b.String())
	})
	return out
}

// exitStatus is a page's EXIT STATUS: linerate's three codes (Code), or for a command
// that stands in for another tool (Own: iperf3), that tool's.
func exitStatus(c *Command) string {
	if c.Own != nil {
		return ".TP\n.B 0\nthe test ran to its end.\n.TP\n.B 1\nany error, a bad command line too, as the tool it stands in for exits.\n"
	}
	return ".TP\n.B 0\nit did what was asked and found nothing wrong.\n" +
		".TP\n.B 1\nit ran and the answer is no: a FAIL verdict, a finding, a link event, a stream short of what was asked, a change rolled back, or an error from the kernel or the network; the output says which.\n" +
		".TP\n.B 2\nbad input, before anything was changed: a usage error, an unknown interface, a bad file, plan, profile, DTB or rate.\n"
}

// manPath finds the absolute paths a flag's help names (its defaults).
var manPath = regexp.MustCompile(`/(var|run|etc|sys|proc|tmp|dev)(/[A-Za-z0-9_.*-]+)*[A-Za-z0-9_*]`)

// files is a page's FILES: what a command that takes an interface reads of it, and
// the paths its flags name, with the flag.
func files(c *Command) string {
	var b strings.Builder
	for _, u := range c.Usage {
		if strings.Contains(u, "IFACE") {
			b.WriteString(".TP\n.B /sys/class/net/IFACE, /proc\nthe interface as the kernel shows it (under \\-\\-root DIR where the command takes it).\n")
			break
		}
	}
	seen := map[string]bool{}
	for _, f := range c.Flagged() {
		for _, p := range manPath.FindAllString(f.Help, -1) {
			if !seen[p] {
				seen[p] = true
				fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(p), roff(strings.Fields(f.Term)[0]))
			}
		}
	}
	if b.Len() == 0 {
		return "None of its own: it reads and writes what its arguments name.\n"
	}
	return b.String()
}

// WriteManPages writes every manual page into dir (made) and returns how many.
func (a *App) WriteManPages(dir, version string, date time.Time) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	pages := a.ManPages(version, date)
	for n, b := range pages {
		if err := atomicfile.Write(filepath.Join(dir, n), b, 0o644); err != nil {
			return 0, err
		}
	}
	return len(pages), nil
}

func manHead(b *strings.Builder, title, name, summary, version, date string) {
	fmt.Fprintf(b, ".TH %s 1 %q %q \"linerate manual\"\n.SH NAME\n%s \\- %s\n", strings.ToUpper(title), date, "linerate "+version, roff(name), roff(summary))
}

// roff escapes text for a roff line: backslashes, and a leading dot or quote that would
// read as a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// manText is how many columns a page's text has at 80 (man indents it by 7).
const manText = 80 - 7

// roffLines is preformatted text (.nf), each line wrapped to manText columns: a
// continuation starts under the line's description column (an option table's), else
// four columns in.
func roffLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		for _, w := range wrapNF(l, manText) {
			b.WriteString(roff(w) + "\n")
		}
	}
	return b.String()
}

// descColumn is where a table line's description starts (after the first gap of two
// blanks), -1 when it has none within the first half of width.
var descColumn = regexp.MustCompile(`^\s*\S.*?\s{2,}\S`)

func wrapNF(l string, width int) []string {
	if utf8.RuneCountInString(l) <= width {
		return []string{l}
	}
	indent := len(l) - len(strings.TrimLeft(l, " ")) + 4
	if m := descColumn.FindString(l); m != "" {
		indent = utf8.RuneCountInString(m) - 1
	}
	pad := strings.Repeat(" ", min(indent, width/2))
	var out []string
	for utf8.RuneCountInString(l) > width {
		r := []rune(l)
		lead := len(r) - len([]rune(strings.TrimLeft(l, " ")))
		cut := width
		for cut > lead && r[cut] != ' ' {
			cut--
		}
		if cut <= lead { // one word wider than the line: cut it
			cut = width
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		l = pad + strings.TrimLeft(string(r[cut:]), " ")
	}
	return append(out, l)
}

// roffParagraphs: blank-line separated paragraphs; indented lines (examples, tables)
// kept as they are.
func roffParagraphs(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if strings.HasPrefix(p, " ") || strings.Contains(p, "\n  ") {
			b.WriteString(".PP\n.nf\n" + roffLines(p) + ".fi\n")
			continue
		}
		b.WriteString(".PP\n" + roff(strings.Join(strings.Fields(p), " ")) + "\n")
	}
	return b.String()
}

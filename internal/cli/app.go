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
	"sort"
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

func (a *App) bash() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s (%s completion bash)\n", a.Prog, a.Prog)
	fmt.Fprintf(&b, "_%s() {\n\tlocal cur prev cmd sub opts\n\tcur=\"${COMP_WORDS[COMP_CWORD]}\"\n\tprev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n", a.Prog)
	fmt.Fprintf(&b, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(a.names(), " "))
	b.WriteString("\tcmd=\"${COMP_WORDS[1]}\"; sub=\"${COMP_WORDS[2]}\"\n\tcase \"$prev\" in\n")
	choices := map[string][]string{}
	a.each(func(_ string, c *Command) {
		for _, f := range c.Flagged() {
			if len(f.Choices) > 0 {
				choices[dashed(f.Name)] = f.Choices
			}
		}
	})
	var keys []string
	for k := range choices {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", k, strings.Join(choices[k], " "))
	}
	b.WriteString("\tesac\n\tcase \"$cmd\" in\n")
	for _, c := range a.Commands {
		fmt.Fprintf(&b, "\t%s)\n", c.Name)
		if len(c.Subs) > 0 {
			var subs []string
			b.WriteString("\t\tcase \"$sub\" in\n")
			for _, s := range c.Subs {
				subs = append(subs, s.Name)
				fmt.Fprintf(&b, "\t\t%s) opts=%q;;\n", s.Name, strings.Join(flagWords(s), " "))
			}
			if c.Flags == nil {
				fmt.Fprintf(&b, "\t\t*) if [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi;;\n\t\tesac;;\n", strings.Join(subs, " "))
				continue
			}
			// Its own flags too, and its subcommands as a first word.
			fmt.Fprintf(&b, "\t\t*) opts=%q; if [ \"$COMP_CWORD\" -eq 2 ] && [[ \"$cur\" != -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi;;\n\t\tesac;;\n",
				strings.Join(flagWords(c), " "), strings.Join(subs, " "))
			continue
		}
		if c.Name == "help" {
			fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(a.names(), " "))
			continue
		}
		fmt.Fprintf(&b, "\t\topts=%q;;\n", strings.Join(flagWords(c), " "))
	}
	b.WriteString("\tesac\n\tif [[ \"$cur\" == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	fmt.Fprintf(&b, "complete -o filenames -F _%s %s\n", a.Prog, a.Prog)
	return b.String()
}

// zshText escapes text for an _arguments spec's description: brackets, colons and
// quotes.
var zshText = strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:")

func (a *App) zsh() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (%s completion zsh)\n\n", a.Prog, a.Prog, a.Prog)
	spec := func(c *Command) string {
		var parts []string
		for _, f := range c.Flagged() {
			d := zshText.Replace(firstSentence(f.Help))
			switch {
			case f.Value == "":
				parts = append(parts, fmt.Sprintf("'%s[%s]'", dashed(f.Name), d))
			case len(f.Choices) > 0:
				parts = append(parts, fmt.Sprintf("'%s=[%s]:%s:(%s)'", dashed(f.Name), d, strings.ToLower(f.Value), strings.Join(f.Choices, " ")))
			default:
				parts = append(parts, fmt.Sprintf("'%s=[%s]:%s:_files'", dashed(f.Name), d, strings.ToLower(f.Value)))
			}
		}
		return strings.Join(append(parts, "'*:argument:_files'"), " \\\n\t\t\t")
	}
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
				fmt.Fprintf(&b, "\t\t%s) _arguments \\\n\t\t\t%s;;\n", s.Name, spec(s))
			}
			if c.Flags != nil {
				fmt.Fprintf(&b, "\t\t*) _arguments \\\n\t\t\t%s;;\n", spec(c))
			}
			b.WriteString("\t\tesac;;\n")
			continue
		}
		if c.Name == "help" {
			fmt.Fprintf(&b, "\thelp) compadd %s;;\n", strings.Join(a.names(), " "))
			continue
		}
		fmt.Fprintf(&b, "\t%s) _arguments \\\n\t\t\t%s;;\n", c.Name, spec(c))
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

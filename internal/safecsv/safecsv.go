// Package safecsv writes CSV (encoding/csv, RFC 4180) that a spreadsheet opens as data:
// a cell that begins with '=', '+', '-', '@', a tab or a carriage return is a formula to
// Excel and LibreOffice (=HYPERLINK(...), +cmd|...), so it is written with a leading
// single quote, as OWASP's CSV injection guidance says. Numbers linerate writes itself
// ("-3.5") stay numbers: only cells that are not plain numbers are neutralised.
package safecsv

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// Writer writes neutralised records.
type Writer struct{ w *csv.Writer }

// NewWriter writes to w with CRLF line ends (RFC 4180).
func NewWriter(w io.Writer) *Writer {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	return &Writer{w: cw}
}

// Cell is s as a spreadsheet takes it as text: a leading ' before a formula trigger.
func Cell(s string) string {
	if s == "" || !strings.ContainsAny(s[:1], "=+-@\t\r") {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "\t\r") {
		return s // a number such as -3.5 stays a number
	}
	return "'" + s
}

// Write writes one record, every cell neutralised.
func (w *Writer) Write(record []string) error {
	out := make([]string, len(record))
	for i, c := range record {
		out[i] = Cell(c)
	}
	return w.w.Write(out)
}

// Flush writes what is buffered and returns the first error met.
func (w *Writer) Flush() error {
	w.w.Flush()
	return w.w.Error()
}

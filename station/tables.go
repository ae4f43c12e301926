package station

import (
	"net/http"
	"strconv"
	"time"
)

// The page is bounded as /metrics is: each table shows its first rows and says how many
// more there are, each whole table is /api/tables/NAME (paged, under the page's
// filters), and the filters' choices are capped search boxes. A line of 3,000 board
// types, fixtures and 40 step ids gives a page of a few hundred kilobytes, not megabytes.

// tableRows is how many rows each of the page's tables shows.
var tableRows = map[string]int{"yield": 30, "port-yield": 25, "pareto": 15, "pace": 25, "steps": 25, "capability": 25, "fixtures": 25, "live": 25, "fixture-yield": 12}

// maxChoices bounds a filter's suggestions (the rest are typed).
const maxChoices = 100

// maxTablePage bounds a page of /api/tables/NAME and /api/reports.
const maxTablePage = 1000

// fullTables are the page's tables in full, by name, from the rows selected (under the
// index's read lock).
func (s *Server) fullTables(rows []*row, now time.Time) map[string]func() []any {
	return map[string]func() []any{
		"yield":         func() []any { return rowsOf(yields(rows)) },
		"port-yield":    func() []any { return rowsOf(portYields(rows)) },
		"pareto":        func() []any { return rowsOf(pareto(rows)) },
		"pace":          func() []any { b, _ := paces(rows, s.idx.steps); return rowsOf(b) },
		"steps":         func() []any { _, st := paces(rows, s.idx.steps); return rowsOf(st) },
		"capability":    func() []any { return rowsOf(s.idx.pop.capabilities("", s.opts.Sigmas)) },
		"fixtures":      func() []any { return rowsOf(s.fixtureList(now)) },
		"fixture-yield": func() []any { return rowsOf(fixtureYields(rows)) },
	}
}

// rowsOf is a table's rows as []any, to page every table alike.
func rowsOf[T any](rows []T) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// cut is a table's first n rows and how many more there are.
func cut[T any](full []T, n int) ([]T, int) {
	if len(full) <= n {
		return full, 0
	}
	return full[:n], len(full) - n
}

// pageOf is the offset and limit a request asks for (limit at most maxTablePage,
// default def), and whether they are numbers.
func pageOf(req *http.Request, def int) (offset, limit int, ok bool) {
	q := req.URL.Query()
	offset, limit = 0, def
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		offset = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, false
		}
		limit = min(n, maxTablePage)
	}
	return offset, limit, true
}

// window is the slice of full that offset and limit name.
func window[T any](full []T, offset, limit int) []T {
	if offset >= len(full) {
		return []T{}
	}
	return full[offset:min(len(full), offset+limit)]
}

// getTable serves one of the page's tables in full, paged: ?offset=&limit= (at most
// 1,000) under the page's own filters; X-Total-Count says how many rows it has.
func (s *Server) getTable(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("name")
	offset, limit, ok := pageOf(req, maxTablePage)
	if !ok {
		http.Error(w, "offset and limit: want whole numbers (limit 1..1000)", http.StatusBadRequest)
		return
	}
	var rows []any
	found := false
	err := s.withView(query(req), func(sel []*row, _ int) {
		f, ok := s.fullTables(sel, time.Now())[name]
		if !ok {
			return
		}
		found = true
		rows = f()
	})
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	case !found:
		http.Error(w, "no table "+name+": the tables are yield, port-yield, fixture-yield, pareto, pace, steps, capability, fixtures", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(rows)))
	writeJSON(w, window(rows, offset, limit))
}

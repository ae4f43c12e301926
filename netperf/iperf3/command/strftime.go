package command

import (
	"strconv"
	"strings"
	"time"
)

// strftimeLayouts are C's strftime(3) conversions (C locale) as Go layouts.
var strftimeLayouts = map[byte]string{
	'a': "Mon", 'A': "Monday", 'b': "Jan", 'h': "Jan", 'B': "January", 'c': "Mon Jan _2 15:04:05 2006",
	'd': "02", 'e': "_2", 'D': "01/02/06", 'F': "2006-01-02", 'H': "15", 'I': "03", 'm': "01", 'M': "04",
	'p': "PM", 'R': "15:04", 'S': "05", 'T': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700", 'Z': "MST",
	'n': "\n", 't': "\t", '%': "%",
}

// strftime formats t as C's strftime(3) does in the C locale, for --timestamps' format
// (written by hand: the conversions iperf3's users put there, as a table of Go layouts,
// rather than a dependency).
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch v := format[i]; v {
		case 'j':
			b.WriteString(strconv.Itoa(1000 + t.YearDay())[1:])
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		default:
			if l, ok := strftimeLayouts[v]; ok {
				b.WriteString(t.Format(l))
			} else {
				b.WriteByte('%')
				b.WriteByte(v)
			}
		}
	}
	return b.String()
}

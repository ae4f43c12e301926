package initramfs_test

import "testing"

// TestPromptAt: a prompt is found where the editor draws it, a kernel message or the
// command's late stderr line printed inside its drawing aside; none where there is none.
func TestPromptAt(t *testing.T) {
	for s, want := range map[string]int{
		"out\r\n\x1b[?25l> ": 5,
		"out\r\n\x1b[?25l[    5.822542] hrtimer: interrupt took 16630080 ns\r\n> ":                         5,
		"out\r\n\x1b[?25h\x1b[?25lx\x1b[?25l> ":                                                            18,
		"error: exit status 1\r\r\n\x1b[?25llinerate doctor: a finding failed\r\r\n>   \r\r\r\nM-? toggle": 23,
		"\x1b[?25lone\r\ntwo\r\n": -1,
		"out\r\n":                 -1,
		"\x1b[?25l[ 1.0] x\r\nno": -1,
	} {
		if got := promptAt(s); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

package station

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/zynqnet/linerate/internal/secretfile"
)

// Tokens are the bearer tokens a station takes, each with the name its reports are
// recorded under.
type Tokens struct {
	sums  [][sha256.Size]byte
	names []string
}

// MinTokenLen keeps guessable tokens out: 16 characters (a random 128-bit token in hex
// is 32).
const MinTokenLen = 16

// ParseTokens reads a tokens file: a line "TOKEN NAME" each, '#' comments and blank
// lines skipped. Every problem names the file and line.
func ParseTokens(data []byte, source string) (*Tokens, error) {
	t := &Tokens{}
	seen := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want TOKEN NAME", source, n)
		}
		if len(f[0]) < MinTokenLen {
			return nil, fmt.Errorf("%s:%d: the token is %d characters, want at least %d (openssl rand -hex 16)", source, n, len(f[0]), MinTokenLen)
		}
		if !SafeID(f[1]) {
			return nil, fmt.Errorf("%s:%d: name %q: use letters, digits, '.', '_', '-'", source, n, f[1])
		}
		sum := sha256.Sum256([]byte(f[0]))
		if prev, ok := seen[sum]; ok {
			return nil, fmt.Errorf("%s:%d: the token of line %d again", source, n, prev)
		}
		seen[sum] = n
		t.sums, t.names = append(t.sums, sum), append(t.names, f[1])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", source, err)
	}
	if len(t.sums) == 0 {
		return nil, fmt.Errorf("%s: no tokens (lines TOKEN NAME)", source)
	}
	return t, nil
}

// MaxTokensFile bounds a tokens file: thousands of tokens.
const MaxTokensFile = 1 << 20

// LoadTokens reads a tokens file, by the rules of the board's token file
// (secretfile): a regular file, private to its owner, at most MaxTokensFile bytes.
func LoadTokens(path string) (*Tokens, error) {
	b, err := secretfile.Read(path, MaxTokensFile)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	return ParseTokens(b, path)
}

// Who is the name of the request's bearer token, or "" when it carries none that is
// known. Every known token is compared, in constant time, whatever matched: the time
// tells nothing of how much of a token was right.
func (t *Tokens) Who(req *http.Request) string {
	h := req.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	who := ""
	for i, s := range t.sums {
		if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 {
			who = t.names[i]
		}
	}
	return who
}

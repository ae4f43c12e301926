package iperf3

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/readall"
)

// iperf3's authentication (iperf_auth.c, 3.12): the client sends, as the parameters'
// authtoken, base64 of "user: U\npwd:  P\nts:   UNIX-SECONDS" encrypted to the server's
// RSA public key (PKCS #1 v1.5 padding); the server decrypts it, checks the time is
// within its skew and finds U with sha256("{U}P") in its users file (lines
// "U,HEX", # comments).

const authText = "user: %s\npwd:  %s\nts:   %d"

// AuthToken is the client's token for user and password to the server's public key.
func AuthToken(user, password string, pub *rsa.PublicKey, now time.Time) (string, error) {
	enc, err := rsa.EncryptPKCS1v15(rand.Reader, pub, fmt.Appendf(nil, authText, user, password, now.Unix()))
	if err != nil {
		return "", fmt.Errorf("encrypt the credentials: %w", err)
	}
	return base64.StdEncoding.EncodeToString(enc), nil
}

// Authenticator is the server's side: its private key, users file and allowed skew.
type Authenticator struct {
	Key   *rsa.PrivateKey
	Users string
	Skew  time.Duration
}

// Check decrypts a token and finds its user; the error says why not, for the log.
func (a *Authenticator) Check(token string, now time.Time) (string, error) {
	enc, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return "", errors.New("the token is not base64")
	}
	plain, err := rsa.DecryptPKCS1v15(nil, a.Key, enc)
	if err != nil {
		return "", errors.New("the token does not decrypt with this server's key")
	}
	user, password, ts, ok := parseAuthText(string(plain))
	if !ok {
		return "", errors.New("the token's text is not iperf3's")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > a.Skew || d < -a.Skew {
		return user, fmt.Errorf("user %s: the token's time is %v off, beyond %v", user, d.Round(time.Second), a.Skew)
	}
	f, err := os.Open(a.Users)
	if err != nil {
		return user, err
	}
	defer f.Close()
	sum := sha256.Sum256([]byte("{" + user + "}" + password))
	want := hex.EncodeToString(sum[:])
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		u, h, ok := strings.Cut(l, ",")
		if ok && !strings.HasPrefix(l, "#") && u == user && strings.SplitN(h, ",", 2)[0] == want {
			return user, nil
		}
	}
	return user, fmt.Errorf("user %s: not in %s with that password", user, a.Users)
}

// parseAuthText reads authText's three lines as iperf3's sscanf does (each value up to
// white space); by hand, as fmt's scanner would be 23 KB of a board's binary for it.
func parseAuthText(s string) (user, password string, ts int64, ok bool) {
	field := func(line, prefix string) (string, bool) {
		v, found := strings.CutPrefix(line, prefix)
		f := strings.Fields(v)
		return strings.Join(f[:min(len(f), 1)], ""), found && len(f) > 0
	}
	lines := strings.SplitN(s, "\n", 3)
	if len(lines) != 3 {
		return "", "", 0, false
	}
	user, ok1 := field(lines[0], "user:")
	password, ok2 := field(lines[1], "pwd:")
	t, ok3 := field(lines[2], "ts:")
	n, err := strconv.ParseInt(t, 10, 64)
	return user, password, n, ok1 && ok2 && ok3 && err == nil
}

// ReadPublicKey reads a PEM RSA public key: PKIX ("PUBLIC KEY", what openssl rsa
// -pubout writes) or PKCS #1 ("RSA PUBLIC KEY"), with crypto/x509.
func ReadPublicKey(file string) (*rsa.PublicKey, error) {
	b, err := pemBlock(file)
	if err != nil {
		return nil, err
	}
	if k, err := x509.ParsePKIXPublicKey(b); err == nil {
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%s: not an RSA key (%T): iperf3 authenticates with RSA", file, k)
		}
		return rk, nil
	}
	k, err := x509.ParsePKCS1PublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKIX or PKCS #1 RSA public key: %w", file, err)
	}
	return k, nil
}

// ReadPrivateKey reads a PEM RSA private key: PKCS #8 ("PRIVATE KEY", OpenSSL 3's
// default) or PKCS #1 ("RSA PRIVATE KEY"), with crypto/x509.
func ReadPrivateKey(file string) (*rsa.PrivateKey, error) {
	b, err := pemBlock(file)
	if err != nil {
		return nil, err
	}
	if k, err := x509.ParsePKCS8PrivateKey(b); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s: not an RSA key (%T): iperf3 authenticates with RSA", file, k)
		}
		return rk, nil
	}
	k, err := x509.ParsePKCS1PrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKCS #8 or PKCS #1 RSA private key: %w", file, err)
	}
	return k, nil
}

func pemBlock(file string) ([]byte, error) {
	data, err := readall.File(file, 1<<20)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block", file)
	}
	return blk.Bytes, nil
}

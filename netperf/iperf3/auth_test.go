package iperf3

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeys writes an RSA key pair as OpenSSL 3 writes them (PKCS #8 private, PKIX
// public) and as OpenSSL 1 did (PKCS #1), and a users file for user "u", password "p".
func testKeys(t *testing.T) (dir string, key *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	p8, _ := x509.MarshalPKCS8PrivateKey(key)
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	write := func(name, typ string, b []byte) {
		os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600)
	}
	write("private.pem", "PRIVATE KEY", p8)
	write("public.pem", "PUBLIC KEY", pub)
	write("private1.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	write("public1.pem", "RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&key.PublicKey))
	sum := sha256.Sum256([]byte("{u}p"))
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("# users\nother,abc\nu,"+hex.EncodeToString(sum[:])+"\n"), 0o600)
	return dir, key
}

func TestAuthRoundTrip(t *testing.T) {
	dir, _ := testKeys(t)
	for _, files := range [][2]string{{"private.pem", "public.pem"}, {"private1.pem", "public1.pem"}} {
		priv, err := ReadPrivateKey(filepath.Join(dir, files[0]))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := ReadPublicKey(filepath.Join(dir, files[1]))
		if err != nil {
			t.Fatal(err)
		}
		a := &Authenticator{Key: priv, Users: filepath.Join(dir, "users.csv"), Skew: 10 * time.Second}
		now := time.Now()
		for _, c := range []struct {
			user, pass string
			at         time.Time
			want       string // "" accepted, else in the error
		}{
			{"u", "p", now, ""},
			{"u", "wrong", now, "not in"},
			{"nobody", "p", now, "not in"},
			{"u", "p", now.Add(-30 * time.Second), "beyond 10s"},
		} {
			tok, err := AuthToken(c.user, c.pass, pub, c.at)
			if err != nil {
				t.Fatal(err)
			}
			user, err := a.Check(tok, now)
			if c.want == "" && (err != nil || user != "u") || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s/%s at %v: %q %v, want %q", c.user, c.pass, now.Sub(c.at), user, err, c.want)
			}
		}
		if _, err := a.Check("not base64!", now); err == nil {
			t.Error("garbage accepted")
		}
	}
}

func TestParseAuthText(t *testing.T) {
	if u, p, ts, ok := parseAuthText("user: alice\npwd:  s3cret\nts:   1796025909"); !ok || u != "alice" || p != "s3cret" || ts != 1796025909 {
		t.Errorf("%q %q %d %v", u, p, ts, ok)
	}
	for _, bad := range []string{"", "user: a\npwd:  b", "user: a\npwd:  b\nts:   x", "name: a\npwd:  b\nts:   1", "user: \npwd:  b\nts:   1"} {
		if _, _, _, ok := parseAuthText(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzAuth: a token from the network and key files from the disk: refused or read,
// never a panic.
func FuzzAuth(f *testing.F) {
	f.Add("user: a\npwd:  b\nts:   1", []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	f.Add("", []byte{})
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	a := &Authenticator{Key: key, Users: filepath.Join(dir, "none"), Skew: time.Second}
	f.Fuzz(func(t *testing.T, text string, keyFile []byte) {
		parseAuthText(text)
		a.Check(text, time.Now())
		a.Check(base64.StdEncoding.EncodeToString([]byte(text)), time.Now())
		p := filepath.Join(t.TempDir(), "k.pem")
		os.WriteFile(p, keyFile, 0o600)
		ReadPublicKey(p)
		ReadPrivateKey(p)
	})
}

package station

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/validate"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "station"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// TestTLSAndTokens: a station serving https with tokens; the board's uploader (its own
// HTTP client) delivers with the CA and the token, and is refused without either.
func TestTLSAndTokens(t *testing.T) {
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("0123456789abcdef0123456789abcdef fixture-7\n"), 0o600)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Listen: addr, Data: filepath.Join(dir, "data"), Tokens: tokens, TLSCert: cert, TLSKey: key,
			Log: log.New(io.Discard, "", 0)})
	}()
	defer func() { cancel(); <-done }()
	url := "https://" + addr + "/api/reports"
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	body := report("tls-1", "zc702", "PASS", 900)
	for _, c := range []struct {
		name, token string
		pool        *x509.CertPool
		want        string
	}{
		{"no CA", "0123456789abcdef0123456789abcdef", nil, "certificate"},
		{"no token", "", pool, "401"},
		{"both", "0123456789abcdef0123456789abcdef", pool, ""},
	} {
		u := &validate.Uploader{URL: url, SpoolDir: filepath.Join(dir, "spool-"+c.name), Window: time.Second, Token: c.token,
			Client: validate.NewClient(&tls.Config{RootCAs: c.pool}, 10*time.Second)}
		err := u.Deliver(context.Background(), "tls-1", body)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := Run(context.Background(), Config{Listen: "127.0.0.1:0", Data: dir, TLSCert: cert, Log: log.New(io.Discard, "", 0)}); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("--tls-cert alone: %v", err)
	}
	if err := Run(context.Background(), Config{Listen: "127.0.0.1:0", Data: dir, TLSCert: key, TLSKey: cert, Log: log.New(io.Discard, "", 0)}); err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("cert and key swapped: %v", err)
	}
}

package secretbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k1, k2 := NewKey(), NewKey()
	b1, _ := New(k1)
	s, err := b1.Seal("whsec_abc")
	if err != nil || !Sealed(s) || strings.Contains(s, "whsec_abc") || !b1.SealsWith(s) {
		t.Fatalf("seal: %q %v", s, err)
	}
	if s2, _ := b1.Seal("whsec_abc"); s2 == s {
		t.Fatal("two seals of one secret are equal (nonce reused)")
	}
	if p, err := b1.Open(s); err != nil || p != "whsec_abc" {
		t.Fatalf("open: %q %v", p, err)
	}
	if p, err := b1.Open("whsec_plain"); err != nil || p != "whsec_plain" {
		t.Fatalf("plain text passes: %q %v", p, err)
	}
	b2, _ := New(k2)
	if _, err := b2.Open(s); err != ErrUnknownKey {
		t.Fatalf("another key: %v", err)
	}
	both, _ := New(k2, k1) // seals with k2, still opens k1's values
	if p, err := both.Open(s); err != nil || p != "whsec_abc" || both.SealsWith(s) {
		t.Fatalf("older key: %q %v", p, err)
	}
	tampered := s[:len(s)-2] + "AA"
	if _, err := b1.Open(tampered); err == nil {
		t.Fatal("a tampered value opened")
	}
	if _, err := New(k1[:16]); err == nil {
		t.Fatal("a short key was taken")
	}
}

// Load makes a 0600 key file beside a SQLite database on first use, reads
// it after, refuses one others can read, prefers AGENTD_SECRET_KEY, and on
// PostgreSQL without the variable has no key.
func TestLoad(t *testing.T) {
	t.Setenv(EnvKey, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "agentd.db")
	b, err := Load(db, false)
	if err != nil || b == nil {
		t.Fatalf("load: %v", err)
	}
	fi, err := os.Stat(KeyFile(db))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	s, _ := b.Seal("x")
	again, err := Load(db, false)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := again.Open(s); err != nil || p != "x" {
		t.Fatalf("the key changed between loads: %v", err)
	}
	os.Chmod(KeyFile(db), 0o644)
	if _, err := Load(db, false); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a 0644 key file: %v", err)
	}
	if b, err := Load("postgres://x", true); b != nil || err != nil {
		t.Fatalf("postgres without a key: %v %v", b, err)
	}
	k := NewKey()
	t.Setenv(EnvKey, FormatKey(k))
	b, err = Load("postgres://x", true)
	if err != nil || b == nil || b.seal != KeyID(k) {
		t.Fatalf("env key: %v", err)
	}
	t.Setenv(EnvKey, "too short")
	if _, err := Load(db, false); err == nil {
		t.Fatal("a bad env key was taken")
	}
}

// Open takes any stored text without panicking.
func FuzzOpen(f *testing.F) {
	b, _ := New(make([]byte, KeySize))
	good, _ := b.Seal("whsec_x")
	for _, s := range []string{good, "", "sb1:", "sb1:00000000:", "sb1:" + KeyID(make([]byte, KeySize)) + ":AAAA", "whsec_plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		p, err := b.Open(v)
		if err == nil && !Sealed(v) && p != v {
			t.Fatalf("plain text changed: %q -> %q", v, p)
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{FormatKey(make([]byte, KeySize)), strings.Repeat("ab", 32), "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if k, err := ParseKey(s); err == nil && len(k) != KeySize {
			t.Fatalf("key of %d bytes", len(k))
		}
	})
}

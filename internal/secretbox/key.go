package secretbox

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvKey is the environment variable holding the key (base64 or hex of 32
// bytes). It wins over the key file; on PostgreSQL it is the only source.
const EnvKey = "AGENTD_SECRET_KEY"

// KeyFile is the key file of a SQLite database: beside it, 0600.
func KeyFile(dbPath string) string { return dbPath + ".key" }

// ParseKey reads a key written as base64 (standard or URL, padded or not)
// or hex.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	if k, err := hex.DecodeString(s); err == nil && len(k) == KeySize {
		return k, nil
	}
	return nil, fmt.Errorf("secretbox: a key is %d bytes in base64 or hex (make one with `openssl rand -base64 32`)", KeySize)
}

// FormatKey writes a key as base64.
func FormatKey(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// Load makes the box of a database. With AGENTD_SECRET_KEY set it uses that
// key. Otherwise a SQLite database (dbPath a file) uses its key file,
// created on first use; a rotation's pending file (KeyFile+".new") is
// opened too. PostgreSQL without the variable has no box (nil, nil): the
// caller says so and secrets stay in plain text.
func Load(dbPath string, postgres bool) (*Box, error) {
	if v := os.Getenv(EnvKey); v != "" {
		k, err := ParseKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKey, err)
		}
		return New(k)
	}
	if postgres {
		return nil, nil
	}
	path := KeyFile(dbPath)
	k, err := ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k = NewKey()
		if err = WriteKeyFile(path, k); errors.Is(err, fs.ErrExist) { // another process made it first
			k, err = ReadKeyFile(path)
		}
	}
	if err != nil {
		return nil, err
	}
	var older [][]byte
	if pending, err := ReadKeyFile(path + ".new"); err == nil {
		older = append(older, pending)
	}
	return New(k, older...)
}

// ReadKeyFile reads a key file, refusing one others may read.
func ReadKeyFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secretbox: key file %s is readable by others (%v): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// WriteKeyFile writes a new key file, 0600, refusing to replace one.
func WriteKeyFile(path string, k []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(FormatKey(k) + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

package league

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/leaguectl/leaguectl/protocol"
)

// TokenKeySize is the size of a token key, in bytes.
const TokenKeySize = 32

// TokenNonceSize is the size of the random part of a registration that,
// with the token key, makes the agent's token.
const TokenNonceSize = 16

// deriveToken is the token of agent role:id whose registration drew nonce,
// under key: tok_{type}_{id}_ and 128 bits of HMAC-SHA256, the form of
// protocol-v2.md. The store keeps the nonce and the token's hash, never
// the key: a database alone gives no token away, and a manager restarted
// on it with the key can sign its messages to every agent again.
func deriveToken(key []byte, role protocol.Role, id string, nonce []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("leaguectl agent token\x00" + string(role) + "\x00" + id + "\x00"))
	mac.Write(nonce)
	return "tok_" + string(role) + "_" + id + "_" + hex.EncodeToString(mac.Sum(nil)[:16])
}

// TokenKeyFile reads the token key kept at path (ReadTokenKey), or, when
// there is no file there, makes one from random (crypto/rand when nil) and
// puts it there, readable by its owner only, durably before it returns:
// written whole to a file of its own first, then linked into place, so
// that a file at path is always a whole key, and of two managers that
// start at once, both take the one that got there first. created reports
// that this call made it. The key belongs beside the league's database
// and must be kept as secret as the agents' tokens: with the database, it
// gives every one of them.
func TokenKeyFile(path string, random io.Reader) (key []byte, created bool, err error) {
	if random == nil {
		random = rand.Reader
	}
	key, err = ReadTokenKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	key = make([]byte, TokenKeySize)
	if _, err := io.ReadFull(random, key); err != nil {
		return nil, false, fmt.Errorf("token key: no randomness: %w", err)
	}
	switch err := linkNew(path, []byte(hex.EncodeToString(key)+"\n")); {
	case errors.Is(err, fs.ErrExist):
		key, err = ReadTokenKey(path) // another got there first: its key is the one
		return key, false, err
	case err != nil:
		return nil, false, fmt.Errorf("token key %s: %w", path, err)
	}
	return key, true, nil
}

// ReadTokenKey reads the token key kept at path: 64 hex digits, in a file
// no one but its owner may read. The error wraps fs.ErrNotExist when there
// is none.
func ReadTokenKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token key %s: %w", path, err)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("token key %s may be read by others (mode %#o): it gives every agent's token; chmod 600 it", path, fi.Mode().Perm())
		}
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != TokenKeySize {
		return nil, fmt.Errorf("token key %s: not %d hex digits", path, 2*TokenKeySize)
	}
	return key, nil
}

// linkNew puts b at path, which must not exist yet (fs.ErrExist), whole
// or not at all: in a file of its own (mode 0600), synced, then linked to
// path, and the directory synced.
func linkNew(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil // a directory is not synced there
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

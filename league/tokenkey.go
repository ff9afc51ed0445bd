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

// TokenKeyFile reads the token key kept at path (64 hex digits), or, when
// there is no file there, makes one from random (crypto/rand when nil) and
// writes it there, readable by its owner only, durably before it returns.
// created reports the latter. The key belongs beside the league's
// database and must be kept as secret as the agents' tokens: with the
// database, it gives every one of them.
func TokenKeyFile(path string, random io.Reader) (key []byte, created bool, err error) {
	if random == nil {
		random = rand.Reader
	}
	key, err = readTokenKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	key = make([]byte, TokenKeySize)
	if _, err := io.ReadFull(random, key); err != nil {
		return nil, false, fmt.Errorf("token key: no randomness: %w", err)
	}
	if err := writeNew(path, []byte(hex.EncodeToString(key)+"\n")); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another manager made it first: its key is the one.
			key, err = readTokenKey(path)
			return key, false, err
		}
		return nil, false, fmt.Errorf("token key %s: %w", path, err)
	}
	return key, true, nil
}

func readTokenKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("token key %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != TokenKeySize {
		return nil, fmt.Errorf("token key %s: not %d hex digits", path, 2*TokenKeySize)
	}
	return key, nil
}

// writeNew writes a file that must not exist yet, mode 0600, and syncs
// it and its directory.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

package league

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestDeriveToken pins the construction: a manager restarted by another
// build of leaguectl on the same store and key must make the same tokens.
// The values were computed apart, with Python's hmac module.
func TestDeriveToken(t *testing.T) {
	is := is.New(t)
	key := make([]byte, TokenKeySize)
	nonce := make([]byte, TokenNonceSize)
	for i := range key {
		key[i] = byte(i)
	}
	for i := range nonce {
		nonce[i] = byte(100 + i)
	}
	is.Equal(deriveToken(key, protocol.RolePlayer, "P07", nonce), "tok_player_P07_f3c140c6450d75c18bf7628de8f57fb2")
	is.Equal(deriveToken(key, protocol.RoleReferee, "REF01", nonce), "tok_referee_REF01_0c2af845a8e860484b8bad8d301787be")
	other := bytes.Clone(key)
	other[31] ^= 1
	is.True(deriveToken(other, protocol.RolePlayer, "P07", nonce) != "tok_player_P07_f3c140c6450d75c18bf7628de8f57fb2") // another key, another token
}

func TestTokenKeyFile(t *testing.T) {
	t.Run("made once, then read", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db.key")
		random := bytes.NewReader(bytes.Repeat([]byte{0xab}, TokenKeySize))
		key, created, err := TokenKeyFile(path, random)
		is.NoErr(err)
		is.True(created)
		is.Equal(key, bytes.Repeat([]byte{0xab}, TokenKeySize))
		b, err := os.ReadFile(path)
		is.NoErr(err)
		is.Equal(string(b), strings.Repeat("ab", TokenKeySize)+"\n") // hex, a line
		if runtime.GOOS != "windows" {
			fi, err := os.Stat(path)
			is.NoErr(err)
			is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // its owner's only
		}
		again, created, err := TokenKeyFile(path, bytes.NewReader(bytes.Repeat([]byte{0xcd}, TokenKeySize)))
		is.NoErr(err)
		is.True(!created)
		is.Equal(again, key) // the key there, not a new one
	})
	t.Run("not a key", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db.key")
		is.NoErr(os.WriteFile(path, []byte("abcd\n"), 0o600))
		_, _, err := TokenKeyFile(path, nil)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), path))                // names the file
		is.True(strings.Contains(err.Error(), "not 64 hex digits")) // and what is wrong
		b, _ := os.ReadFile(path)
		is.Equal(string(b), "abcd\n") // and leaves it alone
	})
	t.Run("many at once", func(t *testing.T) {
		is := is.New(t)
		for range 50 {
			path := filepath.Join(t.TempDir(), "league.db.key")
			const n = 8
			keys, made, errs := make([][]byte, n), make([]bool, n), make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { <-start; keys[i], made[i], errs[i] = TokenKeyFile(path, nil) })
			}
			close(start)
			wg.Wait()
			creators := 0
			for i := range n {
				is.NoErr(errs[i])          // none reads a key half written
				is.Equal(keys[i], keys[0]) // all take the same key
				if made[i] {
					creators++
				}
			}
			is.Equal(creators, 1) // made once
			entries, err := os.ReadDir(filepath.Dir(path))
			is.NoErr(err)
			is.Equal(len(entries), 1) // and nothing left beside it
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no Unix file modes")
		}
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db.key")
		is.NoErr(os.WriteFile(path, []byte(strings.Repeat("ab", TokenKeySize)+"\n"), 0o600))
		is.NoErr(os.Chmod(path, 0o644))
		_, _, err := TokenKeyFile(path, nil)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "may be read by others (mode 0644)")) // refused
		is.True(strings.Contains(err.Error(), "chmod 600"))                         // saying what to do
	})
	t.Run("no randomness", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db.key")
		_, _, err := TokenKeyFile(path, bytes.NewReader([]byte{1, 2, 3}))
		is.True(errors.Is(err, io.ErrUnexpectedEOF))
		_, err = os.Stat(path)
		is.True(errors.Is(err, os.ErrNotExist)) // no file left behind
		entries, err := os.ReadDir(filepath.Dir(path))
		is.NoErr(err)
		is.Equal(len(entries), 0) // nor any other
	})
	t.Run("directory missing", func(t *testing.T) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "no-such-dir", "league.db.key")
		_, _, err := TokenKeyFile(path, nil)
		is.True(errors.Is(err, os.ErrNotExist))
		is.True(strings.Contains(err.Error(), path))
	})
}

// FuzzReadTokenKey: whatever a token key file holds, it is read as a key
// of TokenKeySize bytes or refused, never a panic.
func FuzzReadTokenKey(f *testing.F) {
	for _, s := range []string{strings.Repeat("ab", TokenKeySize), strings.Repeat("ab", TokenKeySize) + "\n", " " + strings.Repeat("0", 2*TokenKeySize) + " \r\n",
		strings.Repeat("ab", TokenKeySize+1), "zz", "", strings.Repeat("é", TokenKeySize)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "token.key")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		key, err := ReadTokenKey(path)
		if err == nil && len(key) != TokenKeySize {
			t.Fatalf("%q read as a key of %d bytes", b, len(key))
		}
		if err != nil && key != nil {
			t.Fatalf("%q refused with a key", b)
		}
	})
}

package protocol

import (
	"hash/maphash"
	"sync/atomic"
	"unsafe"
)

// Words holds strings decoded from messages, so that a string seen again
// is not allocated again. A league's messages repeat most of their
// strings: the senders, the auth tokens, the timestamps (one a second), a
// match's id and conversation id (a dozen messages each), the players'
// ids. Without it, allocating those strings was 38% of a league's
// allocations (200 players: 2.2 of 5.9 million a league).
//
// It is a fixed table of wordsSize slots, looked up by a seeded hash of
// the text: a string whose slot holds the same text is that one; any other
// is allocated and takes the slot. Reading a slot and taking it are atomic,
// so a Words is safe for concurrent use, and one is meant to be shared by
// every agent of a process (their decoders meet the same strings). Strings
// are immutable: sharing them between messages changes nothing a message
// can see. A sender that makes every string different (or collide) only
// makes its strings be allocated, as without a Words.
//
// What it saves is the allocations and the collector's work on them, not
// much more: a lookup reads a word that was made long ago, often no longer
// in the core's caches, where a new string is written to memory that is.
// BenchmarkLeague/mem/200: allocations 5.88 -> 3.73 million a league,
// CPU -4% (within the machine's noise).
type Words struct {
	seed maphash.Seed
	// Each slot points at a word: its length in one byte, then its
	// bytes, in one allocation, so that a lookup follows one pointer.
	slots [wordsSize]atomic.Pointer[byte]
}

const (
	// wordsSize is the number of slots. Strings that share one take it
	// from each other: a 200-player league misses 133,596 times (61,517
	// of them strings seen once), a 1000-player one 6.4 million. 16,384
	// or 65,536 slots missed 83,652 or 65,964 and 3.5 or 2.1 million
	// times, with no CPU saved that whole leagues could show, and the
	// largest held 25 MB more at 1000 players (twenty-third session).
	wordsSize = 4096
	// maxWord is the longest text a Words holds: longer ones (texts,
	// reasons) seldom repeat and would cost a hash of their length.
	maxWord = 64
)

// NewWords returns an empty Words.
func NewWords() *Words { return &Words{seed: maphash.MakeSeed()} }

// of returns text as a string: the one a slot holds, or a new one. A nil
// Words always allocates.
func (w *Words) of(text []byte) string {
	n := len(text)
	if w == nil || n == 0 || n > maxWord {
		return string(text)
	}
	slot := &w.slots[maphash.Bytes(w.seed, text)%wordsSize]
	if p := slot.Load(); p != nil && int(*p) == n {
		held := unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(p), 1)), n)
		if held == string(text) {
			return held
		}
	}
	b := make([]byte, 1+n)
	b[0] = byte(n)
	copy(b[1:], text)
	slot.Store(&b[0])
	return unsafe.String(&b[1], n)
}

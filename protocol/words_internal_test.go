package protocol

import (
	"fmt"
	"hash/maphash"
	"sync"
	"testing"
	"unsafe"

	"github.com/matryer/is"
)

// same reports whether a and b are one string in memory.
func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestWords: a text seen again is the string made the first time; the
// string is a copy, not the buffer it was read from; a text whose slot
// another took is made again; long texts and a nil Words are not held.
func TestWords(t *testing.T) {
	is := is.New(t)
	w := NewWords()
	buf := []byte("referee:REF01")
	first := w.of(buf)
	is.Equal(first, "referee:REF01")
	again := w.of([]byte("referee:REF01"))
	is.True(same(first, again)) // seen again: not made again
	buf[0] = 'R'                // the buffer is reused for the next message
	is.Equal(first, "referee:REF01")
	is.Equal(w.of(buf), "Referee:REF01")

	// Two texts of one slot: each read is its own text, and the one that
	// lost the slot is made again.
	a, b := collidingTexts(t, w)
	sa := w.of([]byte(a))
	sb := w.of([]byte(b))
	is.Equal(sa, a)
	is.Equal(sb, b)
	sa2 := w.of([]byte(a))
	is.Equal(sa2, a)
	is.True(!same(sa, sa2)) // b took the slot
	is.True(same(sa2, w.of([]byte(a))))

	long := make([]byte, maxWord+1)
	for i := range long {
		long[i] = 'x'
	}
	is.True(!same(w.of(long), w.of(long))) // longer than maxWord: not held
	is.True(same(w.of(long[:maxWord]), w.of(long[:maxWord])))

	var none *Words
	is.Equal(none.of([]byte("P01")), "P01")
	is.True(!same(none.of([]byte("P01")), none.of([]byte("P01"))))
	is.Equal(w.of(nil), "")
}

// collidingTexts returns two texts of the same slot of w.
func collidingTexts(t *testing.T, w *Words) (string, string) {
	t.Helper()
	seen := map[uint64]string{}
	for i := 0; i < 100*wordsSize; i++ {
		text := fmt.Sprintf("conv-R%dM%d", i/100, i%100)
		slot := maphash.String(w.seed, text) % wordsSize
		if other, ok := seen[slot]; ok {
			return other, text
		}
		seen[slot] = text
	}
	t.Fatal("no two texts share a slot")
	return "", ""
}

// wordsApart returns a Words in which no two of texts share a slot (the
// seed is random: with 4096 slots, nine texts share one about once in 400
// tables).
func wordsApart(t *testing.T, texts ...string) *Words {
	t.Helper()
	for range 100 {
		w, slots := NewWords(), map[uint64]bool{}
		for _, text := range texts {
			slots[maphash.String(w.seed, text)%wordsSize] = true
		}
		if len(slots) == len(texts) {
			return w
		}
	}
	t.Fatal("the texts always share a slot")
	return nil
}

// TestWordsLonger: a text is not taken for a shorter one its slot holds
// that it begins with (the length is compared before the bytes).
func TestWordsLonger(t *testing.T) {
	is := is.New(t)
	w := NewWords()
	for i := 0; ; i++ {
		short := fmt.Sprintf("conversation-%08d", i)
		long := short + "-invite"
		if maphash.String(w.seed, short)%wordsSize != maphash.String(w.seed, long)%wordsSize {
			continue
		}
		is.Equal(w.of([]byte(short)), short)
		is.Equal(w.of([]byte(long)), long)
		is.Equal(w.of([]byte(short)), short)
		return
	}
}

// TestWordsAny: a string read as a value of any type comes from the Words
// too.
func TestWordsAny(t *testing.T) {
	is := is.New(t)
	w := NewWords()
	read := func() string {
		s := scanner{b: []byte(`"referee:REF01"`), words: w}
		v, _ := s.any().(string)
		return v
	}
	a, b := read(), read()
	is.Equal(a, "referee:REF01")
	is.True(same(a, b))
}

// TestWordsConcurrent: goroutines reading the same and colliding texts at
// once each get their own text (run with -race).
func TestWordsConcurrent(t *testing.T) {
	w := NewWords()
	a, b := collidingTexts(t, w)
	texts := []string{a, b, "P01", "P02", "2026-11-21T05:29:41Z", "referee:REF01"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				text := texts[(g+i)%len(texts)]
				if got := w.of([]byte(text)); got != text {
					t.Errorf("of(%q) = %q", text, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWordsDecoding: a request and a reply read with a Words share their
// repeated strings with the messages read before them, and allocate that
// much less; what they decode to is the same.
func TestWordsDecoding(t *testing.T) {
	is := is.New(t)
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"handle_game_invitation","params":{"protocol":"league.v2",` +
		`"message_type":"GAME_INVITATION","sender":"referee:REF01","timestamp":"2026-11-21T05:29:41Z",` +
		`"conversation_id":"conv-R1M1","auth_token":"0123456789abcdef0123456789abcdef","league_id":"league_2025_even_odd",` +
		`"round_id":1,"match_id":"R1M1","game_type":"even_odd","role_in_match":"PLAYER_A","opponent_id":"P02"}}`)
	words := Reading{Words: wordsApart(t, "referee:REF01", "2026-11-21T05:29:41Z", "conv-R1M1",
		"0123456789abcdef0123456789abcdef", "league_2025_even_odd", "R1M1", "P02", "player:P01", "P01")}
	in1, ok := words.Request(body)
	is.True(ok)
	in2, _ := words.Request(body)
	plain, _ := Reading{}.Request(body)
	is.Equal(in1.Decoded, plain.Decoded)
	is.Equal(in2.Decoded, plain.Decoded)
	inv1, inv2 := in1.Decoded.(*GameInvitation), in2.Decoded.(*GameInvitation)
	for _, p := range [][2]string{{inv1.Sender, inv2.Sender}, {inv1.Timestamp, inv2.Timestamp},
		{inv1.ConversationID, inv2.ConversationID}, {inv1.AuthToken, inv2.AuthToken},
		{inv1.LeagueID, inv2.LeagueID}, {inv1.MatchID, inv2.MatchID}, {inv1.OpponentID, inv2.OpponentID}} {
		is.True(same(p[0], p[1])) // one string for both messages
	}
	// The seven strings above are all the request allocates as strings.
	cold := testing.AllocsPerRun(100, func() { _, _ = Reading{}.Request(body) })
	warm := testing.AllocsPerRun(100, func() { _, _ = words.Request(body) })
	is.Equal(cold-warm, 7.0)

	reply := []byte(`{"jsonrpc":"2.0","id":7,"result":{"protocol":"league.v2","message_type":"GAME_JOIN_ACK",` +
		`"sender":"player:P01","timestamp":"2026-11-21T05:29:41Z","conversation_id":"conv-R1M1",` +
		`"auth_token":"0123456789abcdef0123456789abcdef","match_id":"R1M1","player_id":"P01",` +
		`"arrival_timestamp":"2026-11-21T05:29:41Z","accept":true}}`)
	var ack1, ack2, ackPlain GameJoinAck
	_, decoded, err := words.ResponseInto(reply, &ack1)
	is.NoErr(err)
	is.True(decoded)
	_, _, _ = words.ResponseInto(reply, &ack2)
	_, _, _ = Reading{}.ResponseInto(reply, &ackPlain)
	is.Equal(ack1, ackPlain)
	is.True(same(ack1.Sender, ack2.Sender))
	is.True(same(ack1.MatchID, ack2.MatchID))
	is.True(same(ack1.ArrivalTimestamp, ack2.ArrivalTimestamp))
	cold = testing.AllocsPerRun(100, func() { var a GameJoinAck; _, _, _ = Reading{}.ResponseInto(reply, &a) })
	warm = testing.AllocsPerRun(100, func() { var a GameJoinAck; _, _, _ = words.ResponseInto(reply, &a) })
	is.Equal(cold-warm, 7.0) // sender, timestamp, conversation, token, match, player, arrival
}

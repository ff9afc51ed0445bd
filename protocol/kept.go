package protocol

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Tables kept unread. A player is sent the league's tables every round (the
// standings, the matches of the next round) and reads neither: it answers,
// counts the matches and shows the latest standings when asked. Decoding
// them is most of what a player spends on a round over the network: a
// table of 64 rows is 128 strings and a slice made, per player, per round.
// A recipient that asks for it (KeepTables) has a message's tables checked
// as decoding and validation check them, element by element, without
// keeping what the elements decode to; the message holds the table's bytes
// instead, and decodes them when asked (LeagueStandingsUpdate.Rows,
// RoundAnnouncement.AllMatches). A table that is not taken as it is (null,
// a null element, anything the generated decoder declines or validation
// refuses) declines the whole message, which is then decoded in full, so
// that what is refused is refused with the same error.

// kept is a table kept unread: its JSON array, checked, and its length.
type kept struct {
	raw []byte
	n   int
}

// tableRow is an element of a table that can be kept unread.
type tableRow[T any] interface {
	*T
	decodeFast(s *scanner) bool
}

// keepTable, written for each element type (keepStandingRowTable, …, in
// json_gen.go), reads the array next in s as the decoding and validation of
// its elements would, into one scratch element whose strings alias s, and
// keeps its bytes in k. It fails s for anything else (see above). keepStart
// and keepEnd are its beginning and end.

// keepStart consumes the [ of the table and has strings alias s; at is
// where the table begins.
func (s *scanner) keepStart() (at int, ok bool) {
	if s.peek() != '[' {
		return 0, s.fail()
	}
	at = s.i
	if !s.arrayStart() {
		return 0, false
	}
	s.alias = true
	return at, true
}

// keepEnd ends the table begun at at, of n elements: kept in k when all of
// them were taken (ok) and the table ends well, s failed otherwise.
func (s *scanner) keepEnd(k *kept, at, n int, ok bool) bool {
	s.alias = false
	if !ok {
		return s.fail()
	}
	if s.bad {
		return false
	}
	k.raw, k.n = bytes.Clone(s.b[at:s.i]), n
	return true
}

// keptRows decodes a kept table. It cannot fail: the table was checked
// when it was kept.
func keptRows[T any, P tableRow[T]](k kept) []T {
	s := scanner{b: k.raw}
	rows := make([]T, k.n)
	if !s.arrayStart() {
		return nil
	}
	for i := 0; s.elem(i) && i < len(rows); i++ {
		if !P(&rows[i]).decodeFast(&s) {
			return nil
		}
	}
	return rows
}

// MarshalJSONTo has json encode m with a kept table as it encodes the
// message decoded in full: the table is an unexported field, which json
// would leave out (as would AppendJSON of m as a value, or of anything
// holding it). The generated encoder of *LeagueStandingsUpdate reads it
// itself.
func (m LeagueStandingsUpdate) MarshalJSONTo(enc *jsontext.Encoder) error {
	m.Standings, m.standings = m.Rows(), kept{}
	type plain LeagueStandingsUpdate // without this method
	return json.MarshalEncode(enc, (*plain)(&m))
}

// MarshalJSONTo is LeagueStandingsUpdate.MarshalJSONTo for a round's
// matches.
func (m RoundAnnouncement) MarshalJSONTo(enc *jsontext.Encoder) error {
	m.Matches, m.matches = m.AllMatches(), kept{}
	type plain RoundAnnouncement // without this method
	return json.MarshalEncode(enc, (*plain)(&m))
}

// forgetKept drops the tables v keeps unread, before json decodes into it:
// what json decodes replaces them, as the generated decoder's does.
func forgetKept(v any) {
	switch m := v.(type) {
	case *LeagueStandingsUpdate:
		if m != nil {
			m.standings = kept{}
		}
	case *RoundAnnouncement:
		if m != nil {
			m.matches = kept{}
		}
	}
}

package protocol

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

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
// and keepEnd are its beginning and end; kind names the element type.

// keepStart consumes the [ of the table and has strings alias s; at is
// where the table begins. A table the recipient's TableCache holds is
// taken as it stands instead: kept in k, s moved past it, and checked is
// true.
func (s *scanner) keepStart(k *kept, kind string) (at int, checked, ok bool) {
	if s.peek() != '[' {
		return 0, false, s.fail()
	}
	at = s.i
	if s.tables != nil && s.mcp == 0 {
		if t, found := s.tables.find(kind, s.depth, s.lenient, s.b[at:]); found {
			s.i += len(t.raw)
			*k = t
			return at, true, true
		}
	}
	if !s.arrayStart() {
		return 0, false, false
	}
	s.alias = true
	return at, false, true
}

// keepEnd ends the table begun at at, of n elements: kept in k when all of
// them were taken (ok) and the table ends well, s failed otherwise. A table
// kept is added to the recipient's TableCache.
func (s *scanner) keepEnd(k *kept, kind string, at, n int, ok bool) bool {
	s.alias = false
	if !ok {
		return s.fail()
	}
	if s.bad {
		return false
	}
	// Clipped: the bytes may be shared (TableCache), and an append to them
	// must copy.
	k.raw, k.n = slices.Clip(bytes.Clone(s.b[at:s.i])), n
	if s.tables != nil && s.mcp == 0 {
		s.tables.add(kind, s.depth, s.lenient, *k)
	}
	return true
}

// TableCache holds tables already checked and kept unread (KeepTables),
// for recipients in one process that are sent the same tables: the players
// of a league run in one process (leaguectl simulate) are each sent every
// round's standings and matches, byte for byte the same but for their own
// envelopes. A table found in the cache is taken as checked without being
// read again, and its recipients share its bytes, which are read-only.
//
// Checking a table depends on its bytes and on where it stands: the
// nesting around it (a row nested past maxDepth is declined), whether
// duplicate names are refused, the element type. The cache holds all of
// these and finds a table only when they are the same and the input
// begins with its bytes: a JSON array ends where its own bytes say, so the
// table there is that one. (Today tables are checked only in a request's
// params, where duplicate names are always refused and no MCP result is
// looked for; the key and keepStart's guard hold those all the same, so
// that a table checked elsewhere one day is not taken for one checked
// there.) Only tables that passed are held, the newest tableCacheSize of
// them. A TableCache is safe for concurrent use.
type TableCache struct {
	mu     sync.Mutex // taken by add
	tables atomic.Pointer[[]checkedTable]
	found  atomic.Int64
}

// tableCacheSize is how many tables a TableCache holds: a round's
// standings and matches, and the round's before.
const tableCacheSize = 8

// checkedTable is a table a TableCache holds, and where it was checked.
type checkedTable struct {
	kind    string
	depth   int
	lenient bool
	kept
}

// at reports whether t is of kind and was checked at depth with lenient.
func (t *checkedTable) at(kind string, depth int, lenient bool) bool {
	return t.kind == kind && t.depth == depth && t.lenient == lenient
}

// NewTableCache returns an empty TableCache.
func NewTableCache() *TableCache { return &TableCache{} }

// find returns the table of kind that in begins with, checked at depth
// with lenient as given.
func (c *TableCache) find(kind string, depth int, lenient bool, in []byte) (kept, bool) {
	p := c.tables.Load()
	if p == nil {
		return kept{}, false
	}
	for _, t := range *p {
		if t.at(kind, depth, lenient) && bytes.HasPrefix(in, t.raw) {
			c.found.Add(1)
			return t.kept, true
		}
	}
	return kept{}, false
}

// Found is how many tables were found in c instead of being checked.
func (c *TableCache) Found() int64 { return c.found.Load() }

// add holds k, a table of kind checked at depth with lenient as given,
// unless the cache holds it already (recipients that checked it at once).
func (c *TableCache) add(kind string, depth int, lenient bool, k kept) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old []checkedTable
	if p := c.tables.Load(); p != nil {
		old = *p
	}
	for _, t := range old {
		if t.at(kind, depth, lenient) && bytes.Equal(t.raw, k.raw) {
			return
		}
	}
	// A new slice each time: finders read the old one without a lock.
	tables := make([]checkedTable, 0, tableCacheSize)
	tables = append(tables, checkedTable{kind: kind, depth: depth, lenient: lenient, kept: k})
	tables = append(tables, old[:min(len(old), tableCacheSize-1)]...)
	c.tables.Store(&tables)
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

package protocol

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast decoder. json.Unmarshal decodes by reflection, through a token
// reader that validates as it goes; on a league's small messages that is
// about a third of the CPU a message costs. The generated decodeFast methods
// of json_gen.go read the message structs straight from the bytes with the
// scanner below, and json stays the reference: the fast path takes only
// input it can decode to exactly what json.Unmarshal gives, and declines
// everything else (escapes in strings, numbers an int field would refuse,
// duplicate names, jsontext.Value and any fields, nesting deeper than
// maxDepth, anything malformed). A declined input is decoded by json, which
// then also gives the error and its field. Tests compare the two decoders
// on random and fuzzed input of every type. One exception, asked for by a
// recipient (Reading.KeepTables): the tables of two broadcasts are checked
// and kept as bytes instead of decoded (kept.go); the message is the same
// once they are read through its accessors, and encodes the same.

// maxDepth bounds the nesting the scanner follows; deeper input goes to json.
const maxDepth = 32

// scanner reads JSON from b. Its methods set bad instead of returning an
// error: once bad, the input is declined, and what was decoded is dropped.
type scanner struct {
	b     []byte
	i     int
	bad   bool
	depth int
	// lenient skips values without checking their objects for duplicate
	// names, as json does with jsontext.AllowDuplicateNames(true).
	lenient bool
	// nest is the deepest nesting skimmed has found.
	nest int
	// mcp is the depth of the object, a response's result, whose members
	// named content or structuredContent make a generated decoder decline
	// it: readResponse may unwrap it as an MCP result. 0 for none.
	mcp int
	// keep has the tables of messages kept unread (kept.go); alias, set
	// while such a table is checked, has strings alias b instead of being
	// copied: what they are decoded into is dropped before b can change.
	keep, alias bool
	// tables, when keep is set, holds tables checked already (TableCache).
	tables *TableCache
	// words, if set, gives the strings read (Words).
	words *Words
}

// declines reports whether the member called name, which the struct being
// decoded does not have, makes its decoder decline the object: a member of
// an MCP result, at the depth s.mcp.
func (s *scanner) declines(name []byte) bool {
	return s.mcp == s.depth && (string(name) == "content" || string(name) == "structuredContent")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// peek skips whitespace and returns the next byte, or 0 at the end (0 is
// never valid JSON outside strings, so no caller mistakes one for the other).
func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		if c := s.b[s.i]; !isSpace(c) {
			return c
		}
		s.i++
	}
	return 0
}

// end reports whether only whitespace is left, and nothing went wrong.
func (s *scanner) end() bool {
	s.peek()
	return !s.bad && s.i == len(s.b)
}

// fail marks the input as declined.
func (s *scanner) fail() bool {
	s.bad = true
	return false
}

// literal consumes lit (the rest of true, false or null after its first
// byte has been seen).
func (s *scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.fail()
	}
	s.i += len(lit)
	return true
}

// null consumes a null if one is next.
func (s *scanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	return s.literal("null")
}

// objectStart consumes the { of an object.
func (s *scanner) objectStart() bool {
	if s.peek() != '{' || s.depth >= maxDepth {
		return s.fail()
	}
	s.i++
	s.depth++
	return true
}

// member reads the name of the object's member number n and its colon; at
// the object's end (or on bad input) it returns false, having consumed }.
func (s *scanner) member(n int) ([]byte, bool) {
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return nil, false
	}
	if n > 0 {
		if c != ',' {
			return nil, s.fail()
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		return nil, s.fail()
	}
	name, ok := s.quoted()
	if !ok || s.peek() != ':' {
		return nil, s.fail()
	}
	s.i++
	return name, true
}

// nameAt is where the name of the object's member number n begins when
// nothing but its comma (none for the first) stands before it, as our
// encoder writes objects; -1 otherwise. A generated decoder compares the
// name it expects there, and reads the member with member when it finds
// another name or anything else: spaces, the object's end, bad input.
func (s *scanner) nameAt(n int) int {
	i := s.i
	if n > 0 {
		if i >= len(s.b) || s.b[i] != ',' {
			return -1
		}
		i++
	}
	return i
}

// roomFor returns a with room for as many elements as its first one
// suggests the array holds: the bytes left after it divided by its own
// (with a comma), but never more than twice the bytes left take in memory
// as elements of size bytes, so that a hostile array of tiny first
// elements cannot make a large allocation. The estimate may run past the
// array's end into what follows it: a few elements too many.
func roomFor[T any](a []T, used, left, size int) []T {
	if used <= 0 || left <= 0 {
		return a
	}
	n := left/(used+1) + 1
	if size > 0 {
		n = min(n, 2*left/size+1)
	}
	return slices.Grow(a, n)
}

// arrayStart consumes the [ of an array.
func (s *scanner) arrayStart() bool {
	if s.peek() != '[' || s.depth >= maxDepth {
		return s.fail()
	}
	s.i++
	s.depth++
	return true
}

// elem reports whether the array has an element number n, consuming the
// comma before it; at the array's end (or on bad input) it returns false,
// having consumed ].
func (s *scanner) elem(n int) bool {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false
	}
	if n > 0 {
		if c != ',' {
			return s.fail()
		}
		s.i++
	}
	return !s.bad
}

// Strings are looked at eight bytes at a time, as a little-endian word x:
// these flag the high bit of each byte of x that is a quote or a backslash
// (quoteOrBackslash), or that or a control character or a non-ASCII byte
// (special). A borrow may also flag bytes above a flagged one, never below:
// the lowest flagged byte is exact.
const ones, highs = 0x0101010101010101, 0x8080808080808080

func quoteOrBackslash(x uint64) uint64 {
	q, bs := x^('"'*ones), x^('\\'*ones)
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

func special(x uint64) uint64 {
	return quoteOrBackslash(x) | ((x-0x20*ones)&^x|x)&highs
}

// quoted reads a string whose opening quote is next and returns its
// contents. Strings with escapes, control characters or invalid UTF-8 are
// declined: json decodes (or refuses) those.
func (s *scanner) quoted() ([]byte, bool) {
	start := s.i + 1
	i := start
	// Most strings end at a quote found as the lowest special byte of a
	// word; the loop below takes the rest.
	for i+8 <= len(s.b) {
		m := special(binary.LittleEndian.Uint64(s.b[i:]))
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if s.b[i] != '"' {
			break
		}
		s.i = i + 1
		return s.b[start:i], true
	}
	ascii := true
	for ; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			text := s.b[start:i]
			if !ascii && !utf8.Valid(text) {
				return nil, s.fail()
			}
			s.i = i + 1
			return text, true
		case c == '\\' || c < 0x20:
			return nil, s.fail()
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, s.fail()
}

// string reads a string or null (the empty string, as json gives).
func (s *scanner) string() string {
	switch s.peek() {
	case '"':
		if text, ok := s.quoted(); ok {
			if s.alias && len(text) > 0 {
				return unsafe.String(&text[0], len(text))
			}
			return intern(s.words, text)
		}
	case 'n':
		s.literal("null")
	default:
		s.fail()
	}
	return ""
}

// intern returns the text as a string, without allocating for the words
// that most messages carry: the protocol version, message types, method
// names, parities, statuses and roles. The table is looked up by a hash of
// the length and the first, middle and last bytes (which no two of today's
// 52 words share): one comparison, no map. Other text is taken from words
// (nil: allocated).
func intern(words *Words, text []byte) string {
	if len(text) > 0 {
		if w := interned[internSlot(text)]; w == string(text) {
			return w
		}
	}
	return words.of(text)
}

// internSize is the number of slots of the intern table.
const internSize = 256

func internSlot[T string | []byte](w T) int {
	return int((uint(len(w)) + uint(w[0])*31 + uint(w[len(w)-1])*3 + uint(w[len(w)/2])) % internSize)
}

// interned is the read-only table of intern. Of two words with the same
// slot the first keeps it; the other is allocated as any string is.
var interned = func() (t [internSize]string) {
	words := []string{Version, GameEvenOdd, Even, Odd, StatusAccepted, StatusRejected, StatusDuplicate,
		ResultWin, ResultDraw, ResultLoss, ResultTechnicalLoss, PlayerA, PlayerB, JSONRPCVersion}
	for _, mt := range typeOrder {
		words = append(words, string(mt))
	}
	for method := range methodTypes {
		words = append(words, method)
	}
	slices.Sort(words[14:]) // map order must not decide who keeps a slot
	for _, w := range words {
		if i := internSlot(w); t[i] == "" {
			t[i] = w
		}
	}
	return t
}()

// number reads a number's text and reports whether it is an integer (no
// fraction, no exponent).
func (s *scanner) number() ([]byte, bool) {
	start, i := s.i, s.i
	digits := func() int {
		n := 0
		for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s.b) && s.b[i] == '-' {
		i++
	}
	switch {
	case i < len(s.b) && s.b[i] == '0':
		i++
	case digits() == 0:
		s.fail()
		return nil, false
	}
	integer := true
	if i < len(s.b) && s.b[i] == '.' {
		i++
		integer = false
		if digits() == 0 {
			s.fail()
			return nil, false
		}
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		integer = false
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if digits() == 0 {
			s.fail()
			return nil, false
		}
	}
	s.i = i
	return s.b[start:i], integer
}

// int reads an integer or null (0); a fraction, an exponent or a value out
// of range is declined, as json refuses them.
func (s *scanner) int() int64 {
	switch c := s.peek(); {
	case c == 'n':
		s.literal("null")
		return 0
	case c == '-' || (c >= '0' && c <= '9'):
		text, integer := s.number()
		if !integer {
			s.fail()
			return 0
		}
		if len(text) < 19 { // at most 18 digits: no overflow
			var n int64
			for _, d := range bytes.TrimPrefix(text, []byte("-")) {
				n = n*10 + int64(d-'0')
			}
			if text[0] == '-' {
				n = -n
			}
			return n
		}
		n, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			s.fail()
		}
		return n
	}
	s.fail()
	return 0
}

// goInt is int for a Go int: a value out of its range (beyond 32 bits on
// 32-bit platforms) is declined, as json refuses it.
func (s *scanner) goInt() int {
	n := s.int()
	if int64(int(n)) != n {
		s.fail()
		return 0
	}
	return int(n)
}

// uint reads an unsigned integer or null (0).
func (s *scanner) uint() uint64 {
	switch c := s.peek(); {
	case c == 'n':
		s.literal("null")
		return 0
	case c >= '0' && c <= '9':
		text, integer := s.number()
		n, err := strconv.ParseUint(string(text), 10, 64)
		if !integer || err != nil {
			s.fail()
		}
		return n
	}
	s.fail()
	return 0
}

// bool reads true, false or null (false).
func (s *scanner) bool() bool {
	switch s.peek() {
	case 't':
		return s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.fail()
	}
	return false
}

// stringMap reads an object of strings (null values are empty strings) or
// null (nil), as json decodes into a nil map[string]string.
func (s *scanner) stringMap() map[string]string {
	if s.null() {
		return nil
	}
	return readMap(s, (*scanner).string)
}

// anyMap reads an object as json decodes it into a nil map[string]any, or
// null (nil).
func (s *scanner) anyMap() map[string]any {
	if s.null() {
		return nil
	}
	return readMap(s, (*scanner).any)
}

// readMap reads an object into a new map, each value read by value; a
// name given twice is declined, as json refuses it.
//
// It reads with a copy of s: what a function value is given escapes, and
// s, on its caller's stack, must not, or every scanner that may come here
// would be allocated, even for input without a map.
func readMap[V any](s *scanner, value func(*scanner) V) map[string]V {
	t := *s
	m := readMapOn(&t, value)
	*s = t
	return m
}

func readMapOn[V any](s *scanner, value func(*scanner) V) map[string]V {
	if !s.objectStart() {
		return nil
	}
	m := make(map[string]V)
	for n := 0; ; n++ {
		name, ok := s.member(n)
		if !ok {
			return m
		}
		k := string(name)
		if _, dup := m[k]; dup {
			s.fail()
			return nil
		}
		m[k] = value(s)
		if s.bad {
			return nil
		}
	}
}

// any reads a value as json decodes it into an empty interface: objects
// are map[string]any, arrays []any, numbers float64.
func (s *scanner) any() any {
	switch c := s.peek(); {
	case c == '{':
		if m := readMap(s, (*scanner).any); m != nil {
			return m
		}
		return nil
	case c == '[':
		if !s.arrayStart() {
			return nil
		}
		a := []any{}
		for n := 0; s.elem(n); n++ {
			a = append(a, s.any())
			if s.bad {
				return nil
			}
		}
		return a
	case c == '"':
		if text, ok := s.quoted(); ok {
			return intern(s.words, text)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		text, _ := s.number()
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			s.fail()
		}
		return f
	case c == 't':
		return s.literal("true")
	case c == 'f':
		s.literal("false")
		return false
	case c == 'n':
		s.literal("null")
		return nil
	}
	s.fail()
	return nil
}

// skip reads a value and drops it: json checks all of the input, so the
// scanner does too, duplicate names included unless it is lenient.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '{':
		if !s.objectStart() {
			return false
		}
		var seen names
		for n := 0; ; n++ {
			name, ok := s.member(n)
			if !ok {
				return !s.bad
			}
			if !s.lenient && !seen.add(name) {
				return s.fail()
			}
			if !s.skip() {
				return false
			}
		}
	case c == '[':
		if !s.arrayStart() {
			return false
		}
		for n := 0; s.elem(n); n++ {
			if !s.skip() {
				return false
			}
		}
		return !s.bad
	case c == '"':
		_, ok := s.quoted()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		_, _ = s.number()
		return !s.bad
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail()
}

// raw reads a value and returns its bytes.
func (s *scanner) raw() []byte {
	s.peek()
	from := s.i
	if !s.skip() {
		return nil
	}
	return s.b[from:s.i]
}

// names are the member names of one object that the decoder has no field
// for, kept to refuse a name given twice; objects with more of them than
// fit are declined.
type names struct {
	n    int
	seen [8][]byte
}

func (u *names) add(name []byte) bool {
	for _, s := range u.seen[:u.n] {
		if bytes.Equal(s, name) {
			return false
		}
	}
	if u.n == len(u.seen) {
		return false
	}
	u.seen[u.n] = name
	u.n++
	return true
}

// readMembersFast is readMembers on the scanner: it reads the object obj,
// putting the raw value of each member that index numbers in that element
// of values (aliasing obj) and checking the rest, with duplicate names
// allowed inside the values as json allows them there. The member numbered
// skim is only skimmed (see skimmed), and must come once: its caller checks
// it (-1: none). It reports false, having filled in some values perhaps, for
// what it leaves to readMembers: bad input, escapes, and with once a member
// given twice.
//
// With decoded not nil, obj is a request (see requestMember) and skim its
// params: params that come after a method naming a message type are decoded
// as that message where they stand, into *decoded, when the generated
// decoder takes them, and skimmed otherwise; their tables are read as r
// says (kept.go).
func readMembersFast(obj []byte, once bool, index func(name []byte) int, values []jsontext.Value, skim int, decoded *Message, r Reading) bool {
	s := r.scanner(obj)
	return s.members(once, index, values, skim, decoded) && s.end()
}

// members is readMembersFast on the object next in s, which it moves past.
func (s *scanner) members(once bool, index func(name []byte) int, values []jsontext.Value, skim int, decoded *Message) bool {
	if !s.objectStart() {
		return false
	}
	for n := 0; ; n++ {
		name, ok := s.member(n)
		if !ok {
			break
		}
		i := index(name)
		if i < 0 {
			if !s.skip() {
				return false
			}
			continue
		}
		if (once || i == skim) && values[i] != nil {
			return false // given twice: a skimmed value must be the one used
		}
		if i == skim {
			if decoded == nil || !s.paramsAt(values, decoded) {
				values[i] = s.skimmed()
			}
		} else {
			values[i] = s.raw()
		}
		if s.bad {
			return false
		}
	}
	return !s.bad
}

// paramsAt decodes a request's params, next in s, as the message its
// method (m[1], already read) names, with the strictness of decodeGenerated
// (duplicate names refused): the message goes into *decoded and its bytes
// into m[2]. Otherwise it reports false and leaves s as it was.
func (s *scanner) paramsAt(m []jsontext.Value, decoded *Message) bool {
	if s.peek() != '{' {
		return false
	}
	msg := messageOf(m[1])
	saved := *s
	s.lenient = false
	if msg != nil && decodeAtGenerated(s, msg) && !s.bad {
		s.lenient = saved.lenient
		m[2], *decoded = s.b[saved.i:s.i], msg
		return true
	}
	*s = saved
	return false
}

// skimmed moves past the value that comes next and returns its bytes
// without checking them: it finds where a valid value would end (strings
// and brackets followed, nothing else looked at). Whoever uses the bytes
// decodes or checks them in full (checkLenient); if they are not valid,
// the boundary may be wrong, but the check then fails and the whole input
// goes to json.
func (s *scanner) skimmed() []byte {
	if s.peek() == 0 {
		s.fail()
		return nil
	}
	from := s.i
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if !s.skimString() {
				return nil
			}
			if depth == 0 {
				return s.b[from:s.i]
			}
			continue
		case '{', '[':
			if depth++; depth > s.nest {
				s.nest = depth
			}
		case '}', ']':
			if depth == 0 {
				return s.b[from:s.i] // the end of a scalar
			}
			if depth--; depth == 0 {
				s.i++
				return s.b[from:s.i]
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.b[from:s.i]
			}
		}
		s.i++
	}
	if depth != 0 {
		s.fail()
		return nil
	}
	return s.b[from:s.i]
}

// skimObjects returns the elements of the array body, found by skimming
// (see skimmed), without checking them: whoever uses one decodes it in
// full. ok is false when body is not an array of at most max values that
// all begin as objects, with only commas and whitespace between them, none
// nested deeper than the scanner follows (json's limit counts the array
// too, so an element alone could pass where the batch does not).
func skimObjects(body []byte, max int) (elems []jsontext.Value, ok bool) {
	s := scanner{b: body}
	if !s.arrayStart() {
		return nil, false
	}
	for n := 0; s.elem(n); n++ {
		if n == max || s.peek() != '{' {
			return nil, false
		}
		v := s.skimmed()
		if s.bad || s.nest >= maxDepth {
			return nil, false
		}
		elems = append(elems, v)
	}
	return elems, s.end()
}

// skimString moves past the string whose quote is next, to its closing
// quote: the first one not escaped by a backslash, found eight bytes at a
// time as quoted finds its end.
func (s *scanner) skimString() bool {
	i := s.i + 1
	for i < len(s.b) {
		var c byte
		if i+8 <= len(s.b) {
			m := quoteOrBackslash(binary.LittleEndian.Uint64(s.b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			c = s.b[i]
		} else if c = s.b[i]; c != '"' && c != '\\' {
			i++
			continue
		}
		if c == '"' {
			s.i = i + 1
			return true
		}
		i += 2 // a backslash and the byte it escapes
	}
	return s.fail()
}

// checkLenient reports whether v is exactly one valid JSON value, duplicate
// names allowed, as a request's params or a response's result must be.
func checkLenient(v []byte) bool {
	s := scanner{b: v, lenient: true}
	return s.skip() && s.end()
}

// plainString returns the text of the raw string value v when it has no
// escapes: v comes from the scanner or json, so it is valid JSON and then
// its bytes are the string.
func plainString(v jsontext.Value) (string, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	return intern(nil, v[1:len(v)-1]), true
}

package protocol

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldError is one reason a message is invalid.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
	code   Code
}

func (f FieldError) String() string { return f.Field + ": " + f.Reason }

// Error is a league.v2 error: an E-code, a one-line detail, and for
// validation errors the field-level reasons.
type Error struct {
	Code    Code
	Detail  string
	Fields  []FieldError
	Context map[string]any
}

// Errorf returns an *Error with the given code and formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return string(e.Code) + " " + e.Code.Name()
	}
	return string(e.Code) + " " + e.Code.Name() + ": " + e.Detail
}

// CodeOf returns the league error code carried by err, or "" when err
// carries none.
func CodeOf(err error) Code {
	if c, ok := errors.AsType[interface {
		error
		LeagueCode() Code
	}](err); ok {
		return c.LeagueCode()
	}
	return ""
}

// LeagueCode makes *Error report its code to CodeOf.
func (e *Error) LeagueCode() Code { return e.Code }

// validator collects the problems of one message.
type validator struct {
	fields []FieldError
}

func (v *validator) add(code Code, field, reason string) {
	v.fields = append(v.fields, FieldError{Field: field, Reason: reason, code: code})
}

func (v *validator) missing(field string) {
	v.add(ErrInvalidMessageFormat, field, "is required")
}

func (v *validator) requireString(field, s string) {
	if strings.TrimSpace(s) == "" {
		v.missing(field)
	}
}

// requireID checks an identifier: required, and of the id alphabet.
func (v *validator) requireID(field, s string) {
	if s == "" {
		v.missing(field)
		return
	}
	v.optionalID(field, s)
}

func (v *validator) optionalID(field, s string) {
	if s != "" && !validID(s) {
		v.add(ErrInvalidMessageFormat, field, "must be 1–64 letters, digits, '_', '-' or '.'")
	}
}

func (v *validator) roundID(field string, n int) {
	if n < 1 {
		v.add(ErrInvalidMessageFormat, field, "is required and must be at least 1")
	}
}

func (v *validator) nonNegative(field string, n int) {
	if n < 0 {
		v.add(ErrInvalidMessageFormat, field, "must not be negative")
	}
}

func (v *validator) gameType(field, s string) {
	if s != "" && s != GameEvenOdd {
		v.add(ErrInvalidMessageFormat, field, `must be "even_odd"`)
	}
}

// MaxDisplayName is the longest display_name a registration may carry, in
// bytes: a manager keeps it and sends it to every player in every round's
// standings, so a name of a megabyte would be a megabyte per row.
const MaxDisplayName = 128

// displayName checks a registration's display_name: required, and at most
// MaxDisplayName bytes.
func (v *validator) displayName(field, s string) {
	v.requireString(field, s)
	if len(s) > MaxDisplayName {
		v.add(ErrInvalidMessageFormat, field, fmt.Sprintf("must be at most %d bytes, got %d", MaxDisplayName, len(s)))
	}
	if !utf8.ValidString(s) {
		// A decoder refuses it first; a name handed over in process must
		// be refused too, or it is kept and can be sent to no one.
		v.add(ErrInvalidMessageFormat, field, "is not valid UTF-8")
	}
}

func (v *validator) gameTypes(field string, ts []string) {
	if len(ts) == 0 {
		v.add(ErrInvalidMessageFormat, field, "is required and must list at least one game type")
	}
}

func (v *validator) endpoint(field, s string, required bool) {
	if s == "" {
		if required {
			v.missing(field)
		}
		return
	}
	if err := CheckEndpoint(s); err != nil {
		v.add(ErrInvalidEndpoint, field, err.Error())
	}
}

func (v *validator) timestamp(field, s string) {
	if s == "" {
		return
	}
	if _, err := ParseTimestamp(s); err != nil {
		v.add(ErrInvalidMessageFormat, field, err.Error())
	}
}

func (v *validator) errorCode(field string, c Code, required bool) {
	if c == "" {
		if required {
			v.missing(field)
		}
		return
	}
	// Codes from other implementations are information only (E000 appears
	// in protocol-v2.md), so any E-number is accepted.
	if len(c) < 2 || c[0] != 'E' || strings.Trim(string(c[1:]), "0123456789") != "" {
		v.add(ErrInvalidMessageFormat, field, `must be an error code such as "E001"`)
	}
}

func (v *validator) registrationStatus(status, idField, id string) {
	switch status {
	case StatusAccepted:
		v.requireID(idField, id)
	case StatusRejected:
	case "":
		v.missing("status")
	default:
		v.add(ErrInvalidMessageFormat, "status", `must be "ACCEPTED" or "REJECTED"`)
	}
}

func (v *validator) sideStatus(field, s string) {
	switch s {
	case "", ResultWin, ResultLoss, ResultDraw, ResultTechnicalLoss:
	default:
		v.add(ErrInvalidMessageFormat, field, `must be "WIN", "LOSS", "DRAW" or "TECHNICAL_LOSS"`)
	}
}

func (v *validator) standings(field string, rows []StandingRow) {
	for i := range rows {
		r := &rows[i]
		if r.valid() {
			continue // the row's path is spelled only for a reason
		}
		p := field + "[" + strconv.Itoa(i) + "]"
		v.requireID(p+".player_id", r.PlayerID)
		if r.negative() {
			v.add(ErrInvalidMessageFormat, p, "counts must not be negative")
		}
	}
}

// err turns the collected problems into an *Error, or nil. The code is the
// most fundamental problem's: a wrong protocol (E011) before a malformed
// message (E002) before a bad endpoint (E018) before an invalid move (E010).
func (v *validator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	code := v.fields[0].code
	for _, f := range v.fields[1:] {
		if codeRank(f.code) < codeRank(code) {
			code = f.code
		}
	}
	detail := v.fields[0].String()
	if n := len(v.fields); n > 1 {
		detail += fmt.Sprintf(" (and %d more)", n-1)
	}
	return &Error{Code: code, Detail: detail, Fields: v.fields}
}

func codeRank(c Code) int {
	switch c {
	case ErrProtocolMismatch:
		return 0
	case ErrInvalidMessageFormat:
		return 1
	case ErrInvalidEndpoint:
		return 2
	}
	return 3
}

// Validate checks a message received as a plain JSON-RPC call: the envelope
// must carry protocol "league.v2" (else E011) and a sender; every field
// present must be well formed; and the body must hold its required fields
// (E002), a valid parity choice (E010) and valid endpoints (E018).
func Validate(m Message) error {
	if b := m.Env().of; b != nil {
		return b.validated()
	}
	return validate(m, true)
}

// ValidateBody checks a message whose envelope is optional: MCP tools/call
// arguments and the body-only examples of spec/message-structures.md. The
// envelope fields that are present are checked all the same.
func ValidateBody(m Message) error { return validate(m, false) }

func validate(m Message, envelopeRequired bool) error {
	var v validator
	e := m.Env()
	v.envelope(e, envelopeRequired)
	if e.MessageType != "" && Canonical(e.MessageType) != m.Type() {
		v.add(ErrInvalidMessageFormat, "message_type", fmt.Sprintf("must be %q, got %q", m.Type(), clip(string(e.MessageType))))
	}
	if s, err := ParseSender(e.Sender); err == nil && !roleAllowed(m.Type(), s.Role) {
		v.add(ErrInvalidMessageFormat, "sender", fmt.Sprintf("a %s cannot send %s", s.Role, m.Type()))
	}
	checkMessage(m, &v)
	return v.err()
}

// checkMessage runs m's own checks.
func checkMessage(m Message, v *validator) { m.check(v) }

// envelope checks the envelope fields every message shares: protocol and
// sender when required, and every field that is present.
func (v *validator) envelope(e *Envelope, required bool) {
	switch {
	case e.Protocol == Version:
	case e.Protocol == "":
		if required {
			v.add(ErrProtocolMismatch, "protocol", `is required and must be "league.v2"`)
		}
	default:
		v.add(ErrProtocolMismatch, "protocol", fmt.Sprintf("must be %q, got %q", Version, clip(e.Protocol)))
	}
	if e.Sender == "" {
		if required {
			v.missing("sender")
		}
	} else if _, err := ParseSender(e.Sender); err != nil {
		v.add(ErrInvalidMessageFormat, "sender", err.Error())
	}
	v.timestamp("timestamp", e.Timestamp)
}

func roleAllowed(t MessageType, r Role) bool {
	info, _ := infoOf(t)
	if info == nil {
		return false
	}
	for _, ok := range info.senders {
		if ok == r {
			return true
		}
	}
	return false
}

// CheckParity reports why s is not exactly "even" or "odd".
func CheckParity(s string) error {
	switch s {
	case Even, Odd:
		return nil
	case "":
		return errors.New(`is required and must be exactly "even" or "odd"`)
	}
	return fmt.Errorf(`must be exactly "even" or "odd", got %q`, clip(s))
}

// Sender is a parsed sender field.
type Sender struct {
	Role Role
	ID   string // empty for a bare "league_manager"
}

func (s Sender) String() string {
	if s.ID == "" {
		return string(s.Role)
	}
	return string(s.Role) + ":" + s.ID
}

// ParseSender parses "type:id". A bare "league_manager" is accepted, as the
// spec's own examples send it.
func ParseSender(s string) (Sender, error) {
	role, id, found := strings.Cut(s, ":")
	switch Role(role) {
	case RoleLeagueManager, RoleReferee, RolePlayer:
	default:
		return Sender{}, fmt.Errorf(`must be "league_manager", "referee" or "player" followed by ":" and an id, got %q`, clip(s))
	}
	if !found {
		if Role(role) == RoleLeagueManager {
			return Sender{Role: RoleLeagueManager}, nil
		}
		return Sender{}, fmt.Errorf(`must be "%s:<id>", got %q`, role, clip(s))
	}
	if !validID(id) {
		return Sender{}, fmt.Errorf("id must be 1–64 letters, digits, '_', '-' or '.', got %q", clip(id))
	}
	return Sender{Role: Role(role), ID: id}, nil
}

func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// TimestampLayout is the form every timestamp is sent in.
const TimestampLayout = "2006-01-02T15:04:05Z"

// FormatTimestamp renders t in UTC as YYYY-MM-DDTHH:MM:SSZ.
func FormatTimestamp(t time.Time) string {
	var b [len(TimestampLayout)]byte
	return string(t.UTC().AppendFormat(b[:0], TimestampLayout))
}

// ParseTimestamp parses an ISO-8601 timestamp that must be in UTC: "Z" or
// "+00:00", with or without fractional seconds.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) < len("2006-01-02T15:04:05Z") || s[10] != 'T' {
		return time.Time{}, fmt.Errorf("must be an ISO-8601 UTC timestamp such as 2025-01-15T10:30:00Z, got %q", clip(s))
	}
	if _, off := t.Zone(); off != 0 || strings.HasSuffix(s, "-00:00") {
		return time.Time{}, fmt.Errorf(`must be in UTC ("Z" or "+00:00"), got %q`, clip(s))
	}
	return t.UTC(), nil
}

// MaxEndpoint is the longest contact endpoint, in bytes: a manager keeps
// every agent's and sends three in every START_MATCH. 2,048 is more than
// any loopback or LAN URL needs, and what many HTTP tools allow.
const MaxEndpoint = 2048

// CheckEndpoint reports why s cannot be an agent's contact endpoint: it must
// be an absolute http or https URL with a host, or a mem:// name, of at
// most MaxEndpoint bytes.
func CheckEndpoint(s string) error {
	if len(s) > MaxEndpoint {
		return fmt.Errorf("must be at most %d bytes, got %d", MaxEndpoint, len(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("must be a URL such as http://host:port/mcp, got %q", clip(s))
	}
	switch u.Scheme {
	case "http", "https", "mem":
	default:
		return fmt.Errorf("must be an http:// or https:// URL, got %q", clip(s))
	}
	if u.Host == "" || u.User != nil {
		return fmt.Errorf("must name a host, got %q", clip(s))
	}
	return nil
}

// Clip shortens hostile input, on a UTF-8 boundary, before it is quoted
// back in an error or a log line.
func Clip(s string) string { return clip(s) }

func clip(s string) string { return ClipTo(s, 64) }

// ClipTo is s cut to at most max bytes at a character's start, with "…"
// after it when it was cut.
func ClipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ValidateEnvelope checks the envelope fields that are present in the
// params of a tool call that is not a league message (ping, start_league,
// get_standings, …): nothing is required, but a wrong protocol is still
// E011 and a malformed sender or timestamp E002.
func ValidateEnvelope(e *Envelope) error {
	var v validator
	v.envelope(e, false)
	return v.err()
}

// Origin makes the envelopes of the messages one agent sends. Set Role.
type Origin struct {
	Role Role
}

// Envelope is the envelope of a message of type t that the agent id sends
// at now.
func (o *Origin) Envelope(id string, t MessageType, now time.Time, conversation, leagueID, token string) Envelope {
	return Envelope{
		Protocol:       Version,
		MessageType:    t,
		Sender:         string(o.Role) + ":" + id,
		Timestamp:      FormatTimestamp(now),
		ConversationID: conversation,
		LeagueID:       leagueID,
		AuthToken:      token,
	}
}

// NameByEndpoint is the display name of an agent that was given neither a
// name nor an id: role and its endpoint's host:port ("Player
// 127.0.0.1:8101"), or role alone when the endpoint has none.
func NameByEndpoint(role, endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return role
	}
	return role + " " + u.Host
}

package protocol

// Code is a league.v2 error code, E001 to E018 (spec/error-codes.md).
// Codes received from other implementations are kept as they came, even when
// they are not in the table: they are information, not instructions.
type Code string

// The 18 error codes of spec/error-codes.md §2.
const (
	ErrTimeout               Code = "E001"
	ErrInvalidMessageFormat  Code = "E002"
	ErrAuthenticationFailed  Code = "E003"
	ErrAgentNotRegistered    Code = "E004"
	ErrInvalidGameState      Code = "E005"
	ErrPlayerNotAvailable    Code = "E006"
	ErrMatchNotFound         Code = "E007"
	ErrLeagueNotFound        Code = "E008"
	ErrRoundNotActive        Code = "E009"
	ErrInvalidMove           Code = "E010"
	ErrProtocolMismatch      Code = "E011"
	ErrAuthTokenInvalid      Code = "E012"
	ErrConversationMismatch  Code = "E013"
	ErrRateLimitExceeded     Code = "E014"
	ErrInternal              Code = "E015"
	ErrServiceUnavailable    Code = "E016"
	ErrDuplicateRegistration Code = "E017"
	ErrInvalidEndpoint       Code = "E018"
)

// Severity of an error code as the spec grades it.
type Severity string

// Severities used by spec/error-codes.md.
const (
	SeverityLow    Severity = "Low"
	SeverityMedium Severity = "Medium"
	SeverityHigh   Severity = "High"
)

// CodeInfo is one row of the error table.
type CodeInfo struct {
	Code      Code
	Name      string
	Severity  Severity
	Retryable bool
	Category  string
	// JSONRPC is the JSON-RPC error code used when this error is the answer
	// to a request. Where spec/error-codes.md §7.3 names one it is used;
	// for the others it is -32000-N (N the code's number), inside the
	// JSON-RPC range reserved for implementation-defined server errors.
	JSONRPC int
	// ExitCode is the CLI exit code of spec/error-codes.md §3.
	ExitCode int
}

// codeTable is read-only data: spec/error-codes.md §2, §3 and §7.3 as Go.
var codeTable = [...]CodeInfo{
	{ErrTimeout, "TIMEOUT_ERROR", SeverityHigh, true, "Timeout", -32000, 0},
	{ErrInvalidMessageFormat, "INVALID_MESSAGE_FORMAT", SeverityMedium, false, "Validation", -32002, 1},
	{ErrAuthenticationFailed, "AUTHENTICATION_FAILED", SeverityHigh, false, "Auth", -32001, 3},
	{ErrAgentNotRegistered, "AGENT_NOT_REGISTERED", SeverityHigh, false, "Registration", -32004, 3},
	{ErrInvalidGameState, "INVALID_GAME_STATE", SeverityMedium, true, "Game State", -32005, 4},
	{ErrPlayerNotAvailable, "PLAYER_NOT_AVAILABLE", SeverityMedium, true, "Availability", -32006, 4},
	{ErrMatchNotFound, "MATCH_NOT_FOUND", SeverityMedium, false, "Not Found", -32007, 1},
	{ErrLeagueNotFound, "LEAGUE_NOT_FOUND", SeverityHigh, false, "Configuration", -32008, 1},
	{ErrRoundNotActive, "ROUND_NOT_ACTIVE", SeverityMedium, true, "Game State", -32009, 4},
	{ErrInvalidMove, "INVALID_MOVE", SeverityLow, false, "Validation", -32002, 0},
	{ErrProtocolMismatch, "PROTOCOL_VERSION_MISMATCH", SeverityHigh, false, "Configuration", -32600, 1},
	{ErrAuthTokenInvalid, "AUTH_TOKEN_INVALID", SeverityHigh, false, "Auth", -32001, 3},
	{ErrConversationMismatch, "CONVERSATION_ID_MISMATCH", SeverityMedium, false, "Validation", -32013, 4},
	{ErrRateLimitExceeded, "RATE_LIMIT_EXCEEDED", SeverityMedium, true, "Rate Limit", -32014, 4},
	{ErrInternal, "INTERNAL_SERVER_ERROR", SeverityHigh, true, "Server Error", -32603, 4},
	{ErrServiceUnavailable, "SERVICE_UNAVAILABLE", SeverityHigh, true, "Network", -32016, 2},
	{ErrDuplicateRegistration, "DUPLICATE_REGISTRATION", SeverityMedium, false, "Registration", -32017, 3},
	{ErrInvalidEndpoint, "INVALID_ENDPOINT", SeverityHigh, false, "Network", -32018, 2},
}

// Codes returns the 18 rows of the error table in order.
func Codes() []CodeInfo {
	out := make([]CodeInfo, len(codeTable))
	copy(out, codeTable[:])
	return out
}

// Info returns the table row of c; ok is false for a code not in the table.
func (c Code) Info() (CodeInfo, bool) {
	if len(c) != 4 || c[0] != 'E' {
		return CodeInfo{}, false
	}
	n := 0
	for i := 1; i < 4; i++ {
		d := c[i]
		if d < '0' || d > '9' {
			return CodeInfo{}, false
		}
		n = n*10 + int(d-'0')
	}
	if n < 1 || n > len(codeTable) {
		return CodeInfo{}, false
	}
	return codeTable[n-1], true
}

// CodeNamed is the code whose spec name is name (PROTOCOL_VERSION_MISMATCH
// is E011); ok is false for a name that is none of ours.
func CodeNamed(name string) (Code, bool) {
	for _, info := range codeTable {
		if info.Name == name {
			return info.Code, true
		}
	}
	return "", false
}

// PeerCode is how this implementation reads an error code a peer sent with
// the name it gave it: other implementations do not number their errors
// alike (one's E018 PROTOCOL_VERSION_MISMATCH is our E011), so a name that
// is one of ours decides, and the number only where the name is none of
// ours (or absent).
func PeerCode(code Code, name string) Code {
	if c, ok := CodeNamed(name); ok {
		return c
	}
	return code
}

// Known reports whether c is one of E001–E018.
func (c Code) Known() bool { _, ok := c.Info(); return ok }

// Name is the spec's name of the code (TIMEOUT_ERROR, …), or "UNKNOWN_ERROR".
func (c Code) Name() string {
	if i, ok := c.Info(); ok {
		return i.Name
	}
	return "UNKNOWN_ERROR"
}

// Retryable reports whether the spec allows a retry after this error.
// Unknown codes are not retried.
func (c Code) Retryable() bool { i, ok := c.Info(); return ok && i.Retryable }

// JSONRPC is the JSON-RPC error code for c; unknown codes map to -32603.
func (c Code) JSONRPC() int {
	if i, ok := c.Info(); ok {
		return i.JSONRPC
	}
	return CodeInternalError
}

// ExitCode is the CLI exit code for c; unknown codes map to 4 (runtime).
func (c Code) ExitCode() int {
	if i, ok := c.Info(); ok {
		return i.ExitCode
	}
	return 4
}

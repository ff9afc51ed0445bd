package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification §5.1).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// JSONRPCVersion is the only jsonrpc value accepted and sent.
const JSONRPCVersion = "2.0"

// MaxBatch is the most requests a batch may hold. JSON-RPC sets no limit;
// without one, a body of a million one-byte elements would be answered
// with a million error objects.
const MaxBatch = 100

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

func (e *RPCError) Error() string {
	s := "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message
	sent, name := e.sentCode()
	switch c := PeerCode(sent, name); {
	case c == "":
	case c != sent:
		s += " [" + string(sent) + ", read as " + string(c) + " " + c.Name() + "]"
	default:
		s += " [" + string(c) + "]"
	}
	return s
}

// LeagueCode is the E-code of the error, as this implementation reads it:
// data.error_code, or the code data.error_description names where it
// names one of ours (PeerCode); "" when there is neither.
func (e *RPCError) LeagueCode() Code {
	return PeerCode(e.sentCode())
}

// sentCode is the code and name the error's data carries, as they came.
func (e *RPCError) sentCode() (Code, string) {
	if len(e.Data) == 0 || e.Data.Kind() != '{' {
		return "", ""
	}
	var d struct {
		ErrorCode        Code   `json:"error_code"`
		ErrorDescription string `json:"error_description"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return "", ""
	}
	return d.ErrorCode, d.ErrorDescription
}

// ErrorData is the data member of the errors this implementation sends.
type ErrorData struct {
	ErrorCode        Code           `json:"error_code"`
	ErrorDescription string         `json:"error_description"`
	Retryable        bool           `json:"retryable"`
	ValidationErrors []FieldError   `json:"validation_errors,omitzero"`
	Context          map[string]any `json:"context,omitzero"`
}

// NewRPCError builds a JSON-RPC error object with a standard code and no
// league code.
func NewRPCError(code int, message string) *RPCError {
	return &RPCError{Code: code, Message: message}
}

// ToRPCError turns a handler's error into the JSON-RPC error object that
// answers it: an *RPCError the handler returned itself as it is; an *Error
// with the JSON-RPC code of its E-code, its detail and data.error_code; any
// other error that carries a league code (a failed call to a third agent)
// with that code and no detail, since its text may hold internals such as
// addresses; anything else as -32603 with E015. An *RPCError wrapped in
// another error is a third party's answer and is never relayed as it is.
func ToRPCError(err error) *RPCError {
	if r, ok := err.(*RPCError); ok {
		return r
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		code := CodeOf(err)
		if !code.Known() {
			code = ErrInternal
		}
		e = &Error{Code: code, Detail: strings.ToLower(strings.ReplaceAll(code.Name(), "_", " "))}
	}
	msg := e.Code.Name()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	d := ErrorData{
		ErrorCode:        e.Code,
		ErrorDescription: e.Code.Name(),
		Retryable:        e.Code.Retryable(),
		ValidationErrors: e.Fields,
		Context:          e.Context,
	}
	data, merr := json.Marshal(&d, json.Deterministic(true))
	if merr != nil {
		d.Context = nil
		data, _ = json.Marshal(&d, json.Deterministic(true))
	}
	return &RPCError{Code: e.Code.JSONRPC(), Message: msg, Data: data}
}

// Request is one JSON-RPC request. ID is nil for a notification and the
// literal null for a request whose id is null; otherwise it is the id's
// bytes exactly as they came, to be echoed unchanged.
type Request struct {
	ID     jsontext.Value
	Method string
	Params jsontext.Value
}

// IsNotification reports whether the request has no id and gets no reply.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Incoming is one element of a request body: a valid request, or, when Err
// is set, the error that answers it. An erroneous element is always
// answered, so its ID is the request's id when it could be read and the
// literal null otherwise, never nil.
type Incoming struct {
	Request
	Err *RPCError
}

func failed(e *RPCError) Incoming {
	return Incoming{Request: Request{ID: rawNull}, Err: e}
}

// wireRequest reads the members of a request object exactly as named:
// keys are case-sensitive, so {"METHOD":…} leaves Method empty.
type wireRequest struct {
	JSONRPC jsontext.Value
	Method  jsontext.Value
	Params  jsontext.Value
	ID      jsontext.Value
}

// duplicateMember is a request member given twice.
type duplicateMember string

func (d duplicateMember) Error() string { return fmt.Sprintf("duplicate member %q", string(d)) }

// UnmarshalJSONFrom reads the request object's members. It refuses a
// member of its own given twice; names inside params are left to the
// strict decoding of the message, so that they are tracked once, not
// twice (the decoder runs with duplicate names allowed).
func (w *wireRequest) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readMembers(dec, true, w.member)
}

// member is where the request member called name goes, or nil.
func (w *wireRequest) member(name []byte) *jsontext.Value {
	switch string(name) {
	case "jsonrpc":
		return &w.JSONRPC
	case "method":
		return &w.Method
	case "params":
		return &w.Params
	case "id":
		return &w.ID
	}
	return nil
}

// readMembers reads an object, putting the value of each member that
// field names a place for there and skipping the others. The values alias
// the decoder's input: decoded from a byte slice (json.Unmarshal), they are
// parts of it, valid as long as it is and unchanged. With once, a member
// given twice is a duplicateMember; without, the last one counts.
func readMembers(dec *jsontext.Decoder, once bool, field func(name []byte) *jsontext.Value) error {
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return errors.New("not an object")
	}
	for dec.PeekKind() != '}' {
		// The name as it came, quoted: unescaped only when it has escapes.
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name := []byte(raw[1 : len(raw)-1])
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			name = []byte(s)
		}
		dst := field(name)
		if dst == nil {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if once && *dst != nil {
			return duplicateMember(name)
		}
		if *dst, err = dec.ReadValue(); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

var rawNull = jsontext.Value("null")

// DecodeRequests parses a JSON-RPC request body: one request object or a
// batch. It never fails: a body that cannot be used yields one Incoming
// whose Err answers it. batch reports whether the body was an array, in
// which case the replies (if any) go back as an array.
func DecodeRequests(body []byte) (items []Incoming, batch bool) {
	body = trimJSONSpace(body)
	if len(body) == 0 {
		return []Incoming{failed(NewRPCError(CodeParseError, "Parse error: empty body"))}, false
	}
	switch body[0] {
	case '{':
		return []Incoming{decodeRequest(body)}, false
	case '[':
		return decodeBatch(body)
	}
	if jsontext.Value(body).IsValid() {
		return []Incoming{failed(NewRPCError(CodeInvalidRequest, "Invalid Request: a request must be an object or an array of objects"))}, false
	}
	return []Incoming{failed(NewRPCError(CodeParseError, "Parse error: not JSON"))}, false
}

// decodeBatch is DecodeRequests for a body that begins as an array: the
// whole array must be JSON before any element is served.
func decodeBatch(body []byte) (items []Incoming, batch bool) {
	var elems []jsontext.Value
	if err := json.Unmarshal(body, &elems, jsontext.AllowDuplicateNames(true)); err != nil {
		return []Incoming{failed(NewRPCError(CodeParseError, "Parse error: "+describeSyntax(err)))}, false
	}
	if len(elems) == 0 {
		return []Incoming{failed(NewRPCError(CodeInvalidRequest, "Invalid Request: empty batch"))}, false
	}
	if len(elems) > MaxBatch {
		return []Incoming{failed(NewRPCError(CodeInvalidRequest,
			"Invalid Request: a batch may hold at most "+strconv.Itoa(MaxBatch)+" requests"))}, false
	}
	items = make([]Incoming, len(elems))
	for i, e := range elems {
		if e.Kind() != '{' {
			items[i] = failed(NewRPCError(CodeInvalidRequest, "Invalid Request: a request must be an object"))
			continue
		}
		items[i] = decodeRequest(e)
	}
	return items, true
}

// decodeRequest reads one request object. Its params are checked as JSON
// here and decoded as a message by whoever serves the method.
func decodeRequest(obj []byte) Incoming {
	var w wireRequest
	if err := json.Unmarshal(obj, &w, jsontext.AllowDuplicateNames(true)); err != nil {
		if d, ok := errors.AsType[duplicateMember](err); ok {
			return failed(NewRPCError(CodeInvalidRequest, "Invalid Request: "+d.Error()))
		}
		return failed(NewRPCError(CodeParseError, "Parse error: "+describeSyntax(err)))
	}
	return w.incoming()
}

// incoming checks the members of a parsed request object. (A member given
// twice makes the request ambiguous; a name given twice inside params is
// the params' problem, answered with the request's id once the method has
// seen them.)
func (w *wireRequest) incoming() Incoming {
	in := Incoming{}
	switch w.ID.Kind() {
	case 0:
	case '"', '0', 'n':
		in.ID = w.ID
	default:
		return failed(NewRPCError(CodeInvalidRequest, "Invalid Request: id must be a string, a number or null"))
	}
	if v, ok := unquote(w.JSONRPC); !ok || v != JSONRPCVersion {
		in.Err = NewRPCError(CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
		in.ID = orNull(in.ID)
		return in
	}
	if m, ok := unquote(w.Method); ok {
		in.Method = m
	} else {
		in.Err = NewRPCError(CodeInvalidRequest, "Invalid Request: method must be a string")
		in.ID = orNull(in.ID)
		return in
	}
	switch w.Params.Kind() {
	case 0, '{', '[':
		in.Params = w.Params
	default:
		in.Err = NewRPCError(CodeInvalidRequest, "Invalid Request: params must be an object or an array")
		in.ID = orNull(in.ID)
	}
	return in
}

// unquote decodes the raw JSON string v; false if v is not a string.
func unquote(v jsontext.Value) (string, bool) {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// trimJSONSpace trims the four whitespace characters of RFC 8259 and no
// others.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// orNull makes an unreadable or absent id into null: an invalid request is
// answered even when it had no id, and then with id null.
func orNull(id jsontext.Value) jsontext.Value {
	if id == nil {
		return rawNull
	}
	return id
}

// describeSyntax words a decoding error for a client without Go internals.
func describeSyntax(err error) string {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		msg := se.Err.Error()
		if se.JSONPointer != "" {
			return fmt.Sprintf("%s at %s (byte %d)", msg, clip(string(se.JSONPointer)), se.ByteOffset)
		}
		return fmt.Sprintf("%s (byte %d)", msg, se.ByteOffset)
	}
	if se, ok := errors.AsType[*json.SemanticError](err); ok {
		return describeSemantic(se)
	}
	return "invalid JSON"
}

func describeSemantic(se *json.SemanticError) string {
	want := "a different type"
	if se.GoType != nil {
		want = jsonKindOfGo(se.GoType.Kind())
	}
	if se.JSONKind == 0 && se.Err != nil {
		return clip(se.Err.Error())
	}
	if se.JSONKind == '0' && se.Err != nil {
		// A number where a number goes: its value is what is wrong.
		switch {
		case strings.Contains(se.Err.Error(), "out of range"):
			return "is out of range"
		case want == "an integer":
			return "must be an integer, got a fraction or an exponent"
		}
	}
	return "must be " + want + ", got " + KindName(se.JSONKind)
}

// KindName names a JSON kind for a reason shown to a peer: "string",
// "number", "boolean", "null", "object" or "array".
func KindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func jsonKindOfGo(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a different type"
}

// AppendResult appends the response {"jsonrpc":"2.0","result":…,"id":…}.
func AppendResult(dst []byte, id, result jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","result":`...)
	dst = append(dst, result...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, orNull(id)...)
	return append(dst, '}')
}

// AppendError appends the response {"jsonrpc":"2.0","error":…,"id":…}.
func AppendError(dst []byte, id jsontext.Value, e *RPCError) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst, _ = jsontext.AppendQuote(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	dst = append(dst, `},"id":`...)
	dst = append(dst, orNull(id)...)
	return append(dst, '}')
}

// AppendRequest appends a request. A nil id makes it a notification; nil
// params are left out.
func AppendRequest(dst []byte, id jsontext.Value, method string, params jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst, _ = jsontext.AppendQuote(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	return append(dst, '}')
}

// Response is a decoded JSON-RPC response as a client sees it.
type Response struct {
	ID     jsontext.Value
	Result jsontext.Value
	Error  *RPCError
}

type wireResponse struct {
	Result jsontext.Value
	Error  jsontext.Value
	ID     jsontext.Value
}

// UnmarshalJSONFrom reads the members of a response object exactly as
// named; of a member given twice, the last counts.
func (w *wireResponse) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readMembers(dec, false, func(name []byte) *jsontext.Value {
		switch string(name) {
		case "result":
			return &w.Result
		case "error":
			return &w.Error
		case "id":
			return &w.ID
		}
		return nil
	})
}

// mcpResult is an MCP tools/call result: the reply as JSON text in
// content[0].text, or as structuredContent.
type mcpResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent jsontext.Value `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// DecodeResponse reads a JSON-RPC response body liberally: "error": null is
// no error; an error given as a bare string becomes its message; an MCP
// result (content[0].text holding JSON, or structuredContent) is unwrapped
// to the reply inside it, and an MCP isError result becomes an error.
func DecodeResponse(body []byte) (Response, error) {
	body = trimJSONSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return Response{}, errors.New("response is not a JSON-RPC object")
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w, jsontext.AllowDuplicateNames(true)); err != nil {
		return Response{}, fmt.Errorf("response is not valid JSON: %s", describeSyntax(err))
	}
	return w.response()
}

// DecodeResponses reads the reply to a batch: an array of responses, each
// read as DecodeResponse reads one, in the order they came (JSON-RPC lets a
// server answer a batch in any order; match them by ID). A body that is
// not an array of objects is an error, as is any element that
// DecodeResponse refuses.
func DecodeResponses(body []byte) ([]Response, error) {
	body = trimJSONSpace(body)
	if len(body) == 0 || body[0] != '[' {
		return nil, errors.New("reply to a batch is not a JSON array")
	}
	var elems []jsontext.Value
	if err := json.Unmarshal(body, &elems, jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("reply to a batch is not valid JSON: %s", describeSyntax(err))
	}
	if len(elems) > maxBatchReplies {
		return nil, fmt.Errorf("reply to a batch has more than %d responses", maxBatchReplies)
	}
	out := make([]Response, len(elems))
	for i, e := range elems {
		r, err := DecodeResponse(e)
		if err != nil {
			return nil, fmt.Errorf("response %d of the batch: %w", i+1, err)
		}
		out[i] = r
	}
	return out, nil
}

// maxBatchReplies bounds the responses read from a batch's reply: a
// batch gets at most one per request.
const maxBatchReplies = MaxBatch

// response makes a Response of the result, error and id members.
func (w *wireResponse) response() (Response, error) {
	r := Response{ID: w.ID}
	switch w.Error.Kind() {
	case 0, 'n':
	case '"':
		var msg string
		_ = json.Unmarshal(w.Error, &msg)
		r.Error = &RPCError{Code: CodeInternalError, Message: msg}
		return r, nil
	case '{':
		var e RPCError
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return Response{}, fmt.Errorf("response error object: %s", describeSyntax(err))
		}
		r.Error = &e
		return r, nil
	default:
		return Response{}, errors.New("response error must be an object")
	}
	if w.Result == nil {
		return Response{}, errors.New("response has neither result nor error")
	}
	r.Result = w.Result
	if w.Result.Kind() == '{' && bytes.Contains(w.Result, []byte(`"content"`)) {
		return unwrapMCP(r)
	}
	return r, nil
}

func unwrapMCP(r Response) (Response, error) {
	var m mcpResult
	if json.Unmarshal(r.Result, &m) != nil || (m.Content == nil && m.StructuredContent == nil) {
		return r, nil // not an MCP result after all: a reply with a content field
	}
	var inner jsontext.Value
	switch {
	case m.StructuredContent.Kind() == '{':
		inner = m.StructuredContent
	case len(m.Content) > 0 && m.Content[0].Type == "text":
		text := []byte(m.Content[0].Text)
		if t := bytes.TrimSpace(text); len(t) > 0 && jsontext.Value(t).IsValid() {
			inner = jsontext.Value(t)
		} else {
			inner, _ = jsontext.AppendQuote(nil, m.Content[0].Text)
		}
	default:
		return Response{}, errors.New("MCP result has no text content")
	}
	if m.IsError {
		e := &RPCError{Code: CodeInternalError, Message: "tool error"}
		if len(m.Content) > 0 {
			e.Message = clip(m.Content[0].Text)
		}
		if inner.Kind() == '{' {
			e.Data = inner
		}
		r.Error, r.Result = e, nil
		return r, nil
	}
	r.Result = inner
	return r, nil
}

// WrapMCP wraps a reply as an MCP tools/call result: the reply's JSON as
// the text of one text content item.
func WrapMCP(result jsontext.Value) jsontext.Value {
	out := make([]byte, 0, len(result)+len(result)/8+48)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out, _ = jsontext.AppendQuote(out, string(result))
	return append(out, `}]}`...)
}

// ToolCall is the params of an MCP tools/call request.
type ToolCall struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

// DecodeToolCall reads tools/call params: name must be a non-empty string
// and arguments, when present, an object.
func DecodeToolCall(params jsontext.Value) (ToolCall, error) {
	var tc ToolCall
	if params.Kind() != '{' {
		return tc, errors.New("tools/call params must be an object with name and arguments")
	}
	if err := json.Unmarshal(params, &tc); err != nil {
		return tc, fmt.Errorf("tools/call params: %s", describeSyntax(err))
	}
	if tc.Name == "" {
		return tc, errors.New("tools/call params.name must be a non-empty string")
	}
	switch tc.Arguments.Kind() {
	case 0, 'n':
		tc.Arguments = nil
	case '{':
	default:
		return tc, errors.New("tools/call params.arguments must be an object")
	}
	return tc, nil
}

// maxPeerText bounds the text of a peer's refusal that is kept and shown.
const maxPeerText = 1024

// ErrorInResult reads a result that is a refusal rather than an answer: a
// LEAGUE_ERROR given as the result of a call (some implementations refuse
// so, often as MCP text content), or the body of one without its envelope
// (error_code with error_description or error_message, and no status or
// success of an answer). It returns the refusal as a JSON-RPC error whose
// message has the peer's code, description, text and context, and whose
// data is the result itself, verbatim; nil for any other result.
func ErrorInResult(result jsontext.Value) *RPCError {
	if result.Kind() != '{' || !bytes.Contains(result, []byte(`"error_code"`)) {
		return nil // nearly every result: no decoding
	}
	var r struct {
		MessageType      MessageType    `json:"message_type"`
		ErrorCode        jsontext.Value `json:"error_code"`
		ErrorDescription jsontext.Value `json:"error_description"`
		ErrorMessage     jsontext.Value `json:"error_message"`
		Context          jsontext.Value `json:"context"`
		Status           jsontext.Value `json:"status"`
		Success          jsontext.Value `json:"success"`
	}
	if json.Unmarshal(result, &r, jsontext.AllowDuplicateNames(true)) != nil {
		return nil
	}
	refusal := Canonical(r.MessageType) == TypeLeagueError ||
		(r.MessageType == "" && r.Status == nil && r.Success == nil && (r.ErrorDescription != nil || r.ErrorMessage != nil))
	if !refusal {
		return nil
	}
	text := func(v jsontext.Value) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v) // not a string: as it came
	}
	code, name := Code(text(r.ErrorCode)), text(r.ErrorDescription)
	msg := strings.TrimSpace(string(code) + " " + name)
	if m := text(r.ErrorMessage); m != "" && m != name {
		msg += ": " + m
	}
	if len(r.Context) > 0 && string(r.Context) != "null" {
		msg += " (context " + string(r.Context) + ")"
	}
	return &RPCError{Code: PeerCode(code, name).JSONRPC(), Message: ClipTo(msg, maxPeerText), Data: result}
}

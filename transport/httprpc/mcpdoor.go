package httprpc

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// MCPConfig is the MCP door of a server: /mcp serves MCP (Streamable
// HTTP, through the official SDK) beside the plain league.v2 methods, to
// the same handler. Zero fields take the defaults.
type MCPConfig struct {
	// Off serves plain league.v2 only, as an agent that knows no MCP.
	Off bool
	// Only serves MCP only: a plain league.v2 request is refused as the
	// SDK refuses it. For tests of our clients against agents that speak
	// nothing else.
	Only bool
	// Name is the implementation's name in initialize's serverInfo
	// (default "leaguectl").
	Name string
	// Version is the implementation's version in serverInfo.
	Version string
	// SessionTimeout closes a session idle that long (default 10 min).
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions open at once (default 1024), and
	// MaxSessionsPerAddress those one address opened (default 16; loopback
	// is spared unless ServerConfig.LimitLoopback). An initialize over
	// either is answered E014, retryable.
	MaxSessions           int
	MaxSessionsPerAddress int
	// BehindProxy turns off the SDK's DNS-rebinding protection, which
	// refuses a request that came to a loopback address with a Host
	// header that is not a loopback name: a reverse proxy on the same host
	// forwards requests so, with the public name as Host.
	BehindProxy bool
}

// Defaults of MCPConfig.
const (
	DefaultMCPSessionTimeout        = 10 * time.Minute
	DefaultMaxMCPSessions           = 1024
	DefaultMaxMCPSessionsPerAddress = 16
)

func (c MCPConfig) withDefaults() MCPConfig {
	if c.Name == "" {
		c.Name = "leaguectl"
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultMCPSessionTimeout
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxMCPSessions
	}
	if c.MaxSessionsPerAddress <= 0 {
		c.MaxSessionsPerAddress = DefaultMaxMCPSessionsPerAddress
	}
	return c
}

// ToolLister is a handler that can say which methods it serves: a
// transport.Mux. Only such a handler gets an MCP door, whose tools are
// those methods.
type ToolLister interface {
	Methods() (types []protocol.MessageType, tools []string)
}

// peerHeader carries the peer of a request to the tool handlers behind
// the SDK, which see a request's headers and nothing else of it. Whatever
// a client sends under that name is replaced.
const peerHeader = "Leaguectl-Peer"

// sessionHeader is MCP's session header.
const sessionHeader = "Mcp-Session-Id"

// callHeader carries, to the tool handlers, the key of the POST that
// brought their call, whose end ends them: the SDK runs a handler under
// its session's context, which outlives the request. Whatever a client
// sends under that name is replaced.
const callHeader = "Leaguectl-Call"

// mcpDoor serves the MCP requests of one server.
type mcpDoor struct {
	h      transport.Handler
	sdk    *mcp.StreamableHTTPHandler
	server *mcp.Server
	cfg    MCPConfig
	limit  int64
	logger *slog.Logger

	lister ToolLister

	// posts are the contexts of the POSTs being served, by their key
	// (callHeader).
	posts sync.Map
	seq   atomic.Uint64

	mu       sync.Mutex
	sessions map[string]string // session id → the address that opened it
	// toolsAdded says the tools are the server's: they are listed at the
	// first MCP request at which the handler serves any, since a handler
	// served before its agent is made (transport.Late) has none yet.
	toolsAdded bool
}

// newMCPDoor is the MCP door to h, or nil when h cannot list its tools
// or cfg turns MCP off.
func newMCPDoor(h transport.Handler, cfg MCPConfig, bodyLimit int64, logger *slog.Logger) *mcpDoor {
	lister, ok := h.(ToolLister)
	if cfg.Off || !ok {
		return nil
	}
	cfg = cfg.withDefaults()
	d := &mcpDoor{h: h, lister: lister, cfg: cfg, limit: bodyLimit, logger: logger, sessions: map[string]string{}}
	d.server = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version},
		// Tools only: an agent sends no log messages to MCP clients, so
		// it does not advertise logging as the SDK would by default. Its
		// tools change once, when an agent served before it was made
		// (transport.Late) is set.
		&mcp.ServerOptions{Logger: logger, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	d.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.server },
		&mcp.StreamableHTTPOptions{
			SessionTimeout:             cfg.SessionTimeout,
			DisableLocalhostProtection: cfg.BehindProxy,
			MaxRequestBodyBytes:        bodyLimit,
			Logger:                     logger,
		})
	return d
}

// wants reports whether a POST with body goes through the MCP door: one
// of a session, or the requests that open and describe one (initialize,
// notifications/*, tools/list). Everything else, sessionless tools/call
// and ping and every batch included, is the plain league path's, whose
// bytes the JSON-RPC vectors pin.
func (d *mcpDoor) wants(r *http.Request, body []byte) bool {
	if d.cfg.Only || r.Header.Get(sessionHeader) != "" {
		return true
	}
	// Most requests are league messages: the scan is the whole cost of
	// the door to them.
	if !bytes.Contains(body, []byte(`"initialize"`)) && !bytes.Contains(body, []byte(`"notifications/`)) &&
		!bytes.Contains(body, []byte(`"tools/list"`)) {
		return false
	}
	var probe struct {
		Method string `json:"method"`
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &probe) != nil {
		return false
	}
	return probe.Method == "initialize" || probe.Method == "tools/list" || strings.HasPrefix(probe.Method, "notifications/")
}

// serve hands r (whose body is body, read already within the server's
// limits) to the SDK, with the peer it came from for the tool handlers,
// and answers in JSON-RPC what the SDK would answer in plain text.
//
// ctx ends the request, and the calls it brought, at the latest: the
// server's write timeout, past which no answer could be written.
func (d *mcpDoor) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, peer transport.Peer, limited bool) {
	d.addTools()
	if batch(body) {
		// MCP has had no batches since 2025-06-18, and a batch here
		// would be one request of as many calls at once as it holds,
		// with replies of any size, which the plain path bounds.
		writeRaw(w, http.StatusBadRequest, protocol.AppendError(nil, nil, protocol.NewRPCError(protocol.CodeInvalidRequest,
			"MCP: a batch is not taken through MCP: send one request a POST")))
		return
	}
	r = r.WithContext(ctx)
	r.Header.Del(peerHeader)
	r.Header.Set(peerHeader, encodePeer(peer))
	key := strconv.FormatUint(d.seq.Add(1), 36)
	r.Header.Del(callHeader)
	r.Header.Set(callHeader, key)
	d.posts.Store(key, ctx)
	defer d.posts.Delete(key)
	jw := &jsonErrors{ResponseWriter: w}
	if r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" {
		address := transport.AddressOf(peer)
		if err := d.admit(address, limited); err != nil {
			writeRaw(w, http.StatusTooManyRequests, protocol.AppendError(nil, nil, protocol.ToRPCError(err)))
			return
		}
		// Counted before its answer leaves: the client may open
		// another as soon as it has it.
		jw.opened = func(id string) {
			d.mu.Lock()
			d.sessions[id] = address
			d.mu.Unlock()
		}
	}
	if body != nil {
		r.Body = http.NoBody
		if len(body) > 0 {
			r.Body = readCloser{bytes.NewReader(body)}
		}
		r.ContentLength = int64(len(body))
	}
	d.sdk.ServeHTTP(jw, r)
	jw.finish()
}

// batch reports whether body is a JSON array.
func batch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// addTools adds the handler's tools to the server, once it serves any.
func (d *mcpDoor) addTools() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.toolsAdded {
		return
	}
	list := tools(d.lister)
	for _, t := range list {
		d.server.AddTool(t, d.callTool(t.Name))
	}
	d.toolsAdded = len(list) > 0
}

// admit refuses a new session over the bounds: of all (MaxSessions), and
// of address unless it is spared (MaxSessionsPerAddress). The sessions
// the SDK has closed since (timed out, deleted) are forgotten first.
func (d *mcpDoor) admit(address string, limited bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.sessions) >= d.cfg.MaxSessions || limited {
		live := map[string]bool{}
		for s := range d.server.Sessions() {
			live[s.ID()] = true
		}
		for id := range d.sessions {
			if !live[id] {
				delete(d.sessions, id)
			}
		}
	}
	if len(d.sessions) >= d.cfg.MaxSessions {
		return protocol.Errorf(protocol.ErrRateLimitExceeded, "this agent has %d MCP sessions open, its most: close one, or try again later", d.cfg.MaxSessions)
	}
	if !limited {
		return nil
	}
	n := 0
	for _, a := range d.sessions {
		if a == address {
			n++
		}
	}
	if n >= d.cfg.MaxSessionsPerAddress {
		return protocol.Errorf(protocol.ErrRateLimitExceeded, "%d MCP sessions are open from this address, its most: close one (DELETE /mcp), or try again later", n)
	}
	return nil
}

// callTool serves tools/call of the tool name: the arguments are the
// params of the plain method of that name, served by the same handler
// with the same validation; the result is the plain reply's bytes as text
// content, and as structured content when they are an object. A league
// error is the JSON-RPC error the plain path answers, not an isError
// result.
func (d *mcpDoor) callTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var header http.Header
		if req.Extra != nil {
			header = req.Extra.Header
		}
		post, ok := d.posts.Load(header.Get(callHeader))
		if !ok {
			// Its POST has ended: nobody is left to answer.
			return nil, wireError(protocol.ToRPCError(protocol.Errorf(protocol.ErrTimeout, "the request that brought this call has ended")))
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(post.(context.Context), cancel)()
		r := &transport.Request{Method: name, Params: jsontext.Value(req.Params.Arguments), MCP: true,
			Peer: decodePeer(header.Get(peerHeader))}
		if len(r.Params) == 0 {
			r.Params = jsontext.Value("{}")
		}
		result, err := d.h.ServeLeague(ctx, r)
		if err != nil {
			return nil, wireError(protocol.ToRPCError(err))
		}
		enc, err := transport.EncodeResult(result)
		if err != nil {
			return nil, wireError(protocol.ToRPCError(protocol.Errorf(protocol.ErrInternal, "cannot encode the reply")))
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(enc)}}}
		if enc.Kind() == '{' {
			out.StructuredContent = stdjson.RawMessage(enc)
		}
		return out, nil
	}
}

// wireError is e as the SDK sends a JSON-RPC error.
func wireError(e *protocol.RPCError) *jsonrpc.Error {
	return &jsonrpc.Error{Code: int64(e.Code), Message: e.Message, Data: stdjson.RawMessage(e.Data)}
}

// tools are the MCP tools of the methods l serves: each league message by
// its tool name, and each other tool by its own, with a description and
// an input schema for discovery.
func tools(l ToolLister) []*mcp.Tool {
	types, names := l.Methods()
	var out []*mcp.Tool
	for _, t := range types {
		out = append(out, tool(protocol.ToolNameOf(t), reflect.TypeOf(protocol.New(t))))
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, tool(n, reflect.TypeFor[*protocol.Envelope]()))
	}
	return out
}

// tool is the tool name whose arguments are a value of type of.
func tool(name string, of reflect.Type) *mcp.Tool {
	desc := protocol.ToolDescription(name)
	if desc == "" {
		desc = "The league.v2 method " + name + "."
	}
	return &mcp.Tool{Name: name, Description: desc, InputSchema: inputSchema(of)}
}

// inputSchema is the JSON schema of the params of a message of type of,
// derived from its Go type, published for discovery only: every object
// in it takes other properties (additionalProperties true), since we
// accept the envelope's fields and extras (DESIGN §4) which an inferred
// schema would refuse; the arguments are decoded and validated by
// protocol as on the plain path. A type the inference cannot describe
// is published as an object of any properties.
func inputSchema(of reflect.Type) *jsonschema.Schema {
	anything := &jsonschema.Schema{}
	s, err := jsonschema.ForType(of, &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[jsontext.Value](): anything,
			reflect.TypeFor[time.Time]():      {Type: "string"},
		},
	})
	if err != nil || s.Type != "object" {
		return &jsonschema.Schema{Type: "object", AdditionalProperties: anything}
	}
	openObjects(s)
	return s
}

// openObjects lets every object of s take other properties.
func openObjects(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" || s.Properties != nil {
		s.AdditionalProperties = &jsonschema.Schema{}
	}
	for _, p := range s.Properties {
		openObjects(p)
	}
	openObjects(s.Items)
	for _, sub := range s.Defs {
		openObjects(sub)
	}
}

// encodePeer and decodePeer carry a transport.Peer in peerHeader:
// "network addr loopback via", via "-" when there is none. Addresses hold
// no spaces.
func encodePeer(p transport.Peer) string {
	via := p.Via
	if via == "" {
		via = "-"
	}
	return p.Network + " " + p.Addr + " " + strconv.FormatBool(p.Loopback) + " " + via
}

func decodePeer(s string) transport.Peer {
	f := strings.Fields(s)
	if len(f) != 4 {
		return transport.Peer{Network: "http"}
	}
	p := transport.Peer{Network: f[0], Addr: f[1], Via: f[3]}
	p.Loopback, _ = strconv.ParseBool(f[2])
	if p.Via == "-" {
		p.Via = ""
	}
	return p
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// jsonErrors turns the SDK's plain-text error answers (http.Error: a
// missing Accept or Content-Type, an unknown session, a refused Host)
// into JSON-RPC error bodies with the same status, which any JSON-RPC
// client can read; everything else passes through as it is written.
type jsonErrors struct {
	http.ResponseWriter
	status int
	held   bytes.Buffer
	// opened, when set, is told the session id of a successful answer
	// as its head is written.
	opened func(id string)
	wrote  bool
}

func (w *jsonErrors) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	if id := w.Header().Get(sessionHeader); id != "" && w.opened != nil && code < 300 {
		w.opened(id)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.held.Len() < 4096 {
			w.held.Write(b[:min(len(b), 4096-w.held.Len())])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets the SDK's event streams through.
func (w *jsonErrors) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error of a held plain-text answer.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	code := protocol.CodeInvalidRequest
	if w.status >= 500 {
		code = protocol.CodeInternalError
	}
	msg := strings.TrimSpace(w.held.String())
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	h := w.Header()
	h.Del("X-Content-Type-Options")
	writeRaw(w.ResponseWriter, w.status, protocol.AppendError(nil, nil, protocol.NewRPCError(code, "MCP: "+msg)))
}

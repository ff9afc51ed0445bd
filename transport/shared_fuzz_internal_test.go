package transport

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// The shared path (a broadcast decoded and validated once, each recipient
// sent its own members only: Mux.resolveShared) promises the reply the
// plain path (the whole params on the wire: Mux.resolve) gives for the
// same request, byte for byte: the same handler, the same message, the
// same error. FuzzSharedLikePlain serves every request both ways, as the
// bus would (a *sharing context and the recipient's Own bytes, to
// Mux.AppendMessage) and as HTTP would (the Encoded bytes), and compares
// the replies.

// sharedMethods are the methods a fuzzed request may call: every name a
// message type goes by (protocol.Aliases), whatever the type of the
// message it is sent, and names that are not message methods: tools the
// Mux serves (ping, get_standings), implementation-guide's generic
// mcp_message, a name nobody serves, and none.
var sharedMethods = append(slices.Sorted(maps.Keys(protocol.Aliases())), sharedOtherMethods...)

// sharedOtherMethods are the sharedMethods that name no message.
var sharedOtherMethods = []string{protocol.MethodMCPMessage, protocol.MethodPing, protocol.MethodGetStandings, "no_such_method", ""}

// sharedTools are the tools the fuzzed Mux serves, among sharedMethods.
var sharedTools = []string{protocol.MethodPing, protocol.MethodGetStandings}

// Bits of the fuzzed options byte.
const (
	sharedMCP        = 1 << iota // the call goes as MCP tools/call, as a dialect-b peer is called
	sharedKeepTables             // the Mux keeps tables unread (Mux.KeepTables), as a player's does
	sharedTableCache             // … with a TableCache
	sharedWords                  // the Mux shares a Words (Mux.ShareWords)
)

// sharedMux is a Mux with a handler for every message type and for
// sharedTools, configured as opts says. Every handler answers with what it
// was given (sharedSeen), so that any difference in what reaches it shows
// in the reply.
func sharedMux(opts byte) *Mux {
	m := NewMux(nil)
	if opts&sharedKeepTables != 0 {
		var cache *protocol.TableCache
		if opts&sharedTableCache != 0 {
			cache = new(protocol.TableCache)
		}
		m.KeepTables(cache)
	}
	if opts&sharedWords != 0 {
		m.ShareWords(protocol.NewWords())
	}
	for _, t := range protocol.MessageTypes() {
		m.HandleFunc(string(t), sharedSeen)
	}
	for _, name := range sharedTools {
		m.HandleFunc(name, sharedSeen)
	}
	return m
}

// sharedSeen is the handler of sharedMux: its result is everything a
// handler is given but the raw params (which are the recipient's own
// members on the shared path by design) and the peer (the same on both).
func sharedSeen(_ context.Context, r *Request) (any, error) {
	seen := struct {
		Method  string               `json:"method"`
		Type    protocol.MessageType `json:"type"`
		MCP     bool                 `json:"mcp"`
		Token   *string              `json:"token"`
		Env     jsontext.Value       `json:"env"`
		Msg     jsontext.Value       `json:"msg"`
		Tables  jsontext.Value       `json:"tables,omitempty"`
		Matches int                  `json:"matches,omitempty"`
	}{Method: r.Method, Type: r.Type, MCP: r.MCP}
	var err error
	if r.Env != nil {
		seen.Token = &r.Env.AuthToken
		if seen.Env, err = protocol.AppendJSON(nil, r.Env); err != nil {
			return nil, fmt.Errorf("envelope: %w", err)
		}
	}
	if r.Msg != nil {
		if seen.Msg, err = protocol.AppendJSON(nil, r.Msg); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		if r.Msg.Type() != r.Type {
			return nil, fmt.Errorf("a %s served as %s", r.Msg.Type(), r.Type)
		}
		if r.Msg.Env() != r.Env {
			return nil, fmt.Errorf("r.Env is not r.Msg's envelope")
		}
	}
	// The tables a Mux may keep unread, as a handler reads them.
	switch msg := r.Msg.(type) {
	case *protocol.RoundAnnouncement:
		seen.Matches = msg.MatchCount()
		seen.Tables, err = protocol.AppendJSON(nil, msg.AllMatches())
	case *protocol.LeagueStandingsUpdate:
		seen.Tables, err = protocol.AppendJSON(nil, msg.Rows())
	}
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	return seen, nil
}

// sharedPeer is the peer of every bus call.
var sharedPeer = Peer{Network: "mem", Addr: "mem", Loopback: true}

// sharedBody is the request calling method with params, as a Client
// writes it (callAs): wrapped in tools/call when mcp is set.
func sharedBody(t *testing.T, method string, params jsontext.Value, mcp bool) []byte {
	wire := method
	if mcp {
		wrapped, err := EncodeParams(protocol.ToolCall{Name: method, Arguments: params})
		if err != nil {
			t.Fatalf("tools/call params: %v", err)
		}
		params, wire = wrapped, protocol.MethodToolsCall
	}
	return protocol.AppendRequest(nil, jsontext.Value("7"), wire, params)
}

// servePlainAndShared serves the call of method with a as its params both
// ways, on Muxes configured by opts, and returns both replies.
func servePlainAndShared(t *testing.T, a *protocol.Addressed, method string, opts byte) (plain, shared []byte) {
	mcp := opts&sharedMCP != 0
	// The whole message on the wire, as over HTTP.
	plain = sharedMux(opts).AppendMessage(context.Background(), nil, sharedBody(t, method, a.Encoded(), mcp), sharedPeer)
	// The recipient's own members, and the broadcast by reference in the
	// call's context, as Client.Call hands them to a bus (mem.Bus passes
	// the context as it is to AppendMessage or ServeMessage).
	ctx := &sharing{Context: context.Background(), b: a.Broadcast()}
	shared = sharedMux(opts).AppendMessage(ctx, nil, sharedBody(t, method, a.Own(), mcp), sharedPeer)
	return plain, shared
}

// checkSharedLikePlain decodes params as the message type typeSel picks
// and, if it is a message one can broadcast, calls the method methodSel
// picks with it, addressed to token, both ways; it fails if the replies
// differ.
func checkSharedLikePlain(t *testing.T, typeSel, methodSel, opts byte, token string, params []byte) {
	types := protocol.MessageTypes()
	typ := types[int(typeSel)%len(types)]
	method := sharedMethods[int(methodSel)%len(sharedMethods)]
	msg, err := protocol.DecodeMessage(typ, params)
	if err != nil {
		return
	}
	// The broadcast carries no token of its own: the recipient's is token.
	msg.Env().AuthToken = ""
	b, err := protocol.NewBroadcast(msg)
	if err != nil {
		return
	}
	a := b.To(token)
	plain, shared := servePlainAndShared(t, a, method, opts)
	if bytes.Equal(plain, shared) {
		return
	}
	at := 0
	for at < min(len(plain), len(shared)) && plain[at] == shared[at] {
		at++
	}
	t.Errorf("%q called with a %s (options %04b, token %q) answers differently on the shared path, from byte %d\nparams: %s\nplain:  %s\nshared: %s",
		method, typ, opts&0xf, token, at, clipped(a.Encoded()), clipped(plain), clipped(shared))
}

// clipped is b, or its first 2,000 bytes and an ellipsis.
func clipped(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// FuzzSharedLikePlain: a broadcast sent to a recipient in the process (the
// shared path) is answered byte for byte as the same request over the
// network (the plain path), whatever the message, the method it is sent
// under, the token, the dialect and the Mux's reading options.
func FuzzSharedLikePlain(f *testing.F) {
	for _, s := range sharedSeeds(f) {
		f.Add(s.typeSel, s.methodSel, s.opts, s.token, s.params)
	}
	f.Fuzz(checkSharedLikePlain)
}

// sharedSeed is one input of FuzzSharedLikePlain.
type sharedSeed struct {
	typeSel, methodSel, opts byte
	token                    string
	params                   []byte
}

// sharedSeeds are messages of every type, valid and not, sent under their
// own methods and others' with every option: the messages of the spec's
// examples and the interop captures, each also with its message_type, its
// sender, its protocol or a field of its own spoilt.
func sharedSeeds(tb testing.TB) []sharedSeed {
	tb.Helper()
	msgs := seedMessages(tb)
	types := protocol.MessageTypes()
	methodIndex := func(name string) byte {
		i := slices.Index(sharedMethods, name)
		if i < 0 {
			tb.Fatalf("no method %q", name)
		}
		return byte(i)
	}
	var seeds []sharedSeed
	valid := map[protocol.MessageType]bool{}
	for k, sm := range msgs {
		ti := byte(slices.Index(types, sm.typ))
		other := types[(int(ti)+1+k)%len(types)]
		first := !valid[sm.typ]
		if m, err := protocol.DecodeMessage(sm.typ, sm.params); err == nil && protocol.Validate(m) == nil {
			valid[sm.typ] = true
		}
		tokens := []string{"tok-P01", "", "tök\xff\"\\", "tok-" + string(sm.typ)}
		methods := []string{protocol.ToolName(sm.typ), string(sm.typ), protocol.ToolName(other)}
		if first || k%7 == 0 {
			// And methods that name no message: a tool, a name that the
			// params' message_type alone can make a message method, none.
			methods = append(methods, sharedOtherMethods...)
		}
		for j, method := range methods {
			seeds = append(seeds, sharedSeed{ti, methodIndex(method), byte(k+j) & 0xf, tokens[(k+j)%len(tokens)], sm.params})
		}
		// Spoilt: a message_type naming another type, none or no type;
		// no sender; another protocol; a field of its own with a value of
		// no type of it.
		for j, spoil := range []func(map[string]jsontext.Value){
			func(o map[string]jsontext.Value) { o["message_type"] = jsontext.Value(`"` + other + `"`) },
			func(o map[string]jsontext.Value) { o["message_type"] = jsontext.Value(`"NO_SUCH_MESSAGE"`) },
			func(o map[string]jsontext.Value) { delete(o, "message_type") },
			func(o map[string]jsontext.Value) { delete(o, "sender") },
			func(o map[string]jsontext.Value) { o["protocol"] = jsontext.Value(`"league.v1"`) },
			func(o map[string]jsontext.Value) {
				for _, key := range slices.Sorted(maps.Keys(o)) {
					if !envelopeKey[key] {
						o[key] = jsontext.Value(`{"x":[1,"y",null]}`)
						return
					}
				}
			},
		} {
			var o map[string]jsontext.Value
			if err := json.Unmarshal(sm.params, &o); err != nil {
				tb.Fatalf("seed %s: %v", sm.params, err)
			}
			spoil(o)
			p, err := json.Marshal(o, json.Deterministic(true))
			if err != nil {
				tb.Fatal(err)
			}
			seeds = append(seeds, sharedSeed{ti, methodIndex(protocol.ToolName(sm.typ)), byte(k+j) & 0xf, "tok-P02", p})
		}
	}
	for _, typ := range types {
		if !valid[typ] {
			tb.Errorf("no valid seed of %s", typ)
		}
	}
	return seeds
}

// envelopeKey are the members of the envelope.
var envelopeKey = map[string]bool{"protocol": true, "message_type": true, "sender": true, "timestamp": true,
	"conversation_id": true, "auth_token": true, "league_id": true}

// seedMessage is a message of a spec example or an interop capture.
type seedMessage struct {
	typ    protocol.MessageType
	params []byte
}

// seedMessages are the messages of the spec's examples (../testdata/spec)
// and of the interop captures (../testdata/interop): every JSON object
// there, or its params, tools/call arguments or result, that declares a
// message_type the protocol knows, or is the params of a message method.
func seedMessages(tb testing.TB) []seedMessage {
	tb.Helper()
	var docs [][]byte
	block := regexp.MustCompile("(?s)```json\n(.*?)```")
	specs, err := filepath.Glob("../testdata/spec/*.md")
	if err != nil || len(specs) == 0 {
		tb.Fatalf("no spec documents: %v", err)
	}
	for _, name := range specs {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(b, -1) {
			docs = append(docs, m[1])
		}
	}
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile(filepath.Join("../testdata/interop", name))
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, bytes.Split(bytes.TrimSpace(b), []byte("\n"))...)
	}
	var out []seedMessage
	seen := map[string]bool{}
	add := func(t protocol.MessageType, v jsontext.Value) {
		if v.Kind() != '{' {
			return
		}
		c := jsontext.Value(bytes.Clone(v))
		if err := c.Compact(); err != nil || seen[string(t)+string(c)] {
			return
		}
		seen[string(t)+string(c)] = true
		out = append(out, seedMessage{t, c})
	}
	for _, d := range docs {
		var doc struct {
			Method      string               `json:"method"`
			MessageType protocol.MessageType `json:"message_type"`
			Params      jsontext.Value       `json:"params"`
			Result      jsontext.Value       `json:"result"`
		}
		if json.Unmarshal(d, &doc) != nil {
			continue // not JSON: a template, a log line
		}
		typeOf := func(declared protocol.MessageType, method string) (protocol.MessageType, bool) {
			if t, ok := protocol.MethodType(string(declared)); ok {
				return t, true
			}
			return protocol.MethodType(method)
		}
		if t, ok := typeOf(doc.MessageType, ""); ok {
			add(t, d)
		}
		if doc.Params.Kind() == '{' {
			var pf struct {
				MessageType protocol.MessageType `json:"message_type"`
				Name        string               `json:"name"`
				Arguments   jsontext.Value       `json:"arguments"`
			}
			_ = json.Unmarshal(doc.Params, &pf)
			if doc.Method == protocol.MethodToolsCall {
				var args struct {
					MessageType protocol.MessageType `json:"message_type"`
				}
				_ = json.Unmarshal(pf.Arguments, &args)
				if t, ok := typeOf(args.MessageType, pf.Name); ok {
					add(t, pf.Arguments)
				}
			} else if t, ok := typeOf(pf.MessageType, doc.Method); ok {
				add(t, doc.Params)
			}
		}
		if doc.Result.Kind() == '{' {
			var res struct {
				MessageType protocol.MessageType `json:"message_type"`
			}
			_ = json.Unmarshal(doc.Result, &res)
			if t, ok := typeOf(res.MessageType, ""); ok {
				add(t, doc.Result)
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no messages in the spec examples and interop captures")
	}
	// The acks the examples give without an envelope, with one.
	for _, m := range []protocol.Message{
		&protocol.StartMatchAck{Envelope: seedEnvelope(protocol.TypeStartMatchAck, "referee:REF01"),
			MatchID: "R1M1", Status: "MATCH_STARTED"},
		&protocol.MatchResultReportAck{Envelope: seedEnvelope(protocol.TypeMatchResultReportAck, "league_manager:LM01"),
			MatchID: "R1M1", Status: "ACCEPTED", Message: "Result queued for processing"},
	} {
		b, err := protocol.AppendJSON(nil, m)
		if err != nil {
			tb.Fatal(err)
		}
		add(m.Type(), b)
	}
	return out
}

func seedEnvelope(t protocol.MessageType, sender string) protocol.Envelope {
	return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: sender,
		Timestamp: "2026-11-21T05:29:40Z", ConversationID: "conv-seed", LeagueID: "league_2026"}
}

package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// exchange is one request to the target and what came back. The checker
// does its own round trips, rather than use a transport.Client, so that it
// knows exactly which method was answered and can show the bytes on both
// sides.
type exchange struct {
	// what names the request in a report: its method.
	what string
	sent []byte
	// got is the response body; nil when none came.
	got []byte
	// resp is got decoded, when err is nil.
	resp protocol.Response
	// err says why there is no usable response: no answer, or an answer
	// that is not a JSON-RPC response.
	err  error
	took time.Duration
	// framing is how strictly got keeps to JSON-RPC 2.0 (rpcCheck).
	framing framing
	// detour is set when the target did not know the method by its name
	// and answered it only another way, as a league's Client goes on to
	// call it (transport.Ways): which way, for the report.
	detour string
}

// call sends method with params to the target, with timeout. A target that
// does not know the method by its name is asked again the other ways a
// league's Client tries (by message type, through MCP tools/call), each
// with timeout, so that the check grades what the agent does in a league.
// The exchange returned is the first answered and not refused as unknown,
// its detour saying how it was reached; when there is none, the first,
// its detour saying what the other ways got. Only the exchanges returned
// are kept for rpcCheck: what an agent answers to a way the spec does not
// name is its own business.
func (c *checker) call(ctx context.Context, method string, params any, timeout time.Duration) *exchange {
	p, err := transport.EncodeParams(params)
	if err != nil {
		return &exchange{err: err}
	}
	var first *exchange
	var tried []string
	for i, w := range transport.Ways(method, p) {
		wire, wp, err := w.Request(method, p)
		if err != nil {
			return &exchange{err: err}
		}
		x := c.exchange(ctx, wire, wp, timeout, i == 0)
		if i == 0 {
			first = x
			if x.err != nil || !w.Unknown(method, x.resp.Error) {
				return x
			}
			continue
		}
		if x.err == nil && !w.Unknown(method, x.resp.Error) {
			x.detour = "answered only as " + w.Describe(method) + ", not as " + method + " (-32601)"
			c.keepAnswer(x)
			return x
		}
		tried = append(tried, w.Describe(method)+": "+x.describe())
	}
	if len(tried) > 0 {
		first.detour = "asked too as " + strings.Join(tried, "; as ")
	}
	return first
}

// callDirect sends method with params to the target, with timeout, by the
// method's name only.
func (c *checker) callDirect(ctx context.Context, method string, params any, timeout time.Duration) *exchange {
	p, err := transport.EncodeParams(params)
	if err != nil {
		return &exchange{err: err}
	}
	return c.exchange(ctx, method, p, timeout, true)
}

// exchange sends a request of method with params p, kept for rpcCheck when
// keep is set.
func (c *checker) exchange(ctx context.Context, method string, p []byte, timeout time.Duration, keep bool) *exchange {
	id := strconv.AppendUint(nil, c.ids.Add(1), 10)
	x := c.roundTrip(ctx, method, protocol.AppendRequest(nil, id, method, p), id, timeout)
	if keep {
		c.keepAnswer(x)
	}
	return x
}

// send sends a body exactly as given, named what in the report; wantID is
// the id its answer must carry: the request's, or null for a request that
// cannot be read. Its answer is kept for rpcCheck.
func (c *checker) send(ctx context.Context, what string, body, wantID []byte, timeout time.Duration) *exchange {
	x := c.roundTrip(ctx, what, body, wantID, timeout)
	c.keepAnswer(x)
	return x
}

// roundTrip is send without keeping the answer.
func (c *checker) roundTrip(ctx context.Context, what string, body, wantID []byte, timeout time.Duration) *exchange {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	x := &exchange{what: what, sent: body}
	start := time.Now()
	got, err := c.opts.Post(ctx, c.opts.Target, body)
	x.took = time.Since(start)
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		x.err = fmt.Errorf("no answer within %s", timeout)
	case err != nil:
		x.err = err
	case len(got) == 0:
		x.got, x.err = []byte{}, errors.New("an empty answer (a notification's), not a JSON-RPC response")
	default:
		x.got = got
		x.resp, x.err = protocol.DecodeResponse(got)
		x.framing = checkFraming(got, wantID)
	}
	return x
}

// keepAnswer keeps x for rpcCheck.
func (c *checker) keepAnswer(x *exchange) {
	c.xmu.Lock()
	c.exchanges = append(c.exchanges, x)
	c.xmu.Unlock()
}

// ok reports whether a result came.
func (x *exchange) ok() bool { return x.err == nil && x.resp.Error == nil }

// decode decodes the result into v with the rules of the agents' own
// decoding (field-level reasons).
func (x *exchange) decode(v any) error {
	if x.resp.Result.Kind() != '{' {
		return fmt.Errorf("the result is a JSON %s, not an object", protocol.KindName(x.resp.Result.Kind()))
	}
	return protocol.DecodeInto(x.resp.Result, v)
}

// describe says in a few words what came back.
func (x *exchange) describe() string {
	switch {
	case x.err != nil:
		return x.err.Error()
	case x.resp.Error != nil:
		return "JSON-RPC error " + rpcText(x.resp.Error)
	}
	return "a result"
}

func rpcText(e *protocol.RPCError) string {
	s := strconv.Itoa(e.Code)
	if c := e.LeagueCode(); c != "" {
		s += " " + string(c)
	}
	if e.Message != "" {
		s += " (" + protocol.Clip(e.Message) + ")"
	}
	return s
}

func (x *exchange) gotText() string {
	if x.got == nil {
		return "(no answer: " + x.err.Error() + ")"
	}
	return abbrev(x.got)
}

// refusal reads an answer that refuses the request: a JSON-RPC error, or a
// result that says so (LEAGUE_ERROR, success false, status REJECTED), and
// the league code it carries ("" when none).
func (x *exchange) refusal() (code protocol.Code, refused bool) {
	if x.err != nil {
		return "", false
	}
	if x.resp.Error != nil {
		return x.resp.Error.LeagueCode(), true
	}
	var r struct {
		MessageType protocol.MessageType `json:"message_type"`
		Status      string               `json:"status"`
		Success     *bool                `json:"success"`
		ErrorCode   protocol.Code        `json:"error_code"`
		Error       jsontext.Value       `json:"error"`
	}
	if x.decode(&r) != nil {
		return "", false
	}
	if r.ErrorCode == "" && r.Error.Kind() == '{' {
		var e struct {
			ErrorCode protocol.Code `json:"error_code"`
		}
		_ = protocol.DecodeInto(r.Error, &e)
		r.ErrorCode = e.ErrorCode
	}
	refused = r.MessageType == protocol.TypeLeagueError || r.Status == protocol.StatusRejected ||
		(r.Success != nil && !*r.Success)
	return r.ErrorCode, refused
}

// maxShown is about how much of a message a report shows.
const maxShown = 300

// tokenField matches an auth_token member, whose value a report never shows.
var tokenField = regexp.MustCompile(`("auth_token"\s*:\s*)"(?:[^"\\]|\\.)*"`)

// abbrev shows a message in a report: valid UTF-8, tokens left out, at most
// about maxShown bytes.
func abbrev(b []byte) string {
	s := string(bytes.ToValidUTF8(b, []byte("?")))
	s = tokenField.ReplaceAllString(s, `${1}"***"`)
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// healthResult is the answer to GET /health.
type healthResult struct {
	url    string
	status int
	body   []byte
	err    error
}

// healthURL is /health on the target's host: the spec's agents serve it
// beside /mcp (error-codes.md: curl http://localhost:8101/health).
func healthURL(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/health", "", "", ""
	return u.String()
}

// getHealth asks for GET /health. HTTP is only the health check's business:
// the transport networks carry JSON-RPC POSTs only.
func getHealth(ctx context.Context, target string, timeout time.Duration) *healthResult {
	h := &healthResult{url: healthURL(target)}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		h.err = err
		return h
	}
	resp, err := hc.Do(req)
	if err != nil {
		h.err = err
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			h.err = fmt.Errorf("no answer within %s", timeout)
		}
		return h
	}
	defer resp.Body.Close()
	h.status = resp.StatusCode
	h.body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return h
}

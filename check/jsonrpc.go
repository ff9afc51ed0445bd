package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// The checker holds an agent's answers to JSON-RPC 2.0 as written (§5,
// Response object), where our own client (protocol.DecodeResponse) is
// deliberately liberal: an agent that passes the check is understood by
// strict peers too. The only leniency is what a real implementation of
// league.v2 sends (../shared/interop, dialect-a): a null "error" beside a
// result, and so a null "result" beside an error, count as absent.

// nameRPC is the check of every answer's JSON-RPC framing.
const nameRPC = "JSON-RPC envelope"

// framing is how one answer is framed.
type framing struct {
	// problems lists how the answer breaks JSON-RPC 2.0; nil when it
	// does not.
	problems []string
	// tolerated is set when the answer carries a null "error" beside its
	// result, or a null "result" beside its error.
	tolerated bool
}

// checkFraming reads a response body strictly. wantID is the request's id
// as sent, or null when the request could not be read (its answer's id is
// then null, JSON-RPC 2.0 §5).
func checkFraming(body, wantID []byte) framing {
	members, twice, err := responseMembers(body)
	if err != nil {
		return framing{problems: []string{err.Error()}}
	}
	var f framing
	for _, name := range twice {
		f.problems = append(f.problems, fmt.Sprintf("the member %q is given twice", name))
	}
	switch v, ok := members["jsonrpc"]; {
	case !ok:
		f.problems = append(f.problems, `no "jsonrpc" member (want "jsonrpc": "2.0")`)
	case !isString(v, protocol.JSONRPCVersion):
		f.problems = append(f.problems, fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, shown(v)))
	}
	switch v, ok := members["id"]; {
	case !ok:
		f.problems = append(f.problems, fmt.Sprintf(`no "id" member (want the request's id %s)`, wantID))
	case string(wantID) == "null" && string(v) != "null":
		f.problems = append(f.problems, fmt.Sprintf(`the id is %s, not null (the request could not be read)`, shown(v)))
	case !bytes.Equal(v, wantID):
		f.problems = append(f.problems, fmt.Sprintf(`the id is %s, not the request's id %s (it is echoed byte for byte)`, shown(v), wantID))
	}
	res, hasRes := members["result"]
	e, hasErr := members["error"]
	errNull, resNull := hasErr && string(e) == "null", hasRes && string(res) == "null"
	switch {
	case hasRes && hasErr && !errNull && !resNull:
		f.problems = append(f.problems, `both "result" and "error" (a response has exactly one)`)
	case hasErr && !errNull:
		if p := errorObjectProblem(e); p != "" {
			f.problems = append(f.problems, p)
		}
		f.tolerated = resNull
	case hasRes:
		f.tolerated = errNull
	case errNull:
		f.problems = append(f.problems, `neither "result" nor "error" ("error": null is no error)`)
	default:
		f.problems = append(f.problems, `neither "result" nor "error"`)
	}
	return f
}

// responseMembers reads the members of a response object, the last of a
// name given twice counting, and the response members given twice.
func responseMembers(body []byte) (members map[string]jsontext.Value, twice []string, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, errors.New("the answer is not a JSON object")
	}
	members = map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, nil, fmt.Errorf("the answer is not valid JSON: %s", protocol.Clip(err.Error()))
		}
		n := name.String() // before the decoder moves on: it voids the token
		v, err := dec.ReadValue()
		if err != nil {
			return nil, nil, fmt.Errorf("the answer is not valid JSON: %s", protocol.Clip(err.Error()))
		}
		if _, seen := members[n]; seen && (n == "jsonrpc" || n == "id" || n == "result" || n == "error") {
			twice = append(twice, n)
		}
		members[n] = v.Clone()
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, fmt.Errorf("the answer is not valid JSON: %s", protocol.Clip(err.Error()))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, nil, errors.New("the answer has more after its JSON object")
	}
	return members, twice, nil
}

// errorObjectProblem checks an error member: an object with an integer
// code and a string message (JSON-RPC 2.0 §5.1).
func errorObjectProblem(e jsontext.Value) string {
	var o map[string]jsontext.Value
	if e.Kind() != '{' || json.Unmarshal(e, &o) != nil {
		return fmt.Sprintf(`"error" is %s, not an object with "code" and "message"`, shown(e))
	}
	var bad []string
	if c, ok := o["code"]; !ok || !isInteger(c) {
		bad = append(bad, `an integer "code"`)
	}
	if m, ok := o["message"]; !ok || m.Kind() != '"' {
		bad = append(bad, `a string "message"`)
	}
	if len(bad) > 0 {
		return `the error object lacks ` + strings.Join(bad, " and ")
	}
	return ""
}

func isString(v jsontext.Value, want string) bool {
	var s string
	return v.Kind() == '"' && json.Unmarshal(v, &s) == nil && s == want
}

func isInteger(v jsontext.Value) bool {
	if v.Kind() != '0' {
		return false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return err == nil && f == math.Trunc(f)
}

// shown is a JSON value in a problem: cut short when long.
func shown(v jsontext.Value) string { return protocol.Clip(string(v)) }

// rpcCheck reports every answer's framing: one check, however many
// answers break it, since a framing defect is one of the agent's JSON-RPC
// layer, shared by its answers, and not of the league rules the other
// checks name. It shows the first answer that breaks it.
func (c *checker) rpcCheck() {
	c.xmu.Lock()
	xs := append([]*exchange(nil), c.exchanges...)
	c.xmu.Unlock()
	checked, broken, tolerated := 0, 0, 0
	var first *exchange
	for _, x := range xs {
		if len(x.got) == 0 {
			continue // no answer: the check that sent it says so
		}
		checked++
		if len(x.framing.problems) > 0 {
			broken++
			if first == nil {
				first = x
			}
		}
		if x.framing.tolerated {
			tolerated++
		}
	}
	switch {
	case checked == 0:
		c.add(Check{Name: nameRPC, Rule: ruleRPC, Detail: "not run: no answer came to look at"})
	case first != nil:
		c.result(nameRPC, ruleRPC, first, fmt.Sprintf("%d of %d answers break JSON-RPC 2.0; the first, to %s: %s",
			broken, checked, first.what, strings.Join(first.framing.problems, "; ")), "")
	default:
		detail := fmt.Sprintf(`%d answers, each with "jsonrpc": "2.0", its request's id and one of result or error`, checked)
		if tolerated > 0 {
			detail += fmt.Sprintf(` (%d with a null "error" beside the result, or a null "result" beside the error: taken as absent)`, tolerated)
		}
		c.result(nameRPC, ruleRPC, nil, "", detail)
	}
}

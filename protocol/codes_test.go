package protocol_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// errorCodesDoc is a copy of ../shared/spec/error-codes.md, the
// authoritative source for the table.
const errorCodesDoc = "../testdata/spec/error-codes.md"

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCodeTableMatchesSpec reads the quick reference table of
// error-codes.md §2 and compares every row with protocol.Codes().
func TestCodeTableMatchesSpec(t *testing.T) {
	is := is.New(t)
	doc := readDoc(t, errorCodesDoc)
	row := regexp.MustCompile(`(?m)^\| \*\*(E\d{3})\*\* \| (\w+) \| (\w+) \| (✅ Yes|❌ No) \| ([^|]+?) \| (\d)`)
	rows := row.FindAllStringSubmatch(doc, -1)
	is.Equal(len(rows), 18) // rows in error-codes.md §2
	codes := protocol.Codes()
	is.Equal(len(codes), 18)
	for i, r := range rows {
		c := codes[i]
		is.Equal(string(c.Code), r[1])           // code order
		is.Equal(c.Name, r[2])                   // name
		is.Equal(string(c.Severity), r[3])       // severity
		is.Equal(c.Retryable, r[4] == "✅ Yes")   // retryable
		is.Equal(c.Category, r[5])               // category
		is.Equal(strconv.Itoa(c.ExitCode), r[6]) // exit code
		info, ok := c.Code.Info()
		is.True(ok)
		is.Equal(info, c)
	}
}

// TestExitCodesMatchSpec checks §3's mapping from exit code to E-codes.
func TestExitCodesMatchSpec(t *testing.T) {
	is := is.New(t)
	doc := readDoc(t, errorCodesDoc)
	sec := between(t, doc, "## 3. Exit Code Mapping", "## 4.")
	row := regexp.MustCompile(`(?m)^\| \*\*(\d)\*\* \| [^|]+\| ([E\d, ]+)`)
	seen := 0
	for _, r := range row.FindAllStringSubmatch(sec, -1) {
		exit, _ := strconv.Atoi(r[1])
		for _, c := range strings.Split(r[2], ",") {
			code := protocol.Code(strings.TrimSpace(c))
			is.Equal(code.ExitCode(), exit) // exit code of code
			seen++
		}
	}
	is.Equal(seen, 18) // every code has an exit code in §3
}

// TestRetryableSetMatchesSpec checks §1 and Appendix B.
func TestRetryableSetMatchesSpec(t *testing.T) {
	is := is.New(t)
	doc := readDoc(t, errorCodesDoc)
	app := between(t, doc, "**✅ Retryable (7 codes):**", "**❌ Non-Retryable")
	want := regexp.MustCompile(`E\d{3}`).FindAllString(app, -1)
	is.Equal(len(want), 7)
	var got []string
	for _, c := range protocol.Codes() {
		if c.Retryable {
			got = append(got, string(c.Code))
		}
	}
	is.Equal(got, want)
	is.True(!protocol.Code("E999").Retryable()) // unknown codes are not retried
	is.True(!protocol.Code("").Retryable())
}

// TestJSONRPCCodesMatchSpec checks the codes §7.3 names; the others use
// -32000-N as documented in the README.
func TestJSONRPCCodesMatchSpec(t *testing.T) {
	is := is.New(t)
	doc := readDoc(t, errorCodesDoc)
	sec := between(t, doc, "**JSON-RPC Error Code Mapping:**", "## 8.")
	line := regexp.MustCompile("(?m)^- `(-\\d+)`: [^(]*\\(([^)]*)\\)")
	named := map[protocol.Code]bool{}
	for _, m := range line.FindAllStringSubmatch(sec, -1) {
		want, _ := strconv.Atoi(m[1])
		for _, c := range regexp.MustCompile(`E\d{3}`).FindAllString(m[2], -1) {
			is.Equal(protocol.Code(c).JSONRPC(), want) // §7.3 code
			named[protocol.Code(c)] = true
		}
	}
	is.Equal(len(named), 7) // E001 E002 E003 E010 E011 E012 E015
	for _, c := range protocol.Codes() {
		if !named[c.Code] {
			n, _ := strconv.Atoi(string(c.Code[1:]))
			is.Equal(c.JSONRPC, -32000-n) // unnamed codes are -32000-N
		}
	}
	is.Equal(protocol.Code("E999").JSONRPC(), protocol.CodeInternalError)
	is.Equal(protocol.Code("bogus").ExitCode(), 4)
	is.Equal(protocol.Code("E17").Name(), "UNKNOWN_ERROR")
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("%q not found", from)
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		s = s[:j]
	}
	return s
}

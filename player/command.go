package player

import (
	"errors"
	"fmt"
	"strings"
)

// ParseCommand splits the command line of an exec bot into its words as a
// POSIX shell splits a simple command, without running a shell: words are
// separated by blanks; 'single quotes' keep everything; "double quotes"
// keep everything but \" \\ \$ \` (and a backslash before a newline, which
// joins lines); a backslash outside quotes keeps the next character.
//
// What only a shell would do is refused rather than passed on as text:
// unquoted | & ; < > ( ) $ ` * ? [ ], a word that starts with ~ or #, and
// an assignment before the program (FOO=1 bot). The error says how to get
// it: quote the character, use env, or ask for a shell with sh -c '…'.
func ParseCommand(s string) ([]string, error) {
	var (
		words  []string
		word   strings.Builder
		inWord bool // a word has begun, even if empty ('')
		quoted bool // some of the word was quoted
	)
	end := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord, quoted = false, false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			end()
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, commandError(s, "a ' is not closed")
			}
			word.WriteString(string(rs[i+1 : j]))
			inWord, quoted, i = true, true, j
		case c == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					switch rs[j+1] {
					case '"', '\\', '$', '`':
						word.WriteRune(rs[j+1])
						j++
						continue
					case '\n':
						j++
						continue
					}
				}
				word.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, commandError(s, `a " is not closed`)
			}
			inWord, quoted, i = true, true, j
		case c == '\\':
			if i+1 == len(rs) {
				return nil, commandError(s, "it ends with a \\")
			}
			i++
			if rs[i] != '\n' {
				word.WriteRune(rs[i])
				inWord, quoted = true, true
			}
		case strings.ContainsRune("|&;<>()$`", c):
			return nil, commandError(s, fmt.Sprintf("%q needs a shell: quote it, or write sh -c '…' to use one", c))
		case strings.ContainsRune("*?[]", c):
			return nil, commandError(s, fmt.Sprintf("%q would be a pattern in a shell, and no shell expands it here: quote it, or write sh -c '…'", c))
		case (c == '~' || c == '#') && !inWord:
			return nil, commandError(s, fmt.Sprintf("a word starting with %q needs a shell: give the full path, or quote it", c))
		case c == '=' && len(words) == 0 && !quoted:
			return nil, commandError(s, "a variable assignment before the program needs a shell: write env NAME=value program …")
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	end()
	if len(words) == 0 || words[0] == "" {
		return nil, commandError(s, "no program to run")
	}
	return words, nil
}

func commandError(s, why string) error {
	return fmt.Errorf("command %q: %w", s, errors.New(why))
}

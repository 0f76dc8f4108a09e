package yamlstrict

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml4 "go.yaml.in/yaml/v4"
)

// syntaxLine reads the line yaml.v3 puts in its syntax errors ("yaml: line
// 7: mapping values are not allowed in this context").
var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxProblem places a syntax error at its line and column. yaml.v3 says
// only the line; its successor go.yaml.in/yaml/v4, whose scanner is the same
// libyaml port, keeps the column in a *LoadError, so the document is scanned
// again by it for the place. The usual mistakes of a hand-edited file (a tab,
// a key indented off its siblings, an unquoted ": ", an unclosed quote or
// bracket) get a plain sentence instead of the scanner's words.
func syntaxProblem(data []byte, err error) Problem {
	var n yaml4.Node
	var le *yaml4.LoadError
	if err4 := yaml4.Unmarshal(data, &n); errors.As(err4, &le) && le.Mark.Line > 0 {
		if p, ok := tabProblem(data, le.Mark.Line); ok {
			return p
		}
		if msg := plainSyntax(data, le); msg != "" {
			return Problem{Line: le.Mark.Line, Column: le.Mark.Column, Message: "YAML syntax: " + msg}
		}
		msg := "YAML syntax: " + le.Message
		if le.ContextMsg != "" && le.ContextMark.Line > 0 {
			msg += fmt.Sprintf(" (%s started at %d:%d)", le.ContextMsg, le.ContextMark.Line, le.ContextMark.Column)
		}
		return Problem{Line: le.Mark.Line, Column: le.Mark.Column, Message: msg}
	}
	msg := err.Error()
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Line: line, Message: "YAML syntax: " + m[2]}
	}
	return Problem{Message: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// tabProblem finds the first line up to the error's whose indentation holds
// a tab: the scanner's complaint about it ("found character that cannot
// start any token") never says tab.
func tabProblem(data []byte, upTo int) (Problem, bool) {
	for i, line := range strings.SplitN(string(data), "\n", upTo+1) {
		if i >= upTo {
			break
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if col := strings.IndexByte(indent, '\t'); col >= 0 {
			return Problem{Line: i + 1, Column: col + 1,
				Message: fmt.Sprintf("YAML syntax: line %d is indented with a tab; YAML indents with spaces only", i+1)}, true
		}
	}
	return Problem{}, false
}

// plainSyntax says what the scanner's error usually means, or "".
func plainSyntax(data []byte, le *yaml4.LoadError) string {
	at := fmt.Sprintf("%d:%d", le.ContextMark.Line, le.ContextMark.Column)
	switch {
	case le.Message == "did not find expected key", le.Message == "did not find expected '-' indicator",
		le.Message == "block sequence entries are not allowed in this context":
		return fmt.Sprintf("line %d is indented %s, which lines up with no key above it; "+
			"keys of one mapping (and items of one list) start in the same column, and what belongs to a key is indented more than the key",
			le.Mark.Line, spaces(indentOf(data, le.Mark.Line)))
	case le.Message == "mapping values are not allowed in this context":
		return "\": \" inside a value; quote a value that holds \": \" (key: \"a: b\"), or indent this line like the keys above it " +
			"(a line indented more than the key above continues that key's value)"
	case strings.HasPrefix(le.Message, "found unexpected end of stream") && strings.Contains(le.ContextMsg, "quoted scalar"):
		return "the quoted text opened at " + at + " is not closed"
	case strings.HasPrefix(le.Message, "did not find expected ',' or ']'"):
		return "the [ list opened at " + at + " is not closed with ] (or an item lacks its comma)"
	case strings.HasPrefix(le.Message, "did not find expected ',' or '}'"):
		return "the { mapping opened at " + at + " is not closed with } (or an entry lacks its comma)"
	}
	return ""
}

// indentOf is how many spaces line (1-based) of data starts with.
func indentOf(data []byte, line int) int {
	lines := strings.SplitN(string(data), "\n", line+1)
	if line < 1 || line > len(lines) {
		return 0
	}
	l := lines[line-1]
	return len(l) - len(strings.TrimLeft(l, " "))
}

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}

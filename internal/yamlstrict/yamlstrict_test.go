package yamlstrict

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type sample struct {
	Name  string            `yaml:"name"`
	Count *int              `yaml:"count"`
	Ratio float64           `yaml:"ratio"`
	Tags  []string          `yaml:"tags"`
	Env   map[string]string `yaml:"env"`
	Inner struct {
		Path string `yaml:"path"`
	} `yaml:"inner"`
}

func TestDecode(t *testing.T) {
	var s sample
	res, err := Decode([]byte("base: &b {path: /x}\n"), &s)
	require.NoError(t, err)
	require.Equal(t, []Problem{{Path: "base", Line: 1, Column: 1, Message: "unknown key"}}, res.Problems)

	s = sample{}
	res, err = Decode([]byte("name: n\ncount: 3\nratio: 1.5\ntags: [a, b]\nenv: {A: x}\ninner:\n  path: /p\n"), &s)
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.Equal(t, 3, *s.Count)
	require.Equal(t, []string{"a", "b"}, s.Tags)
	require.Equal(t, map[string]string{"A": "x"}, s.Env)
	require.Equal(t, "/p", s.Inner.Path)
	require.Equal(t, Pos{7, 3}, res.Keys["inner.path"])
	require.Equal(t, Pos{4, 8}, res.Keys["tags[0]"])

	s = sample{}
	res, err = Decode([]byte("nmae: x\ncount: ~\nratio: lots\ntags: x\ninner: {pth: y}\n"), &s)
	require.NoError(t, err)
	require.Nil(t, s.Count, "null leaves the zero value")
	var got []string
	for _, p := range res.Problems {
		got = append(got, p.String())
	}
	require.Equal(t, []string{
		"1:1: nmae: unknown key (did you mean name?)",
		`3:8: ratio: want a number, got "lots"`,
		`4:7: tags: want a list, got "x"`,
		"5:9: inner.pth: unknown key (did you mean inner.path?)",
	}, got)

	_, err = Decode([]byte("  \n# only a comment\n"), &s)
	require.ErrorIs(t, err, ErrEmpty)
	_, err = Decode([]byte("a: [1,\nb: 2\n"), &s)
	var syn *SyntaxError
	require.True(t, errors.As(err, &syn))
	require.Positive(t, syn.Problem.Line)
}

// The usual mistakes of a hand-edited file read as what to fix, not as the
// YAML scanner's words, at the place to fix them.
func TestSyntaxErrorsSayWhatToFix(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"tab indenting a key", "version: 1\nstore:\n\tpath: x\n",
			"3:1: YAML syntax: line 3 is indented with a tab; YAML indents with spaces only"},
		{"tab after spaces", "version: 1\nstore:\n  path: x\n  \tfoo: y\n",
			"4:3: YAML syntax: line 4 is indented with a tab; YAML indents with spaces only"},
		{"key indented less than its siblings", "version: 1\nstore:\n    path: x\n  foo: y\n",
			"4:3: YAML syntax: line 4 is indented 2 spaces, which lines up with no key above it; keys of one mapping (and items of one list) start in the same column, and what belongs to a key is indented more than the key"},
		{"list item out of line", "approvers:\n  users:\n    - a\n  - b\n",
			"4:3: YAML syntax: line 4 is indented 2 spaces, which lines up with no key above it; keys of one mapping (and items of one list) start in the same column, and what belongs to a key is indented more than the key"},
		{"key indented more than its siblings", "version: 1\nstore:\n  path: x\n   foo: y\n",
			`4:7: YAML syntax: ": " inside a value; quote a value that holds ": " (key: "a: b"), or indent this line like the keys above it (a line indented more than the key above continues that key's value)`},
		{"unquoted colon", "store:\n  path: a: b\n",
			`2:10: YAML syntax: ": " inside a value; quote a value that holds ": " (key: "a: b"), or indent this line like the keys above it (a line indented more than the key above continues that key's value)`},
		{"unclosed quote", "a: \"x\n",
			"2:1: YAML syntax: the quoted text opened at 1:4 is not closed"},
		{"unclosed list", "a: [1,\nb: 2\n",
			"3:1: YAML syntax: the [ list opened at 1:4 is not closed with ] (or an item lacks its comma)"},
		{"unclosed mapping", "version: 1\nstore: {path: x\n",
			"3:1: YAML syntax: the { mapping opened at 2:8 is not closed with } (or an entry lacks its comma)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s sample
			_, err := Decode([]byte(tt.doc), &s)
			var syn *SyntaxError
			require.ErrorAs(t, err, &syn)
			require.Equal(t, tt.want, err.Error())
		})
	}
}

// An alias bomb (an anchor of many values, aliased many times) is refused
// before anything is decoded, at the line of the alias that crosses
// MaxValues; aliases within it decode as usual.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("tags: &t [")
	for i := 0; i < 1000; i++ {
		b.WriteString("x,")
	}
	b.WriteString("x]\nenv:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "  k%d: *t\n", i)
	}
	var s sample
	res, err := Decode([]byte(b.String()), &s)
	var syn *SyntaxError
	require.ErrorAs(t, err, &syn)
	require.Equal(t, 2+MaxValues/1002, syn.Problem.Line, "the alias that crosses the bound")
	require.Contains(t, err.Error(), "alias *t expands the document past 50000 values")
	require.Empty(t, res.Keys, "nothing decoded")
	require.Nil(t, s.Env)

	// Nested: each level doubles; 30 levels stand for a billion values.
	b.Reset()
	b.WriteString("a0: &a0 [x, x]\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	_, err = Decode([]byte(b.String()), &s)
	require.ErrorAs(t, err, &syn)
	require.Contains(t, err.Error(), "expands the document past")

	s = sample{}
	res, err = Decode([]byte("name: &n shared\ninner: {path: *n}\ntags: [*n, *n]\n"), &s)
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.Equal(t, "shared", s.Inner.Path)
	require.Equal(t, []string{"shared", "shared"}, s.Tags)
}

// .nan and .inf are not numbers a bound can be checked against.
func TestNumbersAreFinite(t *testing.T) {
	for _, v := range []string{".nan", ".NaN", ".inf", "-.Inf", "+.inf"} {
		var s sample
		res, err := Decode([]byte("ratio: "+v+"\n"), &s)
		require.NoError(t, err)
		require.Equal(t, []string{fmt.Sprintf("1:8: ratio: want a finite number, got %q", v)}, problemStrings(res), v)
		require.Zero(t, s.Ratio)
	}
}

func problemStrings(res Result) []string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, p.String())
	}
	return out
}

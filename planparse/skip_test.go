package planparse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
)

func TestSkipValue(t *testing.T) {
	valid := []string{
		`""`, `"a\"b"`, `"\\"`, `"é\u0022x"`, `{}`, `[]`, `{"a":"}","b":["]",{"c":"{"}]}`,
		`[1,-2.5e3,true,false,null]`, `12`, `-0.5`, `true`, `null`,
		`{"a" : [ 1 , { "b" : null } ] }`, strings.Repeat("[", maxSkipDepth) + strings.Repeat("]", maxSkipDepth),
	}
	for _, v := range valid {
		t.Run("valid "+trim(v), func(t *testing.T) {
			require.True(t, jsontext.Value(v).IsValid(), "test input is valid JSON")
			e, err := skipValue([]byte(v+`,"tail"`), 0)
			require.NoError(t, err)
			require.Equal(t, len(v), e)
		})
	}
	invalid := []struct{ name, input, want string }{
		{"empty", ``, "unexpected end of input at offset 0"},
		{"unterminated string", `"abc`, "unterminated string at offset 0"},
		{"escaped last quote", `{"a":"abc\"}`, "unterminated string at offset 5"},
		{"unclosed object", `{"a":[1,2]`, "unexpected end of input at offset 10"},
		{"unclosed array", `[[]`, "unexpected end of input at offset 3"},
		{"mismatched close", `{"a":[1}`, `mismatched '}' at offset 7`},
		{"mismatched array close", `[{"a":1]`, `mismatched ']' at offset 7`},
		{"close first", `}`, `invalid character '}' at the start of a value at offset 0`},
		{"stray character", `{"a":x}`, `invalid character 'x' at offset 5`},
		{"stray character at the start", `xyz`, `invalid character 'x' at the start of a value at offset 0`},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", "invalid UTF-8 in the value at offset 0"},
		{"too deep", strings.Repeat("[", maxSkipDepth+1) + strings.Repeat("]", maxSkipDepth+1), "nested too deeply at offset 9999"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			_, err := skipValue([]byte(tt.input), 0)
			require.EqualError(t, err, tt.want)
		})
	}
}

func trim(s string) string {
	if len(s) > 30 {
		return s[:30]
	}
	return s
}

// skipValue ends where jsontext does on every valid value, and on any input
// returns an error or an end within the input, never a panic.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `{"x":[1,"]"]}`, `[{"a":"\\\\"}]`, `{"a":[}`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := skipValue(b, 0)
		if err == nil && (e <= 0 || e > len(b)) {
			t.Fatalf("skipValue(%q) = %d outside the input", b, e)
		}
		if v := jsontext.Value(bytes.TrimRight(b, " \t\r\n")); len(v) > 0 && !isSpace(v[0]) && v.IsValid() {
			if err != nil || e != len(v) {
				t.Fatalf("skipValue(%q) = %d, %v; want %d", v, e, err, len(v))
			}
		}
	})
}

// TestSkipString checks skipString, which finds quotes and counts the
// backslashes before each, against a byte-by-byte reading of the escapes, on
// runs of backslashes of every length before quotes and at the end of input.
func TestSkipString(t *testing.T) {
	reference := func(b []byte, i int) (int, bool) {
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++ // escapes the next byte
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	}
	var inputs []string
	for n := range 7 {
		run := strings.Repeat(`\`, n)
		for _, tail := range []string{``, `"`, `x"`, `"",`, `""`, `\`, `é"`, strings.Repeat("a", 40) + `"`} {
			inputs = append(inputs, `"`+run+tail, `"ab`+run+tail, `"`+strings.Repeat("b", 33)+run+tail, `"\"`+run+tail)
		}
	}
	for _, in := range inputs {
		for _, lead := range []string{"", `x\\`} { // bytes before the string are not counted
			b := []byte(lead + in)
			e, ok := skipString(b, len(lead))
			we, wok := reference(b, len(lead))
			require.Equal(t, wok, ok, "%q", b)
			require.Equal(t, we, e, "%q", b)
		}
	}
}

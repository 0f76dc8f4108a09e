package planparse

import (
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
)

func TestCheckValue(t *testing.T) {
	valid := []string{
		`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9"`, `"\ud83d\ude00"`, `"é"`,
		`0`, `-0`, `12`, `-1.5`, `1e5`, `1E+5`, `2.5e-3`, `null`, `true`, `false`,
		`{}`, `[]`, `{"a":[1,{"b":null}]}`, `{"a":1,"a":2}`,
	}
	for _, v := range valid {
		t.Run("valid "+v, func(t *testing.T) {
			require.NoError(t, checkValue([]byte(v)))
		})
	}
	invalid := []string{
		``, `"`, `"a`, "\"a\tb\"", `"\x"`, `"\u12"`, `"\u12g4"`, `"\ud800"`, `"\ud83d\u0041"`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1_000`, `Inf`, `NaN`,
		`nul`, `nulll`, `tru`, `True`, `fals`, `{"a":}`, `[1,]`, `{"a" 1}`,
	}
	for _, v := range invalid {
		t.Run("invalid "+v, func(t *testing.T) {
			require.Error(t, checkValue([]byte(v)))
		})
	}
}

// checkValue agrees with jsontext (duplicate names allowed) on every value in
// valid UTF-8, which ParseBytes checks for each whole entry before.
func FuzzCheckValue(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\u00e9"`, `"\ud83d\ude00"`, `-1.5e3`, `01`, `{"a":[1]}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Values reach checkValue delimited, without white space around them.
		if !utf8.Valid(b) || len(b) > 0 && (isSpace(b[0]) || isSpace(b[len(b)-1])) {
			return
		}
		want := jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true))
		if got := checkValue(b) == nil; got != want {
			t.Fatalf("checkValue(%q) valid = %v, jsontext says %v", b, got, want)
		}
	})
}

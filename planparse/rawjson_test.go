package planparse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
)

func TestValueEnd(t *testing.T) {
	tests := []string{
		`""`, `"a"`, `"\""`, `"\\"`, `"\\\""`, `"0123456789abcdef\"0123456789"`, `"01234567\\"`,
		`"` + strings.Repeat(`\\`, 9) + `"`, `"é\u0022x"`,
		`{}`, `[]`, `{"a":"}","b":["]",{"c":"{"}]}`, `[1,-2.5e3,true,false,null]`,
		`12`, `-0.5`, `true`, `null`,
	}
	for _, v := range tests {
		t.Run(v, func(t *testing.T) {
			require.True(t, jsontext.Value(v).IsValid(), "test input is valid JSON")
			e, err := valueEnd([]byte(v+`,"tail"`), 0)
			require.NoError(t, err)
			require.Equal(t, len(v), e)
		})
	}
	for _, v := range []string{`"abc`, `"abc\"`, `{"a":1`, `[`, ``, `,`} {
		_, err := valueEnd([]byte(v), 0)
		require.Error(t, err, v)
	}
}

// valueEnd agrees with jsontext on where every valid JSON value ends.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `{"x":[1,"]"]}`, `[{"a":"\\\\"}]`, `"0123456789\"abcdef"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v := jsontext.Value(bytes.TrimSpace(b))
		if !v.IsValid() {
			return
		}
		e, err := valueEnd(v, 0)
		if err != nil || e != len(v) {
			t.Fatalf("valueEnd(%q) = %d, %v; want %d", v, e, err, len(v))
		}
	})
}

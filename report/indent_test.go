package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// indent must write exactly what json.MarshalIndent writes: the JSON report's
// bytes are what users' scripts and the corpus goldens read.
func TestIndentIsMarshalIndent(t *testing.T) {
	values := []any{
		map[string]any{},
		[]any{},
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": nil, "d": true, "e": 1.5e300, "f": -0},
		[]any{[]any{[]any{}}, map[string]any{"x": []any{map[string]any{}}}},
		map[string]any{`q"uo{te}`: `a "string" with [brackets], {braces}: and, commas`},
		map[string]any{"esc": "back\\slash\\\" \\", "ctl": "\x00\x1f\t\n", "html": "<a href='x'>&</a>", "u": "\u2028é💥"},
		map[string]any{"k\\": "\\", "n": []any{1, "2", false, nil, []any{"]"}, map[string]any{"}": "{"}}},
		"top-level string",
		42,
	}
	for _, v := range values {
		want, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		compact, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(indent(nil, compact)))
	}
}

func FuzzIndentIsMarshalIndent(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"}"}],"d":{}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		want, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		compact, err := json.Marshal(v)
		require.NoError(t, err)
		if got := indent(nil, compact); !bytes.Equal(want, got) {
			t.Fatalf("indent(%s):\n%s\nwant\n%s", compact, got, want)
		}
	})
}

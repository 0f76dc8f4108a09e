package yamlstrict

import (
	"errors"
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
	_, err = Decode([]byte("store:\n  path: a: b\n"), &s)
	require.True(t, errors.As(err, &syn))
	require.Equal(t, "2:10: YAML syntax: mapping values are not allowed in this context", err.Error())
}

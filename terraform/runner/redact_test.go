package runner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedact(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\nabcdEFGH\n-----END RSA PRIVATE KEY-----"
	tests := []struct {
		name     string
		in       string
		want     string
		mustHide []string
	}{
		{name: "password assignment", in: "conn: password=hunter22 host=db", want: "conn: password=[REDACTED] host=db"},
		{name: "json secret", in: `{"client_secret": "s3cr3t-value"}`, want: `{"client_secret": [REDACTED]}`},
		{name: "authorization header", in: "Authorization: Bearer abc.def.ghi\nnext", want: "Authorization: [REDACTED]\nnext"},
		{name: "github installation token", in: "token ghs_16C7e42F292c6912E7710c838347Ae178B4a used", mustHide: []string{"ghs_16C7e42F292c6912E7710c838347Ae178B4a"}},
		{name: "fine-grained pat", in: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", want: "[REDACTED]"},
		{name: "aws key id", in: "key AKIAIOSFODNN7EXAMPLE ok", want: "key [REDACTED] ok"},
		{name: "url credentials", in: "postgres://bot:pa55word@db:5432/x", want: "postgres://bot:[REDACTED]@db:5432/x"},
		{name: "private key", in: "before\n" + pem + "\nafter", want: "before\n[REDACTED]\nafter"},
		{name: "private key cut at the end", in: "x\n-----BEGIN PRIVATE KEY-----\nMIIEabc", want: "x\n[REDACTED]"},
		{name: "private key whose start was cut", in: "MIIEabc\ndef\n-----END PRIVATE KEY-----\nrest", want: "[REDACTED]\nrest"},
		{name: "terraform masked values stay", in: `  + password = (sensitive value)
  ~ token    = (known after apply)`, want: `  + password = (sensitive value)
  ~ token    = (known after apply)`},
		{name: "plain text untouched", in: "Plan: 1 to add, 0 to change, 0 to destroy.", want: "Plan: 1 to add, 0 to change, 0 to destroy."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if tt.want != "" {
				require.Equal(t, tt.want, got)
			}
			for _, s := range tt.mustHide {
				require.NotContains(t, got, s)
			}
		})
	}
}

func TestRedactorValues(t *testing.T) {
	r := NewRedactor("db-pass-1", `quo"te\pass`, "abc", "multi\nline-secret-part")
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "literal", in: "value is db-pass-1.", want: "value is [REDACTED]."},
		{name: "json escaped form", in: `{"v":"quo\"te\\pass"}`, want: `{"v":"[REDACTED]"}`},
		{name: "short values are not replaced", in: "abc def", want: "abc def"},
		{name: "one line of a multi-line secret", in: "tail: line-secret-part", want: "tail: [REDACTED]"},
		{name: "patterns still apply", in: "password=zzzzzz", want: "password=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, r.Redact(tt.in))
		})
	}
	t.Run("longest value first", func(t *testing.T) {
		r := NewRedactor("secret", "secret-and-more")
		require.Equal(t, "[REDACTED]", r.Redact("secret-and-more"))
	})
	t.Run("nil redactor", func(t *testing.T) {
		var nr *Redactor
		require.Equal(t, "a password: [REDACTED]", nr.Redact("a password: xyzzy1"))
	})
}

func TestTailBuffer(t *testing.T) {
	t.Run("keeps everything under the bound", func(t *testing.T) {
		b := newTailBuffer(100)
		_, _ = b.Write([]byte("one\ntwo\n"))
		require.Equal(t, "one\ntwo\n", b.String())
	})
	t.Run("drops the partial first line when cut", func(t *testing.T) {
		b := newTailBuffer(16)
		_, _ = b.Write([]byte("password=abcdefgh-secret\nlast line\n"))
		require.Equal(t, "last line\n", b.String())
		require.LessOrEqual(t, len(b.buf), 16)
	})
	t.Run("bounded across many writes", func(t *testing.T) {
		b := newTailBuffer(64)
		for range 1000 {
			_, _ = b.Write([]byte(strings.Repeat("x", 10) + "\n"))
		}
		require.LessOrEqual(t, len(b.buf), 64)
		require.True(t, strings.HasSuffix(b.String(), "xxxxxxxxxx\n"))
	})
}

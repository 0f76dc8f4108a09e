package serverconfig

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shardgate/shardgate/internal/yamlstrict"
)

// MinSecretLength is the shortest webhook secret, coordinator password or
// other credential the configuration accepts: the redactor leaves values
// under four characters alone, and a guessable secret protects nothing.
const MinSecretLength = 8

// Load reads and validates a server configuration file. Secrets come from
// the files and environment variables it names; lookupEnv is os.LookupEnv in
// production. Every problem is reported at once.
func Load(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, lookupEnv)
}

// Error lists every problem of a server configuration. Each problem
// starts with where it is ("server.yaml:7:3: store.pth: unknown key"), as
// far as the file says.
type Error struct {
	Source   string
	Problems []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %d problem(s): %s", e.Source, len(e.Problems), strings.Join(e.Problems, "; "))
}

// Parse validates a server configuration held in memory.
func Parse(source string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	var raw rawConfig
	res, err := yamlstrict.Decode(data, &raw)
	var syntax *yamlstrict.SyntaxError
	switch {
	case errors.Is(err, yamlstrict.ErrEmpty):
		return nil, &Error{Source: source, Problems: []string{source + ": file is empty: it needs at least 'version: 1'"}}
	case errors.As(err, &syntax):
		return nil, &Error{Source: source, Problems: []string{located(source, syntax.Problem)}}
	}
	v := &validator{lookupEnv: lookupEnv, source: source, keys: res.Keys}
	for _, p := range res.Problems {
		v.problems = append(v.problems, located(source, p))
	}
	cfg := v.config(&raw)
	if len(v.problems) > 0 {
		return nil, &Error{Source: source, Problems: v.problems}
	}
	return cfg, nil
}

// located is a decoding problem with the file's name in front.
func located(source string, p yamlstrict.Problem) string {
	if p.Line > 0 {
		return source + ":" + p.String()
	}
	return source + ": " + p.String()
}

type validator struct {
	problems  []string
	lookupEnv func(string) (string, bool)
	source    string
	// keys are where each key of the file is (dotted path → line:column).
	keys map[string]yamlstrict.Pos
}

// addf adds a problem. Its message starts with the key it is about
// ("queue.size must be positive", "coordinators[0]: set …"); where that key
// is in the file is put in front of it.
func (v *validator) addf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	v.problems = append(v.problems, v.locate(msg)+msg)
}

// locate is "source:line:col: " for the key a message starts with (or the
// nearest enclosing key the file has), "source: " when the file has none of
// them (a key that is missing).
func (v *validator) locate(msg string) string {
	key, _, _ := strings.Cut(msg, " ")
	key = strings.TrimSuffix(key, ":")
	for key != "" {
		if p, ok := v.keys[key]; ok {
			return fmt.Sprintf("%s:%d:%d: ", v.source, p.Line, p.Column)
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return v.source + ": "
}

func (v *validator) duration(field, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		v.addf("%s %q is not a positive duration such as 30s or 5m", field, s)
		return def
	}
	return d
}

// secretFile reads a secret from a file that must exist and be non-empty.
func (v *validator) secretFile(field, path string) Secret {
	data, err := os.ReadFile(path)
	if err != nil {
		v.addf("%s: cannot read %s: %v", field, path, errors.Unwrap(err))
		return Secret{}
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		v.addf("%s: %s is empty", field, path)
	}
	return NewSecret(s)
}

// minLength refuses a credential shorter than MinSecretLength, naming where
// it came from and never its value.
func (v *validator) minLength(field string, s Secret) {
	if n := len(s.Reveal()); n > 0 && n < MinSecretLength {
		v.addf("%s: the secret is %d characters; use at least %d (for example: openssl rand -hex 32)", field, n, MinSecretLength)
	}
}

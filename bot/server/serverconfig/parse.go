package serverconfig

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
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

// Parse validates a server configuration held in memory. Its problems come
// in the order of the file's lines (those of missing keys last), as an
// editor walks them.
func Parse(source string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	var raw rawConfig
	res, err := yamlstrict.Decode(data, &raw)
	var syntax *yamlstrict.SyntaxError
	switch {
	case errors.Is(err, yamlstrict.ErrEmpty):
		return nil, &Error{Source: source, Problems: []string{source + ": file is empty: it needs at least 'version: 1'"}}
	case errors.As(err, &syntax):
		return nil, &Error{Source: source, Problems: []string{located(source, syntax.Problem).text}}
	}
	v := &validator{lookupEnv: lookupEnv, source: source, keys: res.Keys}
	for _, p := range res.Problems {
		v.problems = append(v.problems, located(source, p))
	}
	cfg := v.config(&raw)
	if len(v.problems) > 0 {
		return nil, &Error{Source: source, Problems: v.sorted()}
	}
	return cfg, nil
}

// problem is one line of an *Error and where in the file it is (zero when
// the file does not have the key).
type problem struct {
	at   yamlstrict.Pos
	text string
}

// located is a decoding problem with the file's name in front.
func located(source string, p yamlstrict.Problem) problem {
	if p.Line > 0 {
		return problem{yamlstrict.Pos{Line: p.Line, Column: p.Column}, source + ":" + p.String()}
	}
	return problem{text: source + ": " + p.String()}
}

type validator struct {
	problems  []problem
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
	at := v.locate(msg)
	if at.Line == 0 {
		v.problems = append(v.problems, problem{text: v.source + ": " + msg})
		return
	}
	v.problems = append(v.problems, problem{at, fmt.Sprintf("%s:%d:%d: %s", v.source, at.Line, at.Column, msg)})
}

// locate is where the key a message starts with is (or the nearest
// enclosing key the file has); zero when the file has none of them (a key
// that is missing).
func (v *validator) locate(msg string) yamlstrict.Pos {
	key, _, _ := strings.Cut(msg, " ")
	key = strings.TrimSuffix(key, ":")
	for key != "" {
		if p, ok := v.keys[key]; ok {
			return p
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return yamlstrict.Pos{}
}

// sorted are the problems by line and column, those without a place last,
// each group in the order found.
func (v *validator) sorted() []string {
	slices.SortStableFunc(v.problems, func(a, b problem) int {
		if (a.at.Line == 0) != (b.at.Line == 0) {
			return cmp.Compare(b.at.Line, a.at.Line) // a place before none
		}
		return cmp.Or(cmp.Compare(a.at.Line, b.at.Line), cmp.Compare(a.at.Column, b.at.Column))
	})
	out := make([]string, len(v.problems))
	for i, p := range v.problems {
		out[i] = p.text
	}
	return out
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

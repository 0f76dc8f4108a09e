package runner

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/shardgate/shardgate/internal/redact"
)

// Redacted replaces every secret the runner removes from output.
const Redacted = redact.Redacted

// minSecretLen is the shortest literal secret replaced verbatim: replacing
// one- to three-character values everywhere would shred the output while
// protecting nothing a guess could not find.
const minSecretLen = 4

// secretPatterns match things that look like credentials whatever the job was
// told. Each keeps the name (group 1) so the reader still sees what was hidden.
var secretPatterns = []*regexp.Regexp{
	// password=..., token: ..., "client_secret": "..." (quoted or not).
	regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)["']?\s*[=:]\s*)("[^"\n]*"|'[^'\n]*'|[^\s"',;&]+)`),
	// Authorization: Bearer xxx / Basic xxx
	regexp.MustCompile(`(?i)((?:proxy-)?authorization:\s*)(\S+(?:[ \t]+\S+)?)`),
	// Credentials in URLs: scheme://user:password@host
	regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]+:)([^@\s/]+)(@)`),
}

// secretTokens are credentials recognisable by their shape alone.
var secretTokens = []*regexp.Regexp{
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}\b`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}\b`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`),
	// A whole PEM private key, and one whose end was cut off by the tail.
	regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`),
}

// pemEndOnly catches the rest of a key whose BEGIN line fell before the kept tail.
var pemEndOnly = regexp.MustCompile(`(?s)\A.*?-----END [A-Z ]*PRIVATE KEY-----`)

// Redact removes everything that looks like a credential from s: tokens,
// passwords in assignments and URLs, authorization headers, private keys.
// Jobs also remove the literal values they were told are secret (see
// Redactor); use this package-level form only where no job is at hand.
func Redact(s string) string {
	return (*Redactor)(nil).Redact(s)
}

// Redactor removes known secret values plus everything Redact removes.
// The zero value and nil are valid and redact patterns only.
type Redactor struct {
	values []string // longest first, so a secret containing another goes whole
}

// NewRedactor returns a Redactor for the given secret values. Values shorter
// than four characters are ignored (see minSecretLen).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add registers more secret values. It is not safe to call concurrently with
// Redact; jobs add all their secrets before running anything.
func (r *Redactor) Add(secrets ...string) {
	seen := map[string]bool{}
	for _, v := range r.values {
		seen[v] = true
	}
	add := func(v string) {
		if len(v) >= minSecretLen && !seen[v] {
			seen[v] = true
			r.values = append(r.values, v)
		}
	}
	for _, s := range secrets {
		add(s)
		// The same value as it appears inside JSON or quoted Go strings.
		if q := strconv.Quote(s); len(q) > 2 {
			add(q[1 : len(q)-1])
		}
		// A multi-line secret may be cut by the tail; hide its lines too.
		if strings.Contains(s, "\n") {
			for _, line := range strings.Split(s, "\n") {
				add(strings.TrimSpace(line))
			}
		}
	}
	sort.SliceStable(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
}

// Redact returns s with known secrets and credential-like text replaced by
// [REDACTED].
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	for _, re := range secretTokens {
		s = re.ReplaceAllLiteralString(s, Redacted)
	}
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = pemEndOnly.ReplaceAllLiteralString(s, Redacted)
	}
	for _, re := range secretPatterns {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			// "(sensitive value)", "(known after apply)": terraform already hid it.
			if sub[2] == Redacted || strings.HasPrefix(sub[2], "(") {
				return m
			}
			out := sub[1] + Redacted
			if len(sub) > 3 {
				out += sub[3]
			}
			return out
		})
	}
	return s
}

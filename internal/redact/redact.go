// Package redact removes configured secret values from the text shardgate
// writes out: comments, check runs, log lines, GitHub request bodies and the
// error texts it stores or posts.
package redact

import (
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/shardgate/shardgate/internal/mdtext"
)

// Redacted replaces every secret shardgate removes from what it writes out:
// the redactor's and the runner's (runner.Redacted is this constant).
const Redacted = "[REDACTED]"

// Redaction bounds.
const (
	// MinLen is the shortest secret value replaced wherever it appears.
	// Shorter values (one to three characters) would shred every text that
	// happens to hold them while protecting nothing a guess could not find;
	// serve's configuration should refuse secrets that short instead.
	MinLen = 4
	// Window is the length of the pieces of a longer secret that are
	// found on their own: any run of Window bytes copied out of a
	// secret (a cut name, substr() of a file) is hidden, and so is the rest
	// of that secret's run around it.
	Window = 12
)

// Redactor removes every configured secret value from the text shardgate
// writes out: comments, check runs, log lines and the error texts it stores
// or posts. It knows each value as written, each line of a multi-line value
// (a PEM key) on its own and joined, and the forms shardgate's markdown
// rendering gives them (escaped text, code spans, table cells), so that
// rendering cannot hide a secret from it. It cannot recognise a secret a
// pull request transformed (reversed, encoded, cut into pieces shorter than
// Window): that is what the plan sandbox is for; redaction is the
// second wall. The zero value and nil redact nothing. A Redactor is
// immutable once built and safe for concurrent use.
type Redactor struct {
	// short are values from MinLen to Window-1 bytes, longest first.
	short []string
	// windows holds every Window-byte piece of the longer values.
	windows map[string]struct{}
}

// New returns a redactor of the given secret values (empty ones and ones
// shorter than MinLen are left out).
func New(values ...string) *Redactor {
	r := &Redactor{windows: map[string]struct{}{}}
	seen := map[string]bool{}
	for _, v := range values {
		for _, form := range secretForms(v) {
			if len(form) < MinLen || seen[form] {
				continue
			}
			seen[form] = true
			if len(form) < Window {
				r.short = append(r.short, form)
				continue
			}
			for i := 0; i+Window <= len(form); i++ {
				r.windows[form[i:i+Window]] = struct{}{}
			}
		}
	}
	sort.SliceStable(r.short, func(i, j int) bool { return len(r.short[i]) > len(r.short[j]) })
	return r
}

// secretForms are the texts a secret value can appear as: the value, each
// line of a multi-line value and its lines joined (a PEM body put in a name by
// replace()), each also as report renders it. PEM armour lines
// ("-----BEGIN RSA PRIVATE KEY-----") are public and left out.
func secretForms(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	bases := []string{v}
	if strings.ContainsAny(v, "\r\n") {
		var body []string
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "-----") {
				continue
			}
			body = append(body, line)
		}
		// The whole value's own pieces would include the public armour.
		bases = append(body, strings.Join(body, ""))
	}
	var out []string
	for _, b := range bases {
		plain := mdtext.Sanitize(b)
		out = append(out, b, plain, mdtext.Escape(b, mdtext.MessageCap), strings.ReplaceAll(plain, "|", `\|`))
	}
	return out
}

// Union is a redactor of both r's and o's secrets.
func (r *Redactor) Union(o *Redactor) *Redactor {
	u := &Redactor{windows: map[string]struct{}{}}
	seen := map[string]bool{}
	for _, x := range []*Redactor{r, o} {
		if x == nil {
			continue
		}
		for _, v := range x.short {
			if !seen[v] {
				seen[v] = true
				u.short = append(u.short, v)
			}
		}
		for w := range x.windows {
			u.windows[w] = struct{}{}
		}
	}
	sort.SliceStable(u.short, func(i, j int) bool { return len(u.short[i]) > len(u.short[j]) })
	return u
}

// Empty says whether the redactor knows no secret.
func (r *Redactor) Empty() bool { return r == nil || len(r.short) == 0 && len(r.windows) == 0 }

// Redact returns s with every run of secret text replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r.Empty() || len(s) < MinLen {
		return s
	}
	var spans [][2]int
	for _, v := range r.short {
		for i := 0; ; {
			j := strings.Index(s[i:], v)
			if j < 0 {
				break
			}
			spans = append(spans, [2]int{i + j, i + j + len(v)})
			i += j + 1
		}
	}
	if len(r.windows) > 0 {
		for i := 0; i+Window <= len(s); i++ {
			if _, ok := r.windows[s[i:i+Window]]; ok {
				spans = append(spans, [2]int{i, i + Window})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	return replaceSpans(s, spans)
}

// replaceSpans replaces each run of overlapping or touching spans, widened to
// whole UTF-8 characters, with one Redacted.
func replaceSpans(s string, spans [][2]int) string {
	for i, sp := range spans {
		for sp[0] > 0 && !utf8.RuneStart(s[sp[0]]) {
			sp[0]--
		}
		for sp[1] < len(s) && !utf8.RuneStart(s[sp[1]]) {
			sp[1]++
		}
		spans[i] = sp
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// Scrub redacts, in place, every string reachable from ptr (a pointer to a
// record about to be stored): struct fields, slices, map keys and values.
// Plan records hold what the plan named (stream prefixes, groups, addresses,
// messages quoting them); a secret a pull request put there is not kept on
// disk either. The guard then compares the next plan against the scrubbed
// one, and a plan that held a secret is never applied.
func (r *Redactor) Scrub(ptr any) {
	if r.Empty() || ptr == nil {
		return
	}
	r.scrub(reflect.ValueOf(ptr), map[string]string{})
}

func (r *Redactor) scrub(v reflect.Value, memo map[string]string) {
	redact := func(s string) string {
		out, ok := memo[s]
		if !ok {
			out = r.Redact(s)
			memo[s] = out
		}
		return out
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			r.scrub(v.Elem(), memo)
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		e := reflect.New(v.Elem().Type()).Elem()
		e.Set(v.Elem())
		r.scrub(e, memo)
		v.Set(e)
	case reflect.String:
		if v.CanSet() {
			v.SetString(redact(v.String()))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				r.scrub(f, memo)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			r.scrub(v.Index(i), memo)
		}
	case reflect.Map:
		r.scrubMap(v, memo)
	}
}

// scrubMap rebuilds a map with its keys and values scrubbed.
func (r *Redactor) scrubMap(v reflect.Value, memo map[string]string) {
	if v.IsNil() || !v.CanSet() {
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	it := v.MapRange()
	for it.Next() {
		k := reflect.New(v.Type().Key()).Elem()
		k.Set(it.Key())
		e := reflect.New(v.Type().Elem()).Elem()
		e.Set(it.Value())
		r.scrub(k, memo)
		r.scrub(e, memo)
		out.SetMapIndex(k, e)
	}
	v.Set(out)
}

// Error returns err with its text redacted. What it wraps is kept, so callers
// still tell a transient error from another (errors.As, errors.Is).
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	if red := r.Redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

var _ interface{ Unwrap() error } = (*redactedError)(nil)

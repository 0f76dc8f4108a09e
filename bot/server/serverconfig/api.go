package serverconfig

import (
	"bufio"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
)

// API token scopes: a read token reads, a write token also retries and
// cancels jobs.
const (
	APIScopeRead  = "read"
	APIScopeWrite = "write"
)

// APIToken is one line of api.tokens_file: the name shown in the audit log,
// the bearer token and its scope.
type APIToken struct {
	Name  string
	Token Secret
	Scope string
}

// APIConfig is the automation API under /api/v1/ on the status listener
// (api.*). It is off unless TokensFile is set.
type APIConfig struct {
	TokensFile string
	Tokens     []APIToken
}

// Enabled says whether the API is served.
func (a APIConfig) Enabled() bool { return a.TokensFile != "" }

type rawAPI struct {
	TokensFile string `yaml:"tokens_file"`
}

var apiTokenName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

func (v *validator) api(r rawAPI, c *Config) APIConfig {
	a := APIConfig{TokensFile: r.TokensFile}
	if r.TokensFile == "" {
		return a
	}
	if !c.Status.Enabled() {
		v.addf("api.tokens_file is set but status.listen is not: the API is served on the status listener, set status.listen (for example 127.0.0.1:9092)")
	}
	f, err := os.Open(r.TokensFile)
	if err != nil {
		v.addf("api.tokens_file: cannot read %s: %v", r.TokensFile, errors.Unwrap(err))
		return a
	}
	defer f.Close()
	a.Tokens = v.apiTokens(r.TokensFile, bufio.NewScanner(f))
	if len(a.Tokens) == 0 {
		v.addf("api.tokens_file: %s has no token: write one name:token:scope per line", r.TokensFile)
	}
	return a
}

// apiTokens reads name:token:scope lines; blank lines and lines starting with
// # are skipped. A problem names the line, never the token.
func (v *validator) apiTokens(path string, sc *bufio.Scanner) []APIToken {
	var out []APIToken
	names, tokens := map[string]bool{}, map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok1 := strings.Cut(line, ":")
		token, scope, ok2 := cutLast(rest, ":")
		switch {
		case !ok1 || !ok2:
			v.addf("api.tokens_file: %s line %d is not name:token:scope", path, n)
			continue
		case !apiTokenName().MatchString(name):
			v.addf("api.tokens_file: %s line %d: the name %q is not letters, digits, '.', '_' or '-' (at most 64)", path, n, name)
		case names[name]:
			v.addf("api.tokens_file: %s line %d: the name %q is given twice", path, n, name)
		case scope != APIScopeRead && scope != APIScopeWrite:
			v.addf("api.tokens_file: %s line %d: the scope %q is not read or write", path, n, scope)
		case len(token) < MinAdminTokenLength:
			v.addf("api.tokens_file: %s line %d: the token is %d characters; use at least %d (for example: openssl rand -hex 32)", path, n, len(token), MinAdminTokenLength)
		case tokens[token]:
			v.addf("api.tokens_file: %s line %d: the token of %q is another name's too: give each its own", path, n, name)
		}
		names[name], tokens[token] = true, true
		out = append(out, APIToken{Name: name, Token: NewSecret(token), Scope: scope})
	}
	if err := sc.Err(); err != nil {
		v.addf("api.tokens_file: cannot read %s: %v", path, err)
	}
	return out
}

// cutLast is strings.Cut at the last sep: a token may hold a colon.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

package planparse

import "strings"

// urlRedacted stands for a credential taken out of a URL.
const urlRedacted = "xxxxx"

// credentialParams are the fragments of a query parameter name that mark its
// value as a credential (password, db_pass, api_key, access_token, secret,
// X-Amz-Signature): matched case-insensitively inside the name, erring on the
// side of hiding.
var credentialParams = [...]string{"pass", "pwd", "token", "secret", "key", "auth", "credential", "signature"}

// RedactURLCredentials is s with the credentials of every URL in it replaced by
// "xxxxx": a userinfo password ("http://ops:xxxxx@coord"), a userinfo that is a
// bare user name (often a token: "https://xxxxx@host"), and the value of every
// query parameter named like a credential ("?token=xxxxx"). s may be a URL, a
// line of text or JSON text holding URLs in strings (a backslash escape is part
// of the value). Text without "://" is returned as it is, without allocating.
// Coordinator identities never carry credentials (NormalizeURL drops them), so
// this changes what is shown, never what is compared.
func RedactURLCredentials(s string) string {
	i := strings.Index(s, "://")
	if i < 0 || !strings.ContainsAny(s[i:], "@?") {
		return s
	}
	var b strings.Builder
	last := 0 // s[:last] is written to b or about to be
	for i >= 0 {
		start := i + 3
		end := urlEnd(s, start)
		authEnd := start + indexAnyEscaped(s[start:end], "/?#")
		if at := strings.LastIndexByte(s[start:authEnd], '@'); at >= 0 {
			user := s[start : start+at]
			b.WriteString(s[last:start])
			if c := strings.IndexByte(user, ':'); c >= 0 {
				b.WriteString(user[:c+1])
			}
			b.WriteString(urlRedacted)
			last = start + at
		}
		if q := strings.IndexByte(s[authEnd:end], '?'); q >= 0 {
			last = redactQuery(&b, s, last, authEnd+q+1, end)
		}
		next := strings.Index(s[end:], "://")
		if next < 0 {
			break
		}
		i = end + next
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// urlEnd is where the URL whose authority starts at start ends: at a space, a
// quote, a bracket or angle bracket, or the end of s. A backslash and the byte
// after it (a JSON escape) are part of the URL.
func urlEnd(s string, start int) int {
	for j := start; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', ')', ']', '}':
			return j
		}
	}
	return len(s)
}

// indexAnyEscaped is strings.IndexAny skipping backslash escapes, len(s) when
// none is found.
func indexAnyEscaped(s, chars string) int {
	for j := 0; j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if strings.IndexByte(chars, s[j]) >= 0 {
			return j
		}
	}
	return len(s)
}

// redactQuery writes s[last:] up to end to b, the values of credential
// parameters of the query s[from:end] replaced, and returns the new last.
func redactQuery(b *strings.Builder, s string, last, from, end int) int {
	if h := indexAnyEscaped(s[from:end], "#"); from+h < end {
		end = from + h
	}
	for p := from; p < end; {
		amp, width := paramEnd(s[p:end])
		amp += p
		eq := strings.IndexByte(s[p:amp], '=')
		if eq >= 0 && credentialParam(s[p:p+eq]) && p+eq+1 < amp {
			b.WriteString(s[last : p+eq+1])
			b.WriteString(urlRedacted)
			last = amp
		}
		p = amp + width
	}
	return last
}

// paramEnd is where the query parameter at the start of s ends and the width of
// the separator there: '&' or ';', or "\u0026" as terraform's JSON writes '&'.
func paramEnd(s string) (int, int) {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '&', ';':
			return j, 1
		case '\\':
			if strings.HasPrefix(s[j:], `\u0026`) {
				return j, len(`\u0026`)
			}
			j++
		}
	}
	return len(s), 0
}

func credentialParam(name string) bool {
	name = strings.ToLower(name)
	for _, f := range credentialParams {
		if strings.Contains(name, f) {
			return true
		}
	}
	return false
}

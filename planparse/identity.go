package planparse

import (
	"net/url"
	"strings"
)

// NormalizeURL is a coordinator URL as an identity: scheme and host lower-cased,
// the scheme's default port dropped, credentials, query and fragment dropped, and
// trailing slashes of the path removed. Two spellings of one coordinator
// ("http://C:80/coord/v1/" and "http://c/coord/v1") normalize alike. A URL that
// does not parse is returned trimmed of trailing slashes, so it still names
// itself and never matches a configured coordinator by accident.
func NormalizeURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return strings.TrimRight(raw, "/")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	return scheme + "://" + host + path
}

// StreamKey names a stream: its coordinator (normalized) and its prefix. A
// normalized URL holds no space, so the key splits back unambiguously at the first
// one; without a coordinator (provider resources) the key is the prefix.
func StreamKey(coordinator, prefix string) string {
	if coordinator == "" {
		return prefix
	}
	return coordinator + " " + prefix
}

// SplitStreamKey is the inverse of StreamKey.
func SplitStreamKey(key string) (coordinator, prefix string) {
	if i := strings.IndexByte(key, ' '); i >= 0 && strings.Contains(key[:i], "://") {
		return key[:i], key[i+1:]
	}
	return "", key
}

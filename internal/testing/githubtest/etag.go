package githubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// conditional gives a GET's JSON answer GitHub's ETag, a strong hash of its
// body, and turns it into 304 Not Modified when the request's If-None-Match
// names that ETag (strong or weak, alone or in a list, or "*"). It says
// whether the answer is a 304, which costs no primary budget. The encoded body is kept in
// the reply so ServeHTTP sends the bytes the ETag was made of.
func conditional(c *call, rep reply) (reply, bool) {
	if c.r.Method != http.MethodGet || rep.status != http.StatusOK || rep.body == nil {
		return rep, false
	}
	raw, err := encodeBody(rep.body)
	if err != nil {
		return rep, false // ServeHTTP reports it
	}
	sum := sha256.Sum256(raw)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	if rep.header == nil {
		rep.header = http.Header{}
	}
	rep.header.Set("ETag", etag)
	rep.raw = raw
	if !matchesETag(c.r.Header.Values("If-None-Match"), etag) {
		return rep, false
	}
	return reply{status: http.StatusNotModified, header: rep.header.Clone()}, true
}

// matchesETag is If-None-Match's weak comparison: W/ is ignored on both sides.
func matchesETag(ifNoneMatch []string, etag string) bool {
	for _, v := range ifNoneMatch {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/") {
				return true
			}
		}
	}
	return false
}

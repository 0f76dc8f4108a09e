package coordbroker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The broker never forwards the bytes a job's process wrote for a mutation:
// a coordinator decodes them its own way (Go's and Jackson's decoders match
// keys case-insensitively, the last duplicate wins), so what the broker read
// may not be what the coordinator acts on. It reads the body strictly, to
// judge it, and sends one it builds itself from the judged change.

// bodyKeys are the keys each judged mutation's body may carry, as the
// module writes them; every other key is refused.
var bodyKeys = map[string][]string{
	"create": {"initialShardCount", "requestedBy", "reason"},
	"scale":  {"targetShardCount", "requestedBy", "reason"},
	"delete": {"requestedBy", "reason", "force"},
}

// mutationBody is what the broker read of a mutation's body.
type mutationBody struct {
	// count is the count field's value (-1 when absent).
	count int
	force bool
}

// integer is a JSON number written as a whole number, nothing else.
var integer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]{0,8})$`) })

// readBody reads a mutation body of kind strictly: one JSON object (or no
// body at all), only the kind's keys, each once and none equal to another
// under Unicode case folding, the count a whole number, requestedBy and
// reason strings, force a boolean. The error says what was refused.
func readBody(kind string, body []byte) (mutationBody, error) {
	out := mutationBody{count: -1}
	if len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return out, errors.New("its body is not a JSON object")
	}
	var seen []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, errors.New("its body is not a JSON object")
		}
		key, _ := tok.(string)
		for _, s := range seen {
			if s == key {
				return out, fmt.Errorf("its body has the key %s twice", quoteKey(key))
			}
			if strings.EqualFold(s, key) {
				return out, fmt.Errorf("its body has the keys %s and %s, one key to a coordinator that ignores case", quoteKey(s), quoteKey(key))
			}
		}
		seen = append(seen, key)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out, errors.New("its body is not a JSON object")
		}
		if err := out.take(kind, key, raw); err != nil {
			return out, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return out, errors.New("its body is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, errors.New("its body has more than one JSON value")
	}
	return out, nil
}

// take reads one key of the body.
func (m *mutationBody) take(kind, key string, raw json.RawMessage) error {
	known := false
	for _, k := range bodyKeys[kind] {
		known = known || k == key
	}
	if !known {
		return fmt.Errorf("its body has the key %s, which the review did not judge", quoteKey(key))
	}
	switch key {
	case countField[kind]:
		n, err := strconv.Atoi(string(raw))
		if !integer().Match(raw) || err != nil {
			return fmt.Errorf("its %s %s is not a whole number", key, clip(string(raw), 40))
		}
		m.count = n
	case "force":
		if err := json.Unmarshal(raw, &m.force); err != nil {
			return errors.New("its force is not true or false")
		}
	default:
		var s *string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("its %s is not a string", key)
		}
	}
	return nil
}

// quoteKey names a key of the body in a reason, escaped and bounded.
func quoteKey(k string) string { return strconv.QuoteToASCII(clip(k, 40)) }

// judgedBody is the body the broker sends for a passed mutation: the judged
// count, the broker's requestedBy and reason, and a waived delete's force.
func (b *Broker) judgedBody(kind string, c Change, m mutationBody) []byte {
	v := map[string]any{"requestedBy": b.cfg.RequestedBy, "reason": b.cfg.Reason}
	if name := countField[kind]; name != "" {
		v[name] = c.Shards
	} else {
		v["force"] = m.force
	}
	out, _ := json.Marshal(v)
	return out
}

package redact

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
)

// redactFormatter scrubs secrets from a log line before its formatter
// encodes it: the message, every field's name and every field's value
// (errors, strings, Stringers and anything else as its JSON form).
type redactFormatter struct {
	next logrus.Formatter
	r    *Redactor
}

// Format implements logrus.Formatter.
func (f *redactFormatter) Format(e *logrus.Entry) ([]byte, error) {
	c := *e // the copy is this line's alone: the entry's fields are shared
	c.Message = f.r.Redact(e.Message)
	c.Data = make(logrus.Fields, len(e.Data))
	for k, v := range e.Data {
		c.Data[f.r.Redact(k)] = f.r.logValue(v)
	}
	return f.next.Format(&c)
}

// logValue redacts one field's value, keeping numbers, booleans and times as
// they are (they hold no text).
func (r *Redactor) logValue(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64,
		time.Time, time.Duration:
		return v
	case string:
		return r.Redact(v)
	case error:
		return r.Redact(v.Error())
	case fmt.Stringer:
		return r.Redact(v.String())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return r.Redact(fmt.Sprintf("%+v", v))
	}
	if s := string(b); r.Redact(s) != s {
		return r.Redact(s)
	}
	return v
}

// Logs makes every line log's logger writes scrub r's secrets; the
// logger is changed in place, so lines written through other entries of it
// (the caller's own) are scrubbed too.
func Logs(log *logrus.Entry, r *Redactor) {
	if log == nil || log.Logger == nil || r.Empty() {
		return
	}
	next := log.Logger.Formatter
	if rf, ok := next.(*redactFormatter); ok {
		// Another server shares the logger: both keep their secrets out of it.
		next, r = rf.next, rf.r.Union(r)
	}
	if next == nil {
		next = &logrus.TextFormatter{}
	}
	log.Logger.SetFormatter(&redactFormatter{next: next, r: r})
}

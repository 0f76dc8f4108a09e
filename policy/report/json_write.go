package report

import (
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// WriteJSON writes the report to w as one JSON object indented by two spaces,
// byte for byte what encoding/json's MarshalIndent writes of it with a newline
// after (TestWriteJSONIsMarshalIndent, FuzzWriteJSONIsMarshalIndent), but
// encoded as it is written. encoding/json builds the whole text in a buffer
// grown by doubling and copies it out, and the report was then indented into a
// third buffer: on a plan of 50,000 instances (a 5.6 MB report of 5,500 changes
// and 3,500 violations) a quarter of what `shardgate check` allocated, and two
// of its four collections. This is encoding/json/v2's encoder with v1's rules
// (go-json-experiment: field names, omitempty, HTML escaping as v1 has them). A
// failed write says "write output", a value that cannot be encoded "render
// json".
func (r *Report) WriteJSON(w io.Writer) error {
	ew := &errWriter{w: w}
	err := jsonv2.MarshalWrite(ew, r.jsonValue(), jsonv1.DefaultOptionsV1(), jsontext.WithIndent("  "))
	if err == nil {
		_, err = ew.Write([]byte{'\n'})
	}
	switch {
	case ew.err != nil:
		return fmt.Errorf("write output: %w", ew.err)
	case err != nil:
		return fmt.Errorf("render json: %w", err)
	}
	return nil
}

// errWriter remembers the first error of the writer it wraps.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

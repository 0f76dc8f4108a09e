package runner

import (
	"bytes"
	"sync"
)

// DefaultTailBytes is how much of a command's output a job keeps.
const DefaultTailBytes = 64 << 10

// tailBuffer keeps the last max bytes written to it. Terraform's stdout and
// stderr are copied from two goroutines, hence the mutex.
type tailBuffer struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	truncated bool
}

func newTailBuffer(max int) *tailBuffer {
	if max <= 0 {
		max = DefaultTailBytes
	}
	return &tailBuffer{max: max}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		// Keep capacity bounded too: copy down instead of reslicing forever.
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.truncated = true
	}
	return len(p), nil
}

// String returns the kept output. When the start was cut, the partial first
// line is dropped: half a secret would not match its literal value and could
// slip past redaction.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.truncated {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	return string(b)
}

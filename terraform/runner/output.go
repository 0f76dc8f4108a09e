package runner

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxOutputLine is the longest line a job's Output gets whole; a longer one
// is passed on in pieces of this size.
const maxOutputLine = 16 << 10

// outputWriter passes terraform's output on to a JobConfig.Output a line at a
// time, each redacted with the job's redactor: a secret is redacted only
// whole, so it must not be cut between two writes. The lines of a private
// key block, which only its first line gives away, are withheld entirely.
// stdout and stderr are copied from two goroutines, hence the mutex.
type outputWriter struct {
	mu       sync.Mutex
	dst      io.Writer
	redactor *Redactor
	partial  []byte
	inKey    bool
}

func (w *outputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 && len(w.partial) < maxOutputLine {
			break
		}
		n := i + 1
		if i < 0 || n > maxOutputLine {
			n = maxOutputLine
		}
		w.line(string(w.partial[:n]))
		w.partial = w.partial[n:]
	}
	// Never fail terraform's output for the viewer's sake.
	return len(p), nil
}

// line redacts and passes on one line. The caller holds mu.
func (w *outputWriter) line(s string) {
	s = strings.TrimRight(s, "\r\n")
	switch {
	case w.inKey:
		if strings.Contains(s, "PRIVATE KEY-----") && strings.Contains(s, "-----END") {
			w.inKey = false
		}
		return
	case strings.Contains(s, "-----BEGIN") && strings.Contains(s, "PRIVATE KEY-----") && !strings.Contains(s, "-----END"):
		w.inKey = true
	}
	_, _ = io.WriteString(w.dst, w.redactor.Redact(s)+"\n")
}

// flush passes on a last line without its newline.
func (w *outputWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.line(string(w.partial))
		w.partial = nil
	}
}

// tee is where a command's output goes: the tail the job keeps, and the
// job's Output when it has one.
func (j *Job) tee(tail io.Writer) (io.Writer, func()) {
	if j.cfg.Output == nil {
		return tail, func() {}
	}
	ow := &outputWriter{dst: j.cfg.Output, redactor: j.redactor}
	return io.MultiWriter(tail, ow), ow.flush
}

// lockWaitSink is the job's Output when it shows lock waits.
func (j *Job) lockWaitSink() LockWaitSink {
	s, _ := j.cfg.Output.(LockWaitSink)
	return s
}

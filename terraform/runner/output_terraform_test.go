package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// outputSink is a JobConfig.Output that keeps what it is given.
type outputSink struct {
	mu    sync.Mutex
	text  strings.Builder
	waits []*LockWait
}

func (s *outputSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.Write(p)
}

func (s *outputSink) StateLockWait(w *LockWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, w)
}

func (s *outputSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// The job's Output gets terraform's output line by line while it runs,
// with the job's secrets redacted, and hears of the state-lock wait and its
// end.
func TestJobOutputStreamsRedactedLinesAndLockWaits(t *testing.T) {
	const secret = "streamed-secret-value-42"
	dir := writeModule(t, slowWriter(4)+`
variable "token" {
  type    = string
  default = "harmless"
}
output "echo" { value = var.token }
`)
	sink := &outputSink{}
	j := newJob(t, realRunner(t), JobConfig{
		Dir:           dir,
		SensitiveVars: map[string]string{"token": secret},
		Wait:          &WaitPolicy{Timeout: time.Minute, InitialBackoff: time.Second, MaxBackoff: 2 * time.Second},
		Output:        sink,
	})
	require.NoError(t, j.Init(context.Background()))
	require.Contains(t, sink.String(), "Terraform has been successfully initialized!")
	h, li := startHolder(t, dir)

	_, err := j.Plan(context.Background())
	require.NoError(t, err)
	h.requireFinishedCleanly(t, dir)

	out := sink.String()
	require.Contains(t, out, "Changes to Outputs:")
	require.Contains(t, out, `echo = "harmless" -> "`+Redacted+`"`)
	require.NotContains(t, out, secret)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		require.NotContains(t, line, "\x00")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	require.GreaterOrEqual(t, len(sink.waits), 2, "a wait, then its end")
	require.NotNil(t, sink.waits[0])
	require.Equal(t, li.ID, sink.waits[0].Lock.ID)
	require.Nil(t, sink.waits[len(sink.waits)-1], "the wait is over once the plan got the lock")
}

// A private key block in the output is withheld whole, although only its
// first line says what it is.
func TestOutputWriterWithholdsPrivateKeyBlocks(t *testing.T) {
	sink := &outputSink{}
	w := &outputWriter{dst: sink, redactor: NewRedactor("hunter2-pass")}
	for _, part := range []string{"before hunter2-", "pass\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdefgh\n",
		"-----END RSA PRIVATE KEY-----\nafter\nno newline"} {
		_, err := w.Write([]byte(part))
		require.NoError(t, err)
	}
	w.flush()
	require.Equal(t, "before "+Redacted+"\n"+Redacted+"\nafter\nno newline\n", sink.String())
}

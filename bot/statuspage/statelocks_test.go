package statuspage

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/store/applyqueue"
)

// The overview counts the live applies on each Terraform state's lock,
// deepest first: how many queue on it, how many hold it, how many wait.
func TestQueueDepthPerStateLock(t *testing.T) {
	s := newScene(t, "bolt", Options{})
	const busy, quiet = "acme/streams:orders@default", "acme/streams:alarms@default"
	enqueue := func(n int, state string, streams ...string) *applyqueue.Job {
		j := &applyqueue.Job{Ref: refOf(n), Project: "p", StateKey: state, Streams: streams,
			MergeSHA: "0123456789abcdef0123456789abcdef01234567"}
		require.NoError(t, s.queue.Enqueue(context.Background(), j))
		return j
	}
	enqueue(30, quiet)
	first := enqueue(31, busy, "orders/a")
	enqueue(32, busy, "orders/b")
	enqueue(33, busy)
	s.start(t, first)
	_, body := get(t, s.srv.URL+"/", "")
	require.Contains(t, body, "<h2>Apply queue depth by state lock</h2>")
	row := func(state, counts string) int {
		r := `<tr class="state-depth"><td><code class="state-key">` + state + `</code></td>` + counts + `</tr>`
		i := strings.Index(body, r)
		require.Positive(t, i, "no row %s", r)
		return i
	}
	require.Less(t, row(busy, "<td>3</td><td>1</td><td>2</td>"), row(quiet, "<td>1</td><td>0</td><td>1</td>"), "deepest first")
}

package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
)

// allRenderings are every text a report gives out.
func allRenderings(t *testing.T, r *Report) map[string]string {
	t.Helper()
	js, err := r.JSON()
	require.NoError(t, err)
	out := map[string]string{
		"markdown":      r.Markdown(0),
		"compact":       r.Markdown(600),
		"check title":   r.CheckTitle(),
		"check summary": r.CheckSummary(0),
		"check text":    r.CheckText(0),
		"text":          r.Text(),
		"json":          string(js),
	}
	for i, v := range r.Decision.Violations {
		out["resolution "+string(rune('0'+i))] = r.Resolution(v)
	}
	return out
}

// A stream prefix from a sensitive variable is never shown: every rendering
// says "(sensitive)" where it would be, messages quoting it included.
func TestSensitivePrefixIsNeverShown(t *testing.T) {
	r := deniedReport()
	const secret = "create-order"
	for i := range r.ChangeSet.Changes {
		if r.ChangeSet.Changes[i].StreamPrefix == secret {
			r.ChangeSet.Changes[i].Sensitive = []string{planparse.FieldStreamPrefix}
		}
	}
	r.Decision.Violations = append(r.Decision.Violations, policy.Violation{Rule: "shard_delta",
		Stream: planparse.StreamKey("http://coord.test:8089", secret), StreamPrefix: secret,
		Message: "stream " + secret + " scales 4 -> 16", Waivable: true, ExceptionLabel: "policy-exception/shard_delta"})
	before := r.Markdown(0)
	require.Contains(t, before, "create") // the fixture does show it unmarked

	for name, text := range allRenderings(t, r) {
		require.NotContains(t, text, secret, name)
	}
	require.Contains(t, r.Markdown(0), Sensitive)
	require.Contains(t, r.Text(), Sensitive)
	// The report itself is not changed: the gate still needs the real name.
	require.Equal(t, secret, r.ChangeSet.Changes[0].StreamPrefix)
	require.Contains(t, r.Decision.Violations[len(r.Decision.Violations)-1].Message, secret)
}

// A sensitive value too short to hunt for inside texts is still hidden where
// a field holds exactly it, and the rest of the report keeps its words.
func TestShortSensitiveGroupIsHiddenWithoutShreddingText(t *testing.T) {
	r := deniedReport()
	for i := range r.ChangeSet.Changes {
		if r.ChangeSet.Changes[i].ConsumerGroup == "etl" {
			r.ChangeSet.Changes[i].Sensitive = []string{planparse.FieldConsumerGroup}
		}
	}
	text := r.Text()
	require.Contains(t, text, Sensitive)
	require.NotContains(t, text, "clicks/etl ")
	require.Contains(t, text, "payments") // unrelated names untouched
	require.Equal(t, strings.Count(deniedReport().Text(), "Violations"), strings.Count(text, "Violations"))
}

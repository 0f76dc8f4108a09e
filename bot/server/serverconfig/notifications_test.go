package serverconfig

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseNotifications(t *testing.T) {
	dir := t.TempDir()
	secret := writeFile(t, dir, "notify", "notify-secret-4711\n")
	parse := func(t *testing.T, section string) (*Config, error) {
		t.Helper()
		return Parse("c", []byte(phaseConfig(t, fmt.Sprintf(section, secret))), noEnv)
	}

	t.Run("a receiver with defaults", func(t *testing.T) {
		cfg, err := parse(t, "notifications:\n  - {url: https://hooks.example.com/x, secret_file: %s}\n")
		require.NoError(t, err)
		require.Len(t, cfg.Notifications, 1)
		r := cfg.Notifications[0]
		require.Equal(t, "notify-secret-4711", r.Secret.Reveal())
		require.Equal(t, NotifyFormatJSON, r.Format)
		require.Equal(t, NotificationEvents, r.Events)
		require.True(t, r.Wants(EventDriftClosed))
		require.Equal(t, "hooks.example.com", r.Host())
		js, err := json.Marshal(cfg)
		require.NoError(t, err)
		for _, s := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), string(js)} {
			require.NotContains(t, s, "notify-secret-4711")
		}
		require.Contains(t, cfg.SecretValues(), "notify-secret-4711", "the redactor knows the signing key")
	})

	t.Run("events and format as given", func(t *testing.T) {
		cfg, err := parse(t, "notifications:\n  - {url: https://h.example.com/x, secret_file: %s, events: [apply_failed, job_failed], format: slack}\n")
		require.NoError(t, err)
		r := cfg.Notifications[0]
		require.Equal(t, []string{EventApplyFailed, EventJobFailed}, r.Events)
		require.False(t, r.Wants(EventApplySucceeded))
		require.Equal(t, NotifyFormatSlack, r.Format)
	})

	t.Run("http only with insecure_http", func(t *testing.T) {
		_, err := parse(t, "notifications:\n  - {url: http://127.0.0.1:9/x, secret_file: %s}\n")
		require.ErrorContains(t, err, "notifications[0].url is http: use https")
		cfg, err := parse(t, "notifications:\n  - {url: http://127.0.0.1:9/x, secret_file: %s, insecure_http: true}\n")
		require.NoError(t, err)
		require.True(t, cfg.Notifications[0].InsecureHTTP)
	})

	for _, tc := range []struct{ name, section, want string }{
		{"no url", "notifications:\n  - {secret_file: %s}\n", "notifications[0].url is missing"},
		{"not a URL", "notifications:\n  - {url: 'ftp://x/y', secret_file: %s}\n", "notifications[0].url is not an https URL"},
		{"credentials in the URL", "notifications:\n  - {url: 'https://u:p@x/y', secret_file: %s}\n", "must not hold a user or password"},
		{"unknown event", "notifications:\n  - {url: https://x/y, secret_file: %s, events: [applied]}\n", `"applied" is not an event`},
		{"unknown format", "notifications:\n  - {url: https://x/y, secret_file: %s, format: xml}\n", `format "xml" is not json or slack`},
		{"no secret", "notifications:\n  - {url: https://x/y}\n# %s\n", "notifications[0].secret_file is missing"},
		{"inline secret", "notifications:\n  - {url: https://x/y, secret_file: %s, secret: abc}\n", "secrets are never written inline"},
		{"twice", "notifications:\n  - {url: https://x/y, secret_file: %[1]s}\n  - {url: https://x/y, secret_file: %[1]s}\n", "notifications[1].url is listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.section)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

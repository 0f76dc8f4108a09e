package serverconfig

import "github.com/shardgate/shardgate/github/ghapp"

type rawGitHub struct {
	APIURL            string `yaml:"api_url"`
	AppID             int64  `yaml:"app_id"`
	PrivateKeyFile    string `yaml:"private_key_file"`
	WebhookSecretFile string `yaml:"webhook_secret_file"`
	// Pacing under GitHub's secondary limits, per installation; 0: the
	// default (ghapp.DefaultPace).
	ContentPerMinute      int `yaml:"content_per_minute"`
	ContentPerHour        int `yaml:"content_per_hour"`
	ContentBurst          int `yaml:"content_burst"`
	MaxConcurrentRequests int `yaml:"max_concurrent_requests"`
}

// githubPace validates the pacing of each installation's requests: every
// value positive, the burst below the minute's count.
func (v *validator) githubPace(r rawGitHub) ghapp.Pace {
	p := ghapp.DefaultPace()
	for _, f := range []struct {
		key   string
		value int
		into  *int
	}{
		{"github.content_per_minute", r.ContentPerMinute, &p.ContentPerMinute},
		{"github.content_per_hour", r.ContentPerHour, &p.ContentPerHour},
		{"github.content_burst", r.ContentBurst, &p.ContentBurst},
		{"github.max_concurrent_requests", r.MaxConcurrentRequests, &p.MaxConcurrent},
	} {
		switch {
		case f.value < 0:
			v.addf("%s must be positive, got %d", f.key, f.value)
		case f.value > 0:
			*f.into = f.value
		}
	}
	if p.ContentBurst >= p.ContentPerMinute {
		v.addf("github.content_burst (%d) must be below github.content_per_minute (%d): the rest of the minute's requests are spaced out",
			p.ContentBurst, p.ContentPerMinute)
	}
	if p.ContentPerMinute > p.ContentPerHour {
		v.addf("github.content_per_minute (%d) must not exceed github.content_per_hour (%d)", p.ContentPerMinute, p.ContentPerHour)
	}
	return p
}

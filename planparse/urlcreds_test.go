package planparse

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedactURLCredentials(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no url", "create-order/billing", "create-order/billing"},
		{"url without credentials", "http://coord:8080/v1?x=1", "http://coord:8080/v1?x=1"},
		{"password", "http://ops:hunter2-pw@coord:8080/v1", "http://ops:xxxxx@coord:8080/v1"},
		{"password holding @", "http://ops:a@b@coord", "http://ops:xxxxx@coord"},
		{"bare user is a token", "https://ghp_abcdef@host/x", "https://xxxxx@host/x"},
		{"query credentials", "http://coord/v1?region=eu&token=abc123&Api_Key=k1#f", "http://coord/v1?region=eu&token=xxxxx&Api_Key=xxxxx#f"},
		{"both", "http://u:p4ss@coord/?password=p4ss", "http://u:xxxxx@coord/?password=xxxxx"},
		{"in json text", `{"coordinator_base_url":"http://ops:s3cr\"et@coord:8080","x":"https://a.b/?secret=z"}`,
			`{"coordinator_base_url":"http://ops:xxxxx@coord:8080","x":"https://a.b/?secret=xxxxx"}`},
		{"json escaped ampersand", `"http://coord:8089/?region=eu\u0026token=tok-1\u0026a=b"`, `"http://coord:8089/?region=eu\u0026token=xxxxx\u0026a=b"`},
		{"in a sentence", "group at http://ops:pw12@coord (down)", "group at http://ops:xxxxx@coord (down)"},
		{"@ in the path is no userinfo", "http://coord/users/@me", "http://coord/users/@me"},
		{"empty credential value stays", "http://coord/?token=&a=1", "http://coord/?token=&a=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, RedactURLCredentials(tt.in))
		})
	}
}

func TestRedactURLCredentialsKeepsIdentity(t *testing.T) {
	// Two spellings differing only in credentials are one coordinator.
	require.Equal(t, NormalizeURL("http://ops:one@coord:8080/"), NormalizeURL("http://ops:two@coord:8080"))
	require.Equal(t, NormalizeURL("http://ops:one@coord:8080/"), NormalizeURL(RedactURLCredentials("http://ops:one@coord:8080/")))
}

func BenchmarkRedactURLCredentialsClean(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		RedactURLCredentials(`{"coordinator_base_url":"http://coord:8080","stream_prefix":"create-order"}`)
	}
}

package coordsim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

func TestParseUser(t *testing.T) {
	tests := []struct {
		name, in string
		want     User
		wantErr  string
	}{
		{name: "one role", in: "tf:pw:WRITE", want: User{Name: "tf", Password: "pw", Roles: []Role{RoleWrite}}},
		{name: "roles, lower case", in: "ops:pw:read,monitor", want: User{Name: "ops", Password: "pw", Roles: []Role{RoleRead, RoleMonitor}}},
		{name: "colon in password", in: "ops:a:b:c:ADMIN", want: User{Name: "ops", Password: "a:b:c", Roles: []Role{RoleAdmin}}},
		{name: "no roles part", in: "ops:pw", wantErr: "want NAME:PASSWORD:ROLE"},
		{name: "empty name", in: ":pw:READ", wantErr: "want NAME:PASSWORD:ROLE"},
		{name: "empty password", in: "ops::READ", wantErr: "empty password"},
		{name: "unknown role", in: "ops:pw:ROOT", wantErr: "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUser(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestBearerToken(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := New(WithClock(clock))
	tok := s.issueToken(principal{name: "admin", roles: []Role{RoleRead}}, clock.Now().Add(time.Hour))
	p, ok := s.verifyToken(tok)
	require.True(t, ok)
	require.Equal(t, "admin", p.name)
	require.Equal(t, []Role{RoleRead}, p.roles)

	body, sig, _ := strings.Cut(tok, ".")
	_, ok = s.verifyToken(body + "x." + sig)
	require.False(t, ok, "tampered payload")
	_, ok = New().verifyToken(tok)
	require.False(t, ok, "another secret")
	clock.Advance(time.Hour)
	_, ok = s.verifyToken(tok)
	require.False(t, ok, "expired")
}

func TestUnauthenticatedGetsNoBody(t *testing.T) {
	s := New()
	for _, path := range []string{"/coord/v1/monitoring/groups", "/coord/v1/streams/p/groups/g", "/coord/v1/unknown"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusUnauthorized, rec.Code, path)
		require.Empty(t, rec.Body.String())
		require.Equal(t, `Basic realm="redis-stream-coordinator"`, rec.Header().Get("WWW-Authenticate"))
	}
}

package coordsim

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Role is a coordinator API role.
type Role string

// Roles (coordinator.md §3). WRITE includes READ, MONITOR counts as READ, ADMIN
// covers everything, MEMBER covers only heartbeats.
const (
	RoleRead    Role = "READ"
	RoleWrite   Role = "WRITE"
	RoleAdmin   Role = "ADMIN"
	RoleMonitor Role = "MONITOR"
	RoleMember  Role = "MEMBER"
)

// AllRoles is what the default admin user gets.
func AllRoles() []Role { return []Role{RoleRead, RoleWrite, RoleAdmin, RoleMonitor, RoleMember} }

// User is one configured API user.
type User struct {
	Name     string
	Password string
	Roles    []Role
}

// ParseUser reads NAME:PASSWORD:ROLE[,ROLE]. The password may hold colons: the
// name ends at the first colon and the roles start after the last.
func ParseUser(v string) (User, error) {
	first, last := strings.IndexByte(v, ':'), strings.LastIndexByte(v, ':')
	if first <= 0 || last == first {
		return User{}, errors.New("want NAME:PASSWORD:ROLE[,ROLE]")
	}
	u := User{Name: v[:first], Password: v[first+1 : last]}
	if u.Password == "" {
		return User{}, fmt.Errorf("user %q: empty password", u.Name)
	}
	for _, r := range strings.Split(v[last+1:], ",") {
		role := Role(strings.ToUpper(strings.TrimSpace(r)))
		if !slices.Contains(AllRoles(), role) {
			return User{}, fmt.Errorf("user %q: unknown role %q (want READ, WRITE, ADMIN, MONITOR or MEMBER)", u.Name, r)
		}
		u.Roles = append(u.Roles, role)
	}
	return u, nil
}

// principal is an authenticated caller.
type principal struct {
	name  string
	roles []Role
}

func (p principal) has(roles ...Role) bool {
	for _, r := range roles {
		if slices.Contains(p.roles, r) {
			return true
		}
	}
	return false
}

func (p principal) roleNames() []string {
	out := make([]string, len(p.roles))
	for i, r := range p.roles {
		out[i] = string(r)
	}
	return out
}

// allowed applies the path rules of coordinator.md §3.
func (p principal) allowed(method, path string) bool {
	read := p.has(RoleRead, RoleWrite, RoleMonitor, RoleAdmin)
	switch {
	case strings.HasPrefix(path, "/coord/v1/monitoring/"):
		return read
	case strings.HasPrefix(path, "/coord/v1/streams/"):
		if method == http.MethodGet || method == http.MethodHead {
			return read
		}
		return p.has(RoleWrite, RoleAdmin)
	}
	return true
}

// checkPassword compares in constant time; s.mu must be held.
func (s *Sim) checkPassword(name, password string) (principal, bool) {
	u, ok := s.users[name]
	if !ok || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return principal{}, false
	}
	return principal{name: u.Name, roles: u.Roles}, true
}

// authenticate reads Basic or Bearer credentials; s.mu must be held.
func (s *Sim) authenticate(r *http.Request) (principal, bool) {
	if user, pass, ok := r.BasicAuth(); ok {
		return s.checkPassword(user, pass)
	}
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return s.verifyToken(strings.TrimSpace(h[7:]))
	}
	return principal{}, false
}

// issueToken builds b64url("v1\nuser\nexpEpochSec\nROLE,ROLE").b64url(HMAC-SHA256).
func (s *Sim) issueToken(p principal, exp time.Time) string {
	payload := fmt.Sprintf("v1\n%s\n%d\n%s", p.name, exp.Unix(), strings.Join(p.roleNames(), ","))
	enc := base64.RawURLEncoding
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(payload))
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(mac.Sum(nil))
}

func (s *Sim) verifyToken(tok string) (principal, bool) {
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return principal{}, false
	}
	payload, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return principal{}, false
	}
	mac := hmac.New(sha256.New, s.secret)
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return principal{}, false
	}
	parts := strings.Split(string(payload), "\n")
	if len(parts) != 4 || parts[0] != "v1" {
		return principal{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || s.clock.Now().Unix() >= exp {
		return principal{}, false
	}
	p := principal{name: parts[1]}
	for _, r := range strings.Split(parts[3], ",") {
		if r != "" {
			p.roles = append(p.roles, Role(r))
		}
	}
	return p, true
}

package serverconfig

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/shardgate/shardgate/policy"
)

func (v *validator) coordinators(raw []rawCoordinator) []CoordinatorCredentials {
	var out []CoordinatorCredentials
	seen := map[string]bool{}
	for i, rc := range raw {
		where := fmt.Sprintf("coordinators[%d]", i)
		u, err := url.Parse(rc.URLPrefix)
		if rc.URLPrefix == "" || err != nil || u.Host == "" {
			v.addf("%s.url_prefix %q is not a URL such as https://coordinator.example.com", where, rc.URLPrefix)
		}
		if seen[rc.URLPrefix] {
			v.addf("%s.url_prefix %q is listed twice", where, rc.URLPrefix)
		}
		seen[rc.URLPrefix] = true
		cc := CoordinatorCredentials{URLPrefix: rc.URLPrefix, Username: rc.Username, InsecureNoAuth: rc.InsecureNoAuth}
		switch {
		case rc.PasswordFile == "" && rc.PasswordEnv == "" && !rc.InsecureNoAuth:
			v.addf("%s has no credentials: set username and password_file or password_env (the broker's guarantee needs a coordinator that refuses calls without them), or insecure_no_auth: true for one that has none", where)
		case rc.PasswordFile != "" && rc.PasswordEnv != "":
			v.addf("%s: set password_file or password_env, not both", where)
		case rc.PasswordFile != "":
			cc.Password = v.secretFile(where+".password_file", rc.PasswordFile)
			v.minLength(where+".password_file", cc.Password)
		case rc.PasswordEnv != "":
			s, ok := v.lookupEnv(rc.PasswordEnv)
			if !ok || s == "" {
				v.addf("%s.password_env: %s is not set", where, rc.PasswordEnv)
			}
			cc.Password = NewSecret(s)
			v.minLength(where+".password_env", cc.Password)
		}
		if rc.Username == "" && !cc.Password.Empty() {
			v.addf("%s: a password needs a username", where)
		}
		out = append(out, cc)
	}
	return out
}

func (v *validator) approvers(raw rawApprovers) (users, teams []string) {
	for i, u := range raw.Users {
		u = strings.TrimPrefix(strings.TrimSpace(u), "@")
		if u == "" || strings.ContainsAny(u, "/ ") {
			v.addf("approvers.users[%d] %q is not a GitHub login", i, raw.Users[i])
			continue
		}
		users = append(users, u)
	}
	for i, t := range raw.Teams {
		org, slug, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(t), "@"), "/")
		if !ok || org == "" || slug == "" || strings.ContainsAny(slug, "/ ") {
			v.addf("approvers.teams[%d] %q is not org/team-slug", i, t)
			continue
		}
		teams = append(teams, org+"/"+slug)
	}
	if len(users) == 0 && len(teams) == 0 {
		v.addf("approvers: list at least one user or team (exception labels and attestations need approvers)")
	}
	sort.Strings(users)
	sort.Strings(teams)
	return users, teams
}

func (v *validator) policy(raw rawPolicy) (policy.Config, time.Duration, bool) {
	p := policy.DefaultConfig()
	if raw.MaxShardDelta != nil {
		if *raw.MaxShardDelta < 1 {
			v.addf("policy.max_shard_delta must be at least 1, got %d", *raw.MaxShardDelta)
		}
		p.MaxShardDelta = *raw.MaxShardDelta
	}
	if raw.MaxScaleFactor != nil {
		if *raw.MaxScaleFactor < 1 {
			v.addf("policy.max_scale_factor must be at least 1.0, got %g", *raw.MaxScaleFactor)
		}
		p.MaxScaleFactor = *raw.MaxScaleFactor
	}
	ttl := v.duration("policy.attestation_ttl", raw.AttestationTTL, DefaultAttestationTTL)
	allow := true
	if raw.AllowRepoOverrides != nil {
		allow = *raw.AllowRepoOverrides
	}
	return p, ttl, allow
}

// driftInterval reads drift.interval: absent or "0" is off.
func (v *validator) driftInterval(s string) time.Duration {
	if s == "" || s == "0" {
		return 0
	}
	d := v.duration("drift.interval", s, 0)
	if d > 0 && d < MinDriftInterval {
		v.addf("drift.interval %q is shorter than %s (each check plans every project with terraform)", s, MinDriftInterval)
	}
	return d
}

package coordbroker

// PlaceholderCredential is what terraform gets for coordinator_username and
// coordinator_password on apply (as sensitive variables, which a root that
// does not declare them ignores): the broker replaces whatever a call
// carries, so the module's variables without defaults still have a value,
// and nothing secret is in terraform's environment.
const PlaceholderCredential = "shardgate-broker"

// Env is the environment terraform's processes get for the broker: the
// proxy in both spellings (curl reads only lower-case http_proxy), no
// NO_PROXY, and the CA bundle for https coordinators. No TF_VAR_: the
// runner would pass those with -var, which a root that does not declare
// them refuses.
func (b *Broker) Env(caBundle string) map[string]string {
	p := b.ProxyURL()
	return map[string]string{
		"HTTP_PROXY": p, "http_proxy": p, "HTTPS_PROXY": p, "https_proxy": p,
		"ALL_PROXY": "", "all_proxy": "", "NO_PROXY": "", "no_proxy": "",
		"SSL_CERT_FILE": caBundle, "CURL_CA_BUNDLE": caBundle,
	}
}

package bot

import "github.com/shardgate/shardgate/github/ghapp"

// NewManifest builds the App manifest for a service reachable at baseURL: the
// events the handlers take and the least permissions the GitHub calls need.
func NewManifest(name, baseURL string) ghapp.Manifest {
	return ghapp.NewManifest(name, baseURL, handledEvents())
}

// handledEvents are the webhook events the server's handlers take.
func handledEvents() []string {
	var events []string
	for _, h := range (&Server{}).handlers() {
		events = append(events, h.Handles()...)
	}
	return events
}

package coord_test

import (
	"fmt"
	"net/http"
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/shardgate/shardgate/coord"
)

// exception excuses one known difference between the coordinator's behaviour
// (docs/coordinator.md, which the simulator follows) and the OpenAPI file.
type exception struct {
	name   string
	kind   string         // "response": a status the operation does not document; "request": a request the schema rejects
	method string         // "" = any
	path   *regexp.Regexp // matched against the URL path
	status int            // response status
	codes  []string       // errorCodes the body must carry; nil = no body (401/403)
	reason string
}

var (
	anyPath      = regexp.MustCompile(`^/coord/v1/`)
	streamsPath  = regexp.MustCompile(`^/coord/v1/streams/`)
	groupSubPath = regexp.MustCompile(`^/coord/v1/(monitoring/)?streams/[^/]+/groups/[^/]+(/.*)?$`)
	groupPathRe  = regexp.MustCompile(`^/coord/v1/streams/[^/]+/groups/[^/]+$`)
	rollbackRe   = regexp.MustCompile(`/migrations/[^/]+/rollback$`)
)

// contractExceptions is the ONE list of every accepted mismatch, with its reason.
// Everything else the validator reports fails the test.
//
// DIFFs the validator cannot see, so they need no entry: a same-count scale answers
// 202 with an unstored "noop" DEPRECATED migration (schema-valid); producer-routing
// needs READ, not WRITE (the file does not model roles); ROLLING_BACK is never set.
var contractExceptions = []exception{
	{name: "401 without body", kind: "response", path: anyPath, status: 401,
		reason: "Spring Security answers 401 with no body and WWW-Authenticate on every secured path; the file documents 401 only for login"},
	{name: "403 without body", kind: "response", path: anyPath, status: 403,
		reason: "Spring Security answers 403 with no body; the file documents no 403"},
	{name: "missing credentials", kind: "request", path: anyPath, status: 401,
		reason: "tests send requests without credentials on purpose to check the 401"},
	{name: "invalid body", kind: "request", path: streamsPath, status: 400, codes: []string{coord.CodeInvalidRequest},
		reason: "tests send invalid bodies on purpose; the coordinator must reject them with 400 INVALID_REQUEST"},
	{name: "400 on mutations", kind: "response", path: streamsPath, status: 400, codes: []string{coord.CodeInvalidRequest},
		reason: "bean validation gives 400 INVALID_REQUEST (coordinator.md §1); the file documents no 400"},
	{name: "delete with live members", kind: "response", method: http.MethodDelete, path: groupPathRe, status: 409,
		codes:  []string{coord.CodeGroupHasActiveMembers},
		reason: "DIFF: the code answers 409 GROUP_HAS_ACTIVE_MEMBERS, the docs and the file say 422"},
	{name: "404 on group reads and writes", kind: "response", path: groupSubPath, status: 404,
		codes:  []string{coord.CodeGroupNotFound, coord.CodeMigrationNotFound},
		reason: "every group-scoped endpoint answers 404 GROUP_NOT_FOUND / MIGRATION_NOT_FOUND (coordinator.md §1); the file documents 404 only on get group and stream scale"},
	{name: "rollback refused", kind: "response", method: http.MethodPost, path: rollbackRe, status: 422,
		codes:  []string{coord.CodeRollbackNotAllowed},
		reason: "rollback of a migration that is not ACTIVE gives 422 ROLLBACK_NOT_ALLOWED (coordinator.md §2); the file documents only 202"},
	{name: "rollback during a metadata sync", kind: "response", method: http.MethodPost, path: rollbackRe, status: 409,
		codes:  []string{coord.CodeMetadataSyncInProgress},
		reason: "rollback checks for an open metadata sync first and answers 409 METADATA_SYNC_IN_PROGRESS (coordinator.md §1, §6.10); the file documents only 202 for rollback"},
	{name: "retryable 409 on mutations", kind: "response", path: streamsPath, status: 409,
		codes:  []string{coord.CodeStateVersionConflict},
		reason: "any mutation can answer 409 STATE_VERSION_CONFLICT (coordinator.md §1); the file lists it on no operation that lacks a 409"},
	{name: "429 rate limit", kind: "response", path: anyPath, status: 429, codes: []string{coord.CodeRateLimitExceeded},
		reason: "the rate limiter answers 429 RATE_LIMIT_EXCEEDED with Retry-After on any mutation; the file documents no 429"},
	{name: "503 unavailable", kind: "response", path: anyPath, status: 503,
		codes:  []string{coord.CodeCoordinatorTerminating, coord.CodeStateMutexUnavailable, coord.CodeProvisioningFailed},
		reason: "any mutation can answer 503 COORDINATOR_TERMINATING / COORDINATOR_STATE_MUTEX_UNAVAILABLE, and scale 503 REDIS_STREAM_PROVISIONING_FAILED (coordinator.md §1); the file documents no 503"},
}

// nullableAs31 is the one adjustment made to the file before validating: it
// uses the OpenAPI 3.0 keyword `nullable: true` inside a 3.1 document, which a
// strict 3.1 validator refuses to compile. It is rewritten to its intended 3.1
// meaning, `type: [T, "null"]` (e.g. MigrationsResponse.activeReshardingId is
// null when no migration is active, coordinator.md §1).
func nullableAs31(spec []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return nil, fmt.Errorf("parse spec: %w", err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			var typeNode *yaml.Node
			nullable := -1
			for i := 0; i+1 < len(n.Content); i += 2 {
				switch n.Content[i].Value {
				case "type":
					typeNode = n.Content[i+1]
				case "nullable":
					nullable = i
				}
			}
			if nullable >= 0 {
				if n.Content[nullable+1].Value == "true" && typeNode != nil && typeNode.Kind == yaml.ScalarNode {
					t := typeNode.Value
					*typeNode = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
						{Kind: yaml.ScalarNode, Value: t},
						{Kind: yaml.ScalarNode, Value: "null", Style: yaml.DoubleQuotedStyle},
					}}
				}
				n.Content = append(n.Content[:nullable], n.Content[nullable+2:]...)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return yaml.Marshal(&root)
}

func (e exception) matches(kind, method, path string, status int, code string, hasBody bool) bool {
	if e.kind != kind || e.status != status || (e.method != "" && e.method != method) || !e.path.MatchString(path) {
		return false
	}
	if e.codes == nil {
		return kind == "request" || !hasBody
	}
	for _, c := range e.codes {
		if c == code {
			return true
		}
	}
	return false
}

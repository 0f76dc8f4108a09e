// Package traceability is how an apply names its pull request to the
// coordinator: the trace variables a root module may declare (who asked, why,
// the X-Request-Id prefix; the coordinator broker sets them on every mutation
// anyway, so no warning asks for them).
package traceability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/shardgate/shardgate/github/pullreq"
)

// Root-module variables through which an apply tells the coordinator who asked
// for it and why (its audit's requestedBy and reason, and the X-Request-Id
// prefix): the stream-group module takes requested_by, reason and
// request_id_prefix, and a root module that declares these and passes them on
// makes every coordinator audit entry traceable to its pull request.
const (
	VarRequestedBy     = "shardgate_requested_by"
	VarReason          = "shardgate_reason"
	VarRequestIDPrefix = "shardgate_request_id_prefix"
)

var vars = []string{VarRequestedBy, VarReason, VarRequestIDPrefix}

// Env are the trace variables of one apply, as TF_VAR_ entries of a job's
// environment (the runner passes them as -var), for the root module in dir: only
// those it declares, since a -var of an undeclared variable is an error.
func Env(dir string, ref pullreq.Ref, mergeSHA, mergedBy, jobSeq string) map[string]string {
	env := map[string]string{
		"TF_VAR_" + VarRequestedBy:     fmt.Sprintf("shardgate:%s#%d merged by %s", ref.FullName(), ref.Number, mergedBy),
		"TF_VAR_" + VarReason:          fmt.Sprintf("apply %s of %s#%d", pullreq.ShortSHA(mergeSHA), ref.FullName(), ref.Number),
		"TF_VAR_" + VarRequestIDPrefix: RequestIDPrefix(ref, jobSeq),
	}
	for _, v := range Missing(dir) {
		delete(env, "TF_VAR_"+v)
	}
	return env
}

// RequestIDPrefix starts the X-Request-Id of every coordinator call an apply
// makes: the audit record keeps it, so the coordinator's audit log can be
// searched for the apply's requests.
func RequestIDPrefix(ref pullreq.Ref, jobSeq string) string {
	seq := strings.TrimLeft(jobSeq, "0")
	if seq == "" {
		seq = "0"
	}
	return fmt.Sprintf("shardgate-%s-pr%d-%s", safeIDPart(ref.Repo), ref.Number, seq)
}

var unsafeIDChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeIDPart(s string) string { return unsafeIDChars.ReplaceAllString(s, "-") }

// declaredVariable matches a variable block's opening in HCL.
var declaredVariable = regexp.MustCompile(`(?m)^\s*variable\s+"([A-Za-z0-9_-]+)"\s*\{`)

// Missing lists the trace variables the root module in dir does not
// declare. It reads the root's own .tf and .tf.json files (variables of a
// root are declared there, never in a module): a look at declarations, not a
// parse of the configuration, which terraform does.
func Missing(dir string) []string {
	declared := map[string]bool{}
	// Glob fails only on a malformed pattern, and these are constant; an
	// unreadable file declares nothing, so its variables are not passed.
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			for _, m := range declaredVariable.FindAllStringSubmatch(string(b), -1) {
				declared[m[1]] = true
			}
		}
	}
	files, _ = filepath.Glob(filepath.Join(dir, "*.tf.json"))
	for _, f := range files {
		var doc struct {
			Variable map[string]json.RawMessage `json:"variable"`
		}
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &doc) == nil {
			for name := range doc.Variable {
				declared[name] = true
			}
		}
	}
	var missing []string
	for _, v := range vars {
		if !declared[v] {
			missing = append(missing, v)
		}
	}
	return missing
}

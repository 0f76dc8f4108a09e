package runner

import (
	"fmt"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"
)

// StateLockError means terraform could not take the state lock because
// another operation holds it.
//
// Most backends (local, s3, gcs, azurerm, consul) print the holder's lock info.
// The pg backend cannot: PostgreSQL advisory locks record no owner, so
// terraform prints the info of the process that was refused. For those,
// HolderKnown is false and the holder fields are left empty rather than
// naming ourselves as the holder.
type StateLockError struct {
	ID        string
	Path      string
	Operation string // as terraform prints it, e.g. "OperationTypeApply"
	Who       string // user@host of the holder
	Version   string // terraform version of the holder
	Created   time.Time
	Info      string

	// Message is terraform's "Error message:" line, e.g. "resource temporarily
	// unavailable" (local) or "Workspace is already locked: default" (pg).
	Message     string
	HolderKnown bool
	// Command is the terraform command that was refused ("plan", "apply").
	Command string
}

func (e *StateLockError) Error() string {
	if !e.HolderKnown {
		msg := "state lock is held by another terraform operation; the backend does not say which"
		if e.Message != "" {
			msg += " (" + e.Message + ")"
		}
		return msg
	}
	msg := fmt.Sprintf("state lock %s is held by %s", e.ID, e.Who)
	if op := e.OperationName(); op != "" {
		msg += " running " + op
	}
	if !e.Created.IsZero() {
		msg += " since " + e.Created.UTC().Format(time.RFC3339)
	}
	if e.Path != "" {
		msg += " (" + e.Path + ")"
	}
	return msg
}

// Holder describes who holds the lock for a person: "alice@laptop (apply,
// lock id 5d3c…) since 2026-11-30T06:00:00Z", with "(unknown)" for what the
// backend did not say.
func (e *StateLockError) Holder() string {
	unknown := func(s string) string {
		if s == "" {
			return "(unknown)"
		}
		return s
	}
	since := "an unknown time"
	if !e.Created.IsZero() {
		since = e.Created.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s (%s, lock id %s) since %s", unknown(e.Who), unknown(e.OperationName()), unknown(e.ID), since)
}

// OperationName is the holder's operation in the words a user types:
// "OperationTypeApply" becomes "apply".
func (e *StateLockError) OperationName() string {
	return strings.ToLower(strings.TrimPrefix(e.Operation, "OperationType"))
}

// Age is how long the lock had been held at now; zero when unknown.
func (e *StateLockError) Age(now time.Time) time.Duration {
	if e.Created.IsZero() {
		return 0
	}
	return now.Sub(e.Created)
}

// pgSelfInfoMessages are the pg backend's refusals: the Lock Info that
// follows them describes the refused process, not the holder.
var pgSelfInfoMessages = []string{
	"Workspace is already locked",
	"Already locked for workspace creation",
}

// createdLayouts: terraform prints LockInfo.Created with time.Time.String().
var createdLayouts = []string{
	"2006-01-02 15:04:05.999999999 -0700 MST",
	time.RFC3339Nano,
}

// parseStateLock reads terraform's "Error acquiring the state lock"
// diagnostic from command output. It returns nil when the output holds none.
// Output must already be redacted: the fields are copied into errors.
func parseStateLock(output string) *StateLockError {
	if !strings.Contains(output, "Error acquiring the state lock") {
		return nil
	}
	e := &StateLockError{}
	inInfo := false
	for _, raw := range strings.Split(output, "\n") {
		line := strings.TrimRight(strings.TrimLeft(raw, "│ \t"), " \t\r")
		if v, ok := strings.CutPrefix(line, "Error message:"); ok {
			e.Message = strings.TrimSpace(v)
			continue
		}
		if line == "Lock Info:" {
			inInfo = true
			continue
		}
		if !inInfo {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(key, " ") {
			// A blank line or prose ends the block.
			if line == "" || !ok {
				inInfo = false
			}
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "ID":
			e.ID = value
		case "Path":
			e.Path = value
		case "Operation":
			e.Operation = value
		case "Who":
			e.Who = value
		case "Version":
			e.Version = value
		case "Created":
			e.Created = parseCreated(value)
		case "Info":
			e.Info = value
		}
	}
	e.HolderKnown = e.ID != ""
	for _, m := range pgSelfInfoMessages {
		if strings.HasPrefix(e.Message, m) {
			e.HolderKnown = false
		}
	}
	if !e.HolderKnown {
		msg := e.Message
		*e = StateLockError{Message: msg}
	}
	return e
}

func parseCreated(s string) time.Time {
	// A monotonic clock reading ("m=+0.01") may trail the wall time.
	if i := strings.Index(s, " m="); i >= 0 {
		s = s[:i]
	}
	for _, layout := range createdLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// describesRequester tells lock info that describes the refused command
// itself from the holder's. Besides pg, other backends fall back to the
// requester's info when they fail to read the holder's. A holder's lock
// predates our command; ours was made by terraform, as us, for this very
// operation, after we started it.
func (e *StateLockError) describesRequester(command string, started time.Time, who string) bool {
	return e.HolderKnown && e.OperationName() == command && e.Who == who && !e.Created.Before(started)
}

// terraformWho is how terraform names this user and host in lock info
// (statemgr.NewLockInfo); terraform runs as our user.
var terraformWho = sync.OnceValue(func() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
})

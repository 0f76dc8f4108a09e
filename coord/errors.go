package coord

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes callers branch on (coordinator.md §1, api/CoordinatorErrors.kt).
const (
	CodeUnauthorized           = "UNAUTHORIZED"
	CodeForbidden              = "FORBIDDEN"
	CodeInvalidRequest         = "INVALID_REQUEST"
	CodeGroupNotFound          = "GROUP_NOT_FOUND"
	CodeStreamNotFound         = "STREAM_NOT_FOUND"
	CodeMigrationNotFound      = "MIGRATION_NOT_FOUND"
	CodeGroupAlreadyExists     = "GROUP_ALREADY_EXISTS"
	CodeStreamPrefixExists     = "STREAM_PREFIX_ALREADY_EXISTS"
	CodeGroupHasActiveMembers  = "GROUP_HAS_ACTIVE_MEMBERS"
	CodeActiveMigrationExists  = "ACTIVE_MIGRATION_EXISTS"
	CodeMetadataSyncInProgress = "METADATA_SYNC_IN_PROGRESS"
	CodeStateVersionConflict   = "STATE_VERSION_CONFLICT"
	CodeRollbackNotAllowed     = "ROLLBACK_NOT_ALLOWED"
	CodeProvisioningFailed     = "REDIS_STREAM_PROVISIONING_FAILED"
	CodeRedisNotConfigured     = "REDIS_NOT_CONFIGURED"
	CodeCoordinatorTerminating = "COORDINATOR_TERMINATING"
	CodeStateMutexUnavailable  = "COORDINATOR_STATE_MUTEX_UNAVAILABLE"
	CodeRateLimitExceeded      = "RATE_LIMIT_EXCEEDED"
	codeUnexpectedResponse     = "UNEXPECTED_RESPONSE"
)

// APIError is a non-2xx answer from the coordinator. 401 and 403 carry no body;
// they still become an APIError with ErrorCode UNAUTHORIZED or FORBIDDEN.
type APIError struct {
	HTTPStatus int
	Status     string
	ErrorCode  string
	Message    string
	RequestID  string
	// Method and Path say which call failed; Path never holds credentials.
	Method string
	Path   string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("coordinator %s %s: %d %s", e.Method, e.Path, e.HTTPStatus, e.ErrorCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	return msg
}

// Is makes errors.Is(err, &APIError{ErrorCode: "X"}) or {HTTPStatus: 404} match on
// the fields the target sets.
func (e *APIError) Is(target error) bool {
	t, ok := target.(*APIError)
	if !ok {
		return false
	}
	if t.HTTPStatus != 0 && t.HTTPStatus != e.HTTPStatus {
		return false
	}
	if t.ErrorCode != "" && t.ErrorCode != e.ErrorCode {
		return false
	}
	return t.HTTPStatus != 0 || t.ErrorCode != ""
}

// Sentinels for errors.Is.
var (
	ErrNotFound     = &APIError{HTTPStatus: http.StatusNotFound}
	ErrConflict     = &APIError{HTTPStatus: http.StatusConflict}
	ErrUnauthorized = &APIError{HTTPStatus: http.StatusUnauthorized}
	ErrForbidden    = &APIError{HTTPStatus: http.StatusForbidden}
)

// AsAPIError returns the APIError inside err, if any.
func AsAPIError(err error) (*APIError, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// IsNotFound reports a 404 (group, stream or migration not found).
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports any 409.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsCode reports whether err is an APIError with that errorCode.
func IsCode(err error, code string) bool {
	ae, ok := AsAPIError(err)
	return ok && ae.ErrorCode == code
}

// IsRetryable reports whether the coordinator says the call may be repeated
// unchanged: 429, any 503, and 409 STATE_VERSION_CONFLICT (coordinator.md §1).
func IsRetryable(err error) bool {
	ae, ok := AsAPIError(err)
	if !ok {
		return false
	}
	switch ae.HTTPStatus {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusConflict:
		return ae.ErrorCode == CodeStateVersionConflict
	}
	return false
}

// statusName is the Spring HttpStatus name the coordinator puts in "status".
func statusName(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "BAD_REQUEST"
	case http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "CONFLICT"
	case http.StatusUnprocessableEntity:
		return "UNPROCESSABLE_ENTITY"
	case http.StatusTooManyRequests:
		return "TOO_MANY_REQUESTS"
	case http.StatusServiceUnavailable:
		return "SERVICE_UNAVAILABLE"
	case http.StatusInternalServerError:
		return "INTERNAL_SERVER_ERROR"
	}
	return fmt.Sprintf("HTTP_%d", code)
}

// StatusName is exported for the simulator so both sides agree on the names.
func StatusName(code int) string { return statusName(code) }

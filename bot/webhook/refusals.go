package webhook

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// maxLoggedField bounds what one header of a request puts in the log: a
// stranger chooses X-GitHub-Event and X-GitHub-Delivery, and a refused
// request must not cost the log more than a line of its own.
const maxLoggedField = 128

// clip is s cut to maxLoggedField bytes (on a character boundary), saying
// how long it was.
func clip(s string) string {
	if len(s) <= maxLoggedField {
		return s
	}
	cut := strings.ToValidUTF8(s[:maxLoggedField], "")
	return fmt.Sprintf("%s…(%d bytes)", cut, len(s))
}

// RefusalsLogged is how many refused requests a minute are logged; the
// others are counted, and the next line logged says how many were left out
// (each still counts in shardgate_webhook_deliveries_total).
const RefusalsLogged = 10

// refusalLog logs refusals of unauthenticated requests at most
// RefusalsLogged a minute, on the intake's clock.
type refusalLog struct {
	mu      sync.Mutex
	since   time.Time
	logged  int
	dropped int
}

// warn logs msg on log unless this minute's refusals were all logged.
func (l *refusalLog) warn(now time.Time, log *logrus.Entry, msg string) {
	l.mu.Lock()
	if now.Sub(l.since) >= time.Minute || now.Before(l.since) {
		if l.dropped > 0 {
			log = log.WithField("refusals_not_logged", l.dropped)
		}
		l.since, l.logged, l.dropped = now, 0, 0
	}
	if l.logged >= RefusalsLogged {
		l.dropped++
		l.mu.Unlock()
		return
	}
	l.logged++
	l.mu.Unlock()
	log.Warn(msg)
}

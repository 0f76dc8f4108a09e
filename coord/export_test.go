package coord

import "time"

// SetSleep replaces the retry wait so tests can record delays without sleeping.
func SetSleep(c *Client, f func(time.Duration) <-chan time.Time) { c.sleep = f }

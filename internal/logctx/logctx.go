// Package logctx carries a logger in a context and names the log fields every
// part of shardgate writes, so that the lines of one job can be joined.
package logctx

import (
	"context"
	"io"

	"github.com/sirupsen/logrus"
)

// Log field names, the same on every line so logs can be joined.
const (
	FieldDelivery     = "delivery_id"
	FieldEvent        = "event"
	FieldJob          = "job_id"
	FieldInstallation = "installation_id"
	FieldRepo         = "repo"
	FieldPR           = "pr"
	FieldSHA          = "sha"
	FieldProject      = "project"
	FieldStream       = "stream_prefix"
)

// NewLogger returns a JSON logger writing to w.
func NewLogger(w io.Writer, level logrus.Level) *logrus.Entry {
	l := logrus.New()
	l.SetOutput(w)
	l.SetFormatter(&logrus.JSONFormatter{})
	l.SetLevel(level)
	return logrus.NewEntry(l)
}

type loggerKey struct{}

// WithLogger returns a context carrying log.
func WithLogger(ctx context.Context, log *logrus.Entry) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// Logger returns the context's logger, or a silent one.
func Logger(ctx context.Context) *logrus.Entry {
	if l, ok := ctx.Value(loggerKey{}).(*logrus.Entry); ok {
		return l
	}
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

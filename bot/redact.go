package bot

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/shardgate/shardgate/redact"
)

// NewRedactor builds the redactor of every Secret in cfg, wherever in the
// configuration it sits (nested structs, slices and maps included), so a
// credential added to Config later is redacted without a change here.
func NewRedactor(cfg *Config) *redact.Redactor {
	var values []string
	if cfg != nil {
		collectSecrets(reflect.ValueOf(cfg), &values)
	}
	return redact.New(values...)
}

var secretType = reflect.TypeOf(Secret{})

// collectSecrets walks v for Secret values.
func collectSecrets(v reflect.Value, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectSecrets(v.Elem(), out)
		}
	case reflect.Struct:
		if v.Type() == secretType {
			if v.CanInterface() {
				*out = append(*out, v.Interface().(Secret).Reveal())
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			collectSecrets(v.Field(i), out)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			collectSecrets(v.Index(i), out)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			collectSecrets(it.Value(), out)
		}
	}
}

// redactingHandler gives the dispatcher only redacted errors: they are
// stored as the job's last error, logged, and shown on the pull request when
// the job fails for good. A panic becomes such an error too (its value may
// quote what a pull request wrote).
type redactingHandler struct {
	EventHandler
	r *redact.Redactor
}

// Handle implements EventHandler.
func (h redactingHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
		err = h.r.Error(err)
	}()
	return h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
}

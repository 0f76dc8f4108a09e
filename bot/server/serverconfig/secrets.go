package serverconfig

import (
	"reflect"

	"github.com/shardgate/shardgate/internal/redact"
)

// SecretValues are the values of every Secret in c, wherever in the
// configuration it sits (nested structs, slices and maps included), so a
// credential added to Config later is redacted without a change where the
// redactor is built.
func (c *Config) SecretValues() []string {
	var values []string
	if c != nil {
		collectSecrets(reflect.ValueOf(c), &values)
	}
	return values
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

// Redactor removes every secret of c (SecretValues) from text.
func (c *Config) Redactor() *redact.Redactor { return redact.New(c.SecretValues()...) }

package report

import (
	"reflect"
	"strings"

	"github.com/shardgate/shardgate/planparse"
)

// Sensitive is what a report shows in place of a plan value Terraform marks
// sensitive (a stream prefix, consumer group or coordinator URL from a
// sensitive variable).
const Sensitive = "(sensitive)"

// minSubstring is the shortest sensitive value also replaced inside longer
// texts (messages, stream keys); shorter ones are replaced only where a field
// holds exactly them, so that a one-letter prefix does not shred the report.
const minSubstring = 4

// hider replaces sensitive values in the strings of a report's data.
type hider struct {
	exact map[string]bool
	inner *strings.Replacer
}

func newHider(values []string) *hider {
	if len(values) == 0 {
		return nil
	}
	h := &hider{exact: map[string]bool{}}
	var pairs []string
	for _, v := range values { // longest first (planparse.SensitiveValues)
		h.exact[v] = true
		if len(v) >= minSubstring {
			pairs = append(pairs, v, Sensitive)
		}
	}
	if len(pairs) > 0 {
		h.inner = strings.NewReplacer(pairs...)
	}
	return h
}

// Hide is s with every one of values (planparse.ChangeSet.SensitiveValues)
// shown as Sensitive: for text about a plan that a Report does not render.
func Hide(values []string, s string) string {
	if len(values) == 0 {
		return s
	}
	return newHider(sortLongestFirst(values)).text(s)
}

func (h *hider) text(s string) string {
	if h == nil {
		return s
	}
	if h.exact[s] {
		return Sensitive
	}
	if coord, prefix := planparse.SplitStreamKey(s); coord != "" && (h.exact[prefix] || h.exact[coord]) {
		return planparse.StreamKey(h.text(coord), h.text(prefix))
	}
	if h.inner != nil {
		return h.inner.Replace(s)
	}
	return s
}

// shown is r itself when its plan marks no identity value sensitive, else a
// copy whose every string (changes, findings, messages quoting them) shows
// Sensitive in place of each sensitive value. Every rendering starts here.
func (r *Report) shown() *Report {
	if r == nil || r.hide != nil {
		return r
	}
	values := r.ChangeSet.SensitiveValues()
	for _, v := range planparse.SensitiveValues(r.Decision.Changes) {
		if !contains(values, v) {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return r
	}
	h := newHider(sortLongestFirst(values))
	c := *r
	c.hide = h
	c.Project = h.text(r.Project)
	if r.ChangeSet != nil {
		cs := hideIn(h, *r.ChangeSet)
		c.ChangeSet = &cs
	}
	c.Decision = hideIn(h, r.Decision)
	c.LockWaits = hideIn(h, r.LockWaits)
	c.Coordinator = hideIn(h, r.Coordinator)
	return &c
}

func sortLongestFirst(values []string) []string {
	out := append([]string(nil), values...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// hideIn is a deep copy of v with h applied to every string in it.
func hideIn[T any](h *hider, v T) T {
	out := reflect.New(reflect.TypeOf(&v).Elem()).Elem()
	copyHidden(h, out, reflect.ValueOf(&v).Elem())
	return out.Interface().(T)
}

func copyHidden(h *hider, dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.String:
		dst.SetString(h.text(src.String()))
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyHidden(h, p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		dst.Set(src) // unexported fields (a time.Time's) as they are
		for i := 0; i < src.NumField(); i++ {
			if dst.Field(i).CanSet() {
				copyHidden(h, dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyHidden(h, s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(src.Type().Key()).Elem()
			copyHidden(h, k, it.Key())
			e := reflect.New(src.Type().Elem()).Elem()
			copyHidden(h, e, it.Value())
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
}

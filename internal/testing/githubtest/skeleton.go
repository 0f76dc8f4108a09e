package githubtest

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// skeletonTime is what a required date-time field holds until a handler
// overlays the real value.
const skeletonTime = "2021-10-10T00:00:00Z"

// skeleton builds a value for a named component schema holding every required
// property, so handlers only set the fields they model and the answer still
// has the documented shape (GitHub's schemas require dozens of URL fields).
func (sp *spec) skeleton(name string) map[string]any {
	ref := sp.doc.Components.Schemas[name]
	if ref == nil {
		return map[string]any{}
	}
	m, _ := skeletonOf(ref, 0).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func skeletonOf(ref *openapi3.SchemaRef, depth int) any {
	if ref == nil || ref.Value == nil || depth > 16 {
		return nil
	}
	s := ref.Value
	if len(s.AllOf) > 0 {
		out := map[string]any{}
		for _, part := range s.AllOf {
			if m, ok := skeletonOf(part, depth+1).(map[string]any); ok {
				merge(out, m)
			}
		}
		return out
	}
	if len(s.AnyOf) > 0 {
		return skeletonOf(s.AnyOf[0], depth+1)
	}
	if len(s.OneOf) > 0 {
		return skeletonOf(s.OneOf[0], depth+1)
	}
	if s.Nullable {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch {
	case s.Type.Is("object") || (s.Type.IsEmpty() && len(s.Properties) > 0):
		out := map[string]any{}
		for _, name := range s.Required {
			out[name] = skeletonOf(s.Properties[name], depth+1)
		}
		return out
	case s.Type.Is("array"):
		return []any{}
	case s.Type.Is("string"):
		switch s.Format {
		case "date-time":
			return skeletonTime
		case "uri", "url":
			return "https://github.example/"
		case "email":
			return "octocat@github.example"
		}
		return ""
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return int64(*s.Min)
		}
		return 0
	case s.Type.Is("boolean"):
		return false
	}
	return nil
}

// merge copies src into dst, descending into maps present on both sides.
func merge(dst, src map[string]any) map[string]any {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			merge(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

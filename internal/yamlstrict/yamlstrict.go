// Package yamlstrict decodes a YAML configuration file strictly into Go
// structs, reporting every problem at once in the words of the file: the key
// as a dotted path ("store.path", "coordinators[0].password") with its
// line:column, never a Go type name. Unknown keys get a suggestion, keys
// given twice and values of the wrong kind are problems like any other, and
// a field whose type implements yaml.Unmarshaler (a secret that refuses to be
// written inline) reports its error as a problem of its key.
package yamlstrict

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrEmpty is returned for a document with no content.
var ErrEmpty = errors.New("file is empty")

// SyntaxError is a document that is not YAML; nothing of it was decoded.
type SyntaxError struct{ Problem Problem }

func (e *SyntaxError) Error() string { return e.Problem.String() }

// Problem is one thing wrong with a document, at a place in it.
type Problem struct {
	Path    string // dotted key path; "" for the document itself
	Line    int    // 1-based; 0 when unknown
	Column  int    // 1-based; 0 when unknown
	Message string
}

// String is "LINE:COL: PATH: MESSAGE", leaving out what is unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Pos is where a key stands in the document.
type Pos struct{ Line, Column int }

// Result is what Decode found: the problems, and the place of every key it
// decoded (by dotted path), for problems the caller finds later.
type Result struct {
	Problems []Problem
	Keys     map[string]Pos
}

// MaxValues bounds the values (scalars, lists and mappings) a document
// stands for once every alias is expanded. Decoding visits an alias's value
// again at each alias, so a small file of aliases of aliases (an "alias
// bomb") would otherwise decode into gigabytes; a document past it is a
// *SyntaxError naming the line where it crosses, and nothing is decoded.
const MaxValues = 50_000

// Decode decodes the single YAML document data into out (a pointer to a
// struct whose fields carry `yaml:"name"` tags). Problems are collected, not
// returned as an error: the fields that could be decoded are set. A syntax
// document that is not YAML is a *SyntaxError (with its line and column),
// as is one that expands past MaxValues; one with no content ErrEmpty.
func Decode(data []byte, out any) (Result, error) {
	res := Result{Keys: map[string]Pos{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return res, &SyntaxError{syntaxProblem(data, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return res, ErrEmpty
	}
	if p, ok := overBudget(doc.Content[0], MaxValues); ok {
		return res, &SyntaxError{p}
	}
	d := &decoder{res: &res}
	d.value(doc.Content[0], reflect.ValueOf(out).Elem(), "")
	return res, nil
}

type decoder struct{ res *Result }

func (d *decoder) add(n *yaml.Node, path, format string, a ...any) {
	d.res.Problems = append(d.res.Problems, Problem{Path: path, Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, a...)})
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// value decodes n into v, the value at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.add(n, path, "%s", err.Error())
		}
		return
	}
	if isNull(n) {
		return // the zero value, as yaml.v3 leaves it
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.value(n, e.Elem(), path)
		v.Set(e)
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.Map:
		d.stringMap(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// mapping decodes a mapping into the struct v by its fields' yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "want a mapping of keys, got %s", describe(n))
		return
	}
	fields := map[string]int{}
	var names []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = i
			names = append(names, name)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		if first, ok := seen[k.Value]; ok {
			d.add(k, key, "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		idx, ok := fields[k.Value]
		if !ok {
			msg := "unknown key"
			if s := suggest(k.Value, names); s != "" {
				msg += " (did you mean " + join(path, s) + "?)"
			}
			d.add(k, key, "%s", msg)
			continue
		}
		d.res.Keys[key] = Pos{k.Line, k.Column}
		d.value(val, v.Field(idx), key)
	}
}

// stringMap decodes a mapping with string keys into the map v.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "want a mapping of keys, got %s", describe(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		if first, ok := seen[k.Value]; ok {
			d.add(k, key, "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.res.Keys[key] = Pos{k.Line, k.Column}
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, key)
		v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
}

// sequence decodes a sequence into the slice v.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(n, path, "want a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		key := fmt.Sprintf("%s[%d]", path, i)
		d.res.Keys[key] = Pos{e.Line, e.Column}
		d.value(e, s.Index(i), key)
	}
	v.Set(s)
}

// scalar decodes a string, number or boolean.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	want := map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false",
		reflect.Float32: "a number", reflect.Float64: "a number"}[v.Kind()]
	if want == "" {
		want = "a whole number"
	}
	if n.Kind != yaml.ScalarNode {
		d.add(n, path, "want %s, got %s", want, describe(n))
		return
	}
	p := reflect.New(v.Type())
	if err := n.Decode(p.Interface()); err != nil {
		d.add(n, path, "want %s, got %s", want, describe(n))
		return
	}
	if f := p.Elem(); f.CanFloat() && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
		// .nan compares false with every bound a validation checks.
		d.add(n, path, "want a finite number, got %s", describe(n))
		return
	}
	v.Set(p.Elem())
}

// overBudget walks the document as decoding will, each alias standing for
// its whole anchored value, and returns the problem at the node where the
// count of values passes max. Sizes of anchored values are computed once
// and saturate at max+1, so the walk is linear in the file, not in what it
// expands to.
func overBudget(root *yaml.Node, max int) (Problem, bool) {
	b := &budget{max: max, sizes: map[*yaml.Node]int{}}
	var used int
	var walk func(n *yaml.Node) *yaml.Node
	walk = func(n *yaml.Node) *yaml.Node {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if used += b.size(n.Alias); used > max {
				return n
			}
			return nil
		}
		if used++; used > max {
			return n
		}
		for _, c := range n.Content {
			if at := walk(c); at != nil {
				return at
			}
		}
		return nil
	}
	at := walk(root)
	if at == nil {
		return Problem{}, false
	}
	msg := fmt.Sprintf("the document stands for more than %d values; keep it smaller", max)
	if at.Kind == yaml.AliasNode {
		msg = fmt.Sprintf("alias *%s expands the document past %d values (each alias repeats its anchor's whole value); "+
			"write the values out or use fewer aliases", at.Value, max)
	}
	return Problem{Line: at.Line, Column: at.Column, Message: msg}, true
}

// budget memoizes the expanded size of anchored values.
type budget struct {
	max   int
	sizes map[*yaml.Node]int
}

// size is how many values n stands for with its aliases expanded, at most
// max+1. An alias to a value that contains it (the parser refuses those)
// counts as past the budget.
func (b *budget) size(n *yaml.Node) int {
	if s, ok := b.sizes[n]; ok {
		return s
	}
	b.sizes[n] = b.max + 1 // while being computed: a cycle is too big
	total := 1
	for _, c := range n.Content {
		if c.Kind == yaml.AliasNode && c.Alias != nil {
			c = c.Alias
		}
		if total += b.size(c); total > b.max {
			total = b.max + 1
			break
		}
	}
	b.sizes[n] = total
	return total
}

// describe names what a node holds, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest returns the known name closest to key when it is close enough to
// be a typo: one edit (a letter added, dropped, changed or two swapped) per
// four letters, at least one.
func suggest(key string, names []string) string {
	best, bestDist := "", max(1, len(key)/4)+1
	for _, name := range names {
		if dist := editDistance(strings.ToLower(key), name); dist < bestDist {
			best, bestDist = name, dist
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b in
// bytes: Levenshtein's, with swapping two neighbours as one edit.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

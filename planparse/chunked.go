package planparse

// chunked is a list that grows in chunks, never moving what it holds: a plan's
// changes are collected in one and copied once, at the end, into a slice of
// their number (ChangeSet.Changes). A slice grown by doubling copies itself at
// each step and ends with up to half of it spare, and both the old arrays and
// the spare capacity stay in the heap: on a 50,000-instance plan (328 bytes a
// change) they were most of the parse's peak heap.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// maxChunk is the length of a chunk once the list is long; the first ones are
// shorter, so that a small plan allocates little.
const maxChunk = 1024

// add appends v and returns where it is kept, valid until the list is dropped.
func (l *chunked[T]) add(v T) *T {
	k := len(l.chunks) - 1
	if k < 0 || len(l.chunks[k]) == cap(l.chunks[k]) {
		size := maxChunk
		if k < 0 {
			size = 8
		} else if c := cap(l.chunks[k]); c < maxChunk {
			size = 2 * c
		}
		l.chunks = append(l.chunks, make([]T, 0, size))
		k++
	}
	l.chunks[k] = append(l.chunks[k], v)
	l.n++
	return &l.chunks[k][len(l.chunks[k])-1]
}

// reserve makes the first chunk of an empty list hold n values, for a caller
// that knows about how many it will add: a batch of entries of the parallel
// parse, most of which add one change each.
func (l *chunked[T]) reserve(n int) {
	if len(l.chunks) == 0 && n > 0 {
		l.chunks = append(l.chunks, make([]T, 0, n))
	}
}

// join appends the values of m, taking its chunks over: m is not used again.
func (l *chunked[T]) join(m chunked[T]) {
	l.chunks = append(l.chunks, m.chunks...)
	l.n += m.n
}

// len is the number of values added.
func (l *chunked[T]) len() int { return l.n }

// at returns the i-th value added; the latest are found first.
func (l *chunked[T]) at(i int) *T {
	j := l.n
	for k := len(l.chunks) - 1; k >= 0; k-- {
		if j -= len(l.chunks[k]); i >= j {
			return &l.chunks[k][i-j]
		}
	}
	panic("planparse: chunked index out of range")
}

// slice copies the values into a slice of their number (empty, not nil) and
// drops the chunks.
func (l *chunked[T]) slice() []T {
	out := make([]T, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	*l = chunked[T]{}
	return out
}

package planparse

import (
	"cmp"
	"errors"
	"runtime/debug"
	"slices"
	"sync"
)

// ParseBytesParallel is ParseBytes that reads the resource_changes entries,
// most of the parse's work, on up to workers goroutines, and says which bytes of
// b it is done with. It returns what ParseBytes returns, change for change and
// error for error:
//
//   - One goroutine walks the plan as ParseBytes does, member by member, but
//     steps over each resource_changes entry structurally (skipStructure, five
//     times faster than reading it). It hands the entries' exact offsets on in
//     batches of about splitBatchBytes, so no entry boundary is ever guessed:
//     nothing a plan holds can make a worker start inside a string or a value.
//   - The workers read each batch's entries with readEntry, as the sequential
//     parse does, into their own lists; every entry must end exactly where the
//     walk found its end. The lists are joined in plan order, the indexes of
//     additions and removals shifted by the changes before them, and the rest
//     (moves, taints, the copy into ChangeSet) is finish, as before.
//   - Any error, or an entry that ends elsewhere, drops the parallel result and
//     the plan is parsed again by ParseBytes, which words the error. A bad plan
//     costs up to two parses; a good one is never judged on the parallel path's
//     word alone, since both paths run the same readEntry on the same bytes.
//
// done(lo, hi), when done is not nil, says that b[lo:hi] is not needed soon: the
// ranges never overlap, arrive from any goroutine but never concurrently, and
// cover the plan but for white space around it. Like ParseBytesProgress's hint
// it lets a caller drop the pages of a mapped file behind the parse; those bytes
// must stay readable (prior_state may be read again for taints at the end).
// workers < 2 parses on the calling goroutine alone.
func ParseBytesParallel(b []byte, workers int, done func(lo, hi int)) (*ChangeSet, error) {
	return parseParallel(b, workers, splitBatchBytes, done)
}

// splitBatchBytes is about how many bytes of entries a worker takes at a time:
// enough to make the hand-over cheap, few enough to share a 10,000-instance
// plan's 13 MB of entries between two cores evenly.
const splitBatchBytes = 1 << 20

// errSplit is an entry the walk and a worker ended at different offsets, or one
// the walk would not hand over: the sequential parse decides.
var errSplit = errors.New("planparse: entry boundaries disagree")

func parseParallel(b []byte, workers, batchBytes int, done func(lo, hi int)) (*ChangeSet, error) {
	said := &onceRanges{done: done}
	report := said.report
	start := skipSpace(b, 0)
	if workers >= 2 && start < len(b) && b[start] == '{' {
		if cs, err := splitParse(b, start, workers, batchBytes, report); err == nil {
			return cs, nil
		}
	}
	return ParseBytesProgress(b, (&progress{report: report}).passed)
}

// onceRanges tells done of each byte once: the sequential parse that follows
// a failed parallel one walks the plan from its start again, over ranges the
// walk and the workers already said (a caller counting the bytes of a chunk
// would drop it early, or, its count gone past zero, never).
type onceRanges struct {
	mu   sync.Mutex
	done func(lo, hi int)
	// said are the ranges told, sorted, disjoint and not adjacent.
	said [][2]int
}

// report tells done of the parts of b[lo:hi] not told before.
func (o *onceRanges) report(lo, hi int) {
	if o.done == nil || hi <= lo {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	// The first range that ends at or after lo: it and the ones after it
	// that start at or before hi touch [lo, hi).
	i, _ := slices.BinarySearchFunc(o.said, lo, func(r [2]int, lo int) int { return cmp.Compare(r[1], lo) })
	j := i
	at := lo
	for ; j < len(o.said) && o.said[j][0] <= hi; j++ {
		if at < o.said[j][0] {
			o.done(at, o.said[j][0])
		}
		at = max(at, o.said[j][1])
	}
	if at < hi {
		o.done(at, hi)
	}
	merged := [2]int{lo, hi}
	if j > i {
		merged = [2]int{min(lo, o.said[i][0]), max(hi, o.said[j-1][1])}
	}
	o.said = slices.Replace(o.said, i, j, merged)
}

// progress turns a walk's offsets (ParseBytesProgress's hint) into the ranges
// done is told of.
type progress struct {
	report func(lo, hi int)
	// walked is where the bytes reported so far end.
	walked int
}

// passed reports the bytes since the last call.
func (g *progress) passed(n int) {
	if n > g.walked {
		g.report(g.walked, n)
		g.walked = n
	}
}

// rcSplit hands the resource_changes entries from the walk to the workers. The
// walk's progress never covers an entry: the workers report those once read.
type rcSplit struct {
	progress
	work       chan *rcBatch
	batches    []*rcBatch // in plan order; the walk's own
	cur        *rcBatch
	batchBytes int
	// lastLen is the number of entries of the batch sent last.
	lastLen int
}

// rcBatch is a run of entries, and what a worker read of them.
type rcBatch struct {
	lo, hi int // the bytes of b it covers, separators included
	first  int // the index of its first entry in resource_changes
	spans  []entrySpan
	// Filled by the worker that read it.
	collected     chunked[Change]
	desired       chunked[Desired]
	resources     []ResourceChange
	others        []OtherChange
	adds, removes []int
	needPrior     bool
	err           error
}

type entrySpan struct{ at, end int }

// splitParse is the parallel parse; an error means "parse again in sequence".
func splitParse(b []byte, start, workers, batchBytes int, report func(lo, hi int)) (*ChangeSet, error) {
	s := &rcSplit{progress: progress{report: report}, work: make(chan *rcBatch, 4*workers), batchBytes: batchBytes}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); s.read(b, true) }()
	}
	walking := true
	defer func() {
		if walking { // the walk panicked (a fault on a mapped file): free the workers
			close(s.work)
			wg.Wait()
		}
	}()
	p := parser{cs: newChangeSet(), split: s, passed: s.passed}
	err := p.planBytes(b, start) // in split mode planEnd leaves finish to join
	walking = false
	close(s.work)
	s.read(b, false) // the walk is over: this goroutine reads what is left
	wg.Wait()
	if err != nil {
		return nil, err
	}
	for _, bt := range s.batches {
		if bt.err != nil {
			return nil, bt.err
		}
	}
	s.join(&p)
	p.finish()
	return p.cs, nil
}

// scan walks the resource_changes array at b[i], '[' checked, as
// resourceChangesAt does, handing its entries to the workers.
func (s *rcSplit) scan(b []byte, i int) (int, error) {
	s.passed(i)
	n := 0
	end, err := walkItems(b, i, '[', ']', func(at int) (int, error) {
		if at >= len(b) || b[at] != '{' {
			return 0, errSplit // not an object: the sequential parse words it
		}
		e, err := skipStructure(b, at) // the worker checks UTF-8 as it reads
		if err != nil {
			return 0, err
		}
		if s.cur == nil {
			// About as many entries as the last batch: its spans grow once at most.
			s.cur = &rcBatch{lo: s.walked, first: n, spans: make([]entrySpan, 0, s.lastLen+s.lastLen/4+8)}
		}
		s.cur.spans = append(s.cur.spans, entrySpan{at, e})
		s.cur.hi = e
		n++
		if e-s.cur.lo >= s.batchBytes {
			s.send()
		}
		return e, nil
	})
	if err != nil {
		return 0, err
	}
	if s.cur != nil { // the last batch takes the ']'
		s.cur.hi = end
		s.send()
	}
	s.passed(end)
	return end, nil
}

// send hands the batch being collected to the workers.
func (s *rcSplit) send() {
	bt := s.cur
	s.cur = nil
	s.lastLen = len(bt.spans)
	s.batches = append(s.batches, bt)
	s.walked = bt.hi
	s.work <- bt
}

// read reads the batches handed to it until there are no more. A fault reading
// b (a mapped file cut short under the parse) fails the batch, never the
// process: the workers ask for faults as panics, as a caller holding a mapped
// file does on its own goroutine (shardgate check), and the sequential parse
// that follows meets the fault on the caller's goroutine.
func (s *rcSplit) read(b []byte, worker bool) {
	if worker {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	q := parser{passed: func(int) {}}
	for bt := range s.work {
		q.cs = &ChangeSet{}
		q.collected, q.desired = chunked[Change]{}, chunked[Desired]{}
		q.collected.reserve(len(bt.spans))
		q.desired.reserve(len(bt.spans))
		q.adds, q.removes, q.needPrior = nil, nil, false
		bt.err = readBatch(&q, b, bt)
		bt.collected, bt.desired = q.collected, q.desired
		bt.resources, bt.others = q.cs.Resources, q.cs.OtherChanges
		bt.adds, bt.removes, bt.needPrior = q.adds, q.removes, q.needPrior
		if bt.err == nil {
			s.report(bt.lo, bt.hi)
		}
	}
}

// errFault is a fault reading the plan's bytes in a worker.
var errFault = errors.New("planparse: fault reading the plan")

// readBatch reads bt's entries into q; each must end where the walk found its end.
func readBatch(q *parser, b []byte, bt *rcBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = errFault
		}
	}()
	for k, sp := range bt.spans {
		q.entryStart = sp.at
		e, err := q.readEntry(bt.first+k, b, sp.at, true)
		if err == nil && e != sp.end {
			err = errSplit
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// join puts what the workers read into p, in plan order, as if p had read it.
func (s *rcSplit) join(p *parser) {
	var resources, others, adds, removes int
	for _, bt := range s.batches {
		resources, others = resources+len(bt.resources), others+len(bt.others)
		adds, removes = adds+len(bt.adds), removes+len(bt.removes)
	}
	// Each list in an array of its length: finish keeps them as they are.
	p.cs.Resources = append(make([]ResourceChange, 0, len(p.cs.Resources)+resources), p.cs.Resources...)
	p.cs.OtherChanges = append(make([]OtherChange, 0, len(p.cs.OtherChanges)+others), p.cs.OtherChanges...)
	p.adds, p.removes = make([]int, 0, adds), make([]int, 0, removes)
	for _, bt := range s.batches {
		base := p.collected.len()
		for _, i := range bt.adds {
			p.adds = append(p.adds, base+i)
		}
		for _, i := range bt.removes {
			p.removes = append(p.removes, base+i)
		}
		p.collected.join(bt.collected)
		p.desired.join(bt.desired)
		p.cs.Resources = append(p.cs.Resources, bt.resources...)
		p.cs.OtherChanges = append(p.cs.OtherChanges, bt.others...)
		p.needPrior = p.needPrior || bt.needPrior
	}
}

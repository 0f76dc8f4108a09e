package planparse

import (
	"cmp"
	"errors"
	"slices"
	"sync"
)

// ParseBytesParallel is ParseBytes that reads the resource_changes entries,
// most of the parse's work, on up to workers goroutines, and says which bytes of
// b it is done with. It returns what ParseBytes returns, change for change and
// error for error:
//
//   - One goroutine walks the plan as ParseBytes does, member by member. At
//     resource_changes it does not step over the entries (that cost a fifth of
//     the parse): it cuts the array into pieces of about splitBatchBytes at
//     guessed entry starts (where terraform writes `},{"address":`), and reads
//     pieces with the workers until none is left. A worker cuts them first,
//     at the first `"resource_changes":[` in b, and starts reading while the
//     walk still steps over planned_values; when the walk finds the member
//     elsewhere, those pieces are dropped and the walk cuts its own.
//   - A reader reads its piece's entries with readEntry, as the sequential parse
//     does, into a list of its own, from the piece's start until an entry start
//     that is a later piece's, or the array's end. Only the pieces that the
//     first one leads to count (chainFrom): a reader that starts at a true
//     entry start stops only at true entry starts, so a guess inside a string
//     or a value is never landed on, and its piece is dropped. The walk goes on
//     from the array's end that chain found; the lists are joined in plan
//     order, the indexes of additions and removals shifted by the changes
//     before them, and the rest (moves, taints, the copy into ChangeSet) is
//     finish, as before.
//   - Any error in the walk or in a piece of the chain drops the parallel result
//     and the plan is parsed again by ParseBytes, which words the error. A bad
//     plan costs up to two parses; a good one is never judged on the parallel
//     path's word alone, since both paths run the same readEntry on the same
//     bytes. Bad guesses cost time only: a dropped piece is read for nothing,
//     and a reader that passes a guess reads on.
//
// done(lo, hi), when done is not nil, says that b[lo:hi] is not needed soon: the
// ranges never overlap, arrive from any goroutine but never concurrently, and
// cover the plan but for white space around it. Like ParseBytesProgress's hint
// it lets a caller drop the pages of a mapped file behind the parse; those bytes
// must stay readable (prior_state may be read again for taints at the end, and
// a dropped piece may have told of bytes the walk has still to read).
// workers < 2 parses on the calling goroutine alone.
func ParseBytesParallel(b []byte, workers int, done func(lo, hi int)) (*ChangeSet, error) {
	return ParseBytesParallelHints(b, workers, Hints{Done: done})
}

// Hints are what a parse tells its caller of the bytes it reads, so that the
// caller can drop the pages of a mapped file it does not need held; nil fields
// are not called.
type Hints struct {
	// Done is ParseBytesParallel's done.
	Done func(lo, hi int)
	// ReadAhead(lo, hi) says that b[lo:hi] was read ahead of the walk, which
	// will read it again, later: a worker looking for where resource_changes
	// starts reads every byte before it (planned_values, a third of a plan) at
	// once. Those bytes must stay readable; their pages need not stay in
	// memory meanwhile. Called at most once, from any goroutine, possibly while
	// the walk reads the same bytes.
	ReadAhead func(lo, hi int)
}

// ParseBytesParallelHints is ParseBytesParallel with every hint.
func ParseBytesParallelHints(b []byte, workers int, h Hints) (*ChangeSet, error) {
	return parseParallel(b, workers, splitBatchBytes, h)
}

// splitBatchBytes is about how many bytes of entries a worker takes at a time:
// enough to make the hand-over cheap, few enough to share a 10,000-instance
// plan's 13 MB of entries between two cores evenly.
const splitBatchBytes = 1 << 20

// errSplit is an entry the walk and a worker ended at different offsets, or one
// the walk would not hand over: the sequential parse decides.
var errSplit = errors.New("planparse: entry boundaries disagree")

func parseParallel(b []byte, workers, batchBytes int, h Hints) (*ChangeSet, error) {
	said := &onceRanges{done: h.Done}
	report := said.report
	start := skipSpace(b, 0)
	if workers >= 2 && start < len(b) && b[start] == '{' {
		s := newSplit(report, batchBytes)
		s.readAhead = h.ReadAhead
		if cs, err := splitParse(b, start, workers, s); err == nil {
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

// splitParse is the parallel parse; an error means "parse again in sequence".
func splitParse(b []byte, start, workers int, s *rcSplit) (*ChangeSet, error) {
	var wg sync.WaitGroup
	for k := range workers - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); s.work(b, k == 0) }()
	}
	walking := true
	defer func() {
		if walking { // the walk panicked (a fault on a mapped file): free the workers
			s.endWalk()
			wg.Wait()
		}
	}()
	p := parser{cs: newChangeSet(), split: s, passed: s.passed}
	err := p.planBytes(b, start) // in split mode planEnd leaves finish to join
	walking = false
	s.endWalk() // the chain is read, or there is none
	wg.Wait()
	if err != nil {
		return nil, err
	}
	s.join(&p)
	p.finish()
	return p.cs, nil
}

// join puts what the workers read into p, in plan order, as if p had read it.
func (s *rcSplit) join(p *parser) {
	var resources, others, adds, removes int
	for _, bt := range s.chain {
		resources, others = resources+len(bt.resources), others+len(bt.others)
		adds, removes = adds+len(bt.adds), removes+len(bt.removes)
	}
	// Each list in an array of its length: finish keeps them as they are.
	p.cs.Resources = append(make([]ResourceChange, 0, len(p.cs.Resources)+resources), p.cs.Resources...)
	p.cs.OtherChanges = append(make([]OtherChange, 0, len(p.cs.OtherChanges)+others), p.cs.OtherChanges...)
	p.adds, p.removes = make([]int, 0, adds), make([]int, 0, removes)
	for _, bt := range s.chain {
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

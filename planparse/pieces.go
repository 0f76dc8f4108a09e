package planparse

import (
	"bytes"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// rcSplit shares the resource_changes entries between the walk and the
// workers. The walk does not step over the entries: it cuts the array into
// pieces at guessed entry starts, reads pieces with the workers, and goes on
// from where the pieces it could prove found the array's end.
type rcSplit struct {
	progress
	batchBytes int
	readAhead  func(lo, hi int) // Hints.ReadAhead, or nil
	// set is the pieces being read: a worker's, cut at a guess of where the
	// array starts, until the walk finds it elsewhere and cuts its own.
	set atomic.Pointer[pieceSet]
	// ready is closed once set is first set, settled once the walk has set it
	// for good (or is over without resource_changes): the workers wait for them.
	ready, settled            chan struct{}
	mu                        sync.Mutex
	isReady, isSet, isSettled bool
	// chain are the pieces proven to be the array, in plan order.
	chain []*rcPiece
}

// pieceSet is pieces cut from one start, and the index of the next to take.
type pieceSet struct {
	pieces []*rcPiece
	next   atomic.Int64
}

func newSplit(report func(lo, hi int), batchBytes int) *rcSplit {
	return &rcSplit{progress: progress{report: report}, batchBytes: batchBytes, ready: make(chan struct{}), settled: make(chan struct{})}
}

// rcPiece is a run of entries from a guessed entry start, and what a reader
// read of them.
type rcPiece struct {
	at   int // its first entry's '{'; the first piece's, the array's '['
	read chan struct{}
	// stop is where the reader stopped: the start of piece landed, an entry
	// start it reached, or just past the array's ']' (landed < 0).
	stop, landed  int
	collected     chunked[Change]
	desired       chunked[Desired]
	resources     []ResourceChange
	others        []OtherChange
	adds, removes []int
	needPrior     bool
	err           error
}

// entryMark is how terraform writes the start of every resource_changes entry
// but the first, so the most likely place for one: "address" is an entry's
// first member. Nothing depends on it but how evenly the readers share: a guess
// that is no entry start is never landed on (see chainFrom).
var entryMark = []byte(`},{"address":`)

// guessWindow is the least a guess is looked for in, whatever the batches.
const guessWindow = 64 << 10

// scan reads the resource_changes array at b[i], '[' checked, as
// resourceChangesAt does: it cuts it into pieces about batchBytes long, reads
// them with the workers, and returns the index after the array.
func (s *rcSplit) scan(b []byte, i int) (int, error) {
	s.passed(i)
	ps := s.settle(b, i)
	s.read(b, ps)
	end, err := s.chainFrom(ps.pieces)
	if err != nil {
		return 0, err
	}
	s.walked = end // the readers told of the pieces' bytes
	return end, nil
}

// cut cuts the array at b[i] into pieces about batchBytes long, at guesses.
func (s *rcSplit) cut(b []byte, i int) []*rcPiece {
	pieces := []*rcPiece{{at: i, read: make(chan struct{})}}
	for at := i + s.batchBytes; at < len(b); {
		// A guess at most a few batches on: past the array there may be none.
		k := bytes.Index(b[at:min(len(b), at+max(s.batchBytes/4, guessWindow))], entryMark)
		if k < 0 {
			break
		}
		g := at + k + 2
		pieces = append(pieces, &rcPiece{at: g, read: make(chan struct{})})
		at = g + s.batchBytes
	}
	return pieces
}

// work is a worker: it reads pieces once they are cut. The first worker cuts
// them itself, at where resource_changes most likely starts, so that the
// entries are read while the walk still steps over what comes before them
// (planned_values, a third of a plan); the walk reads on only if it finds the
// member there.
func (s *rcSplit) work(b []byte, first bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if first {
		s.guess(b)
	}
	<-s.ready
	s.read(b, s.set.Load())
	<-s.settled // the guess's pieces were read, or dropped: the walk's may be left
	s.read(b, s.set.Load())
}

// guess cuts pieces at where resource_changes most likely starts. A fault
// reading b leaves them to the walk, which meets it.
func (s *rcSplit) guess(b []byte) {
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
		}
	}()
	i := guessArray(b)
	if s.readAhead != nil {
		scanned := i
		if i < 0 {
			scanned = len(b) // all of it, for nothing
		}
		s.readAhead(0, scanned)
	}
	if i >= 0 && !s.walkArrived() {
		s.offer(s.cut(b, i))
	}
}

// rcMember is how terraform writes the resource_changes member's name.
const rcMember = `"resource_changes":`

// guessArray returns the index of the first '[' right after rcMember, or -1.
// It looks from one '[' to the next: a plan has few of them before the array.
func guessArray(b []byte) int {
	for i := 0; ; i++ {
		k := bytes.IndexByte(b[i:], '[')
		if k < 0 {
			return -1
		}
		if i += k; i >= len(rcMember) && string(b[i-len(rcMember):i]) == rcMember {
			return i
		}
	}
}

// offer hands the pieces cut at a guess to the workers, unless the walk has
// reached resource_changes.
func (s *rcSplit) offer(pieces []*rcPiece) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isSet && !s.isReady {
		s.set.Store(&pieceSet{pieces: pieces})
		s.isReady = true
		close(s.ready)
	}
}

// walkArrived says whether the walk has reached resource_changes, or ended:
// a guess is no use then.
func (s *rcSplit) walkArrived() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isSet
}

// settle returns the pieces of the array at b[i]: those cut at the guess if it
// was right, else the walk's own, which the workers go on to (they drop the
// guess's).
func (s *rcSplit) settle(b []byte, i int) *pieceSet {
	s.mu.Lock()
	s.isSet = true // no more offers
	ps := s.set.Load()
	s.mu.Unlock()
	if ps == nil || ps.pieces[0].at != i {
		ps = &pieceSet{pieces: s.cut(b, i)}
	}
	s.setFor(ps)
	return ps
}

// setFor makes ps the pieces for good.
func (s *rcSplit) setFor(ps *pieceSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(ps)
}

// endWalk says the walk is over: pieces still untaken are no use (the chain
// was read, or there is none), and workers still waiting go.
func (s *rcSplit) endWalk() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(nil)
}

// setLocked sets the pieces for good and lets the workers go; s.mu is held.
func (s *rcSplit) setLocked(ps *pieceSet) {
	s.set.Store(ps) // before the workers wake
	s.isSet = true
	if !s.isReady {
		s.isReady = true
		close(s.ready)
	}
	if !s.isSettled {
		s.isSettled = true
		close(s.settled)
	}
}

// chainFrom waits for the pieces that make up the array: the first, and each
// that the one before stopped at. A reader that starts at a true entry start
// and reads entry by entry stops only at true entry starts, so every guess it
// lands on is one, and the next reader's entries are the plan's too; a guess
// inside a value or a string is never landed on, and its piece is left out.
// An error in a piece of the chain fails the parse (the sequential parse
// words it).
func (s *rcSplit) chainFrom(pieces []*rcPiece) (int, error) {
	for k := 0; ; {
		pc := pieces[k]
		<-pc.read
		if pc.err != nil {
			return 0, pc.err
		}
		s.chain = append(s.chain, pc)
		if pc.landed < 0 {
			return pc.stop, nil
		}
		k = pc.landed
	}
}

// read reads the pieces not yet taken, until there are none. A fault reading b
// (a mapped file cut short under the parse) fails the piece, never the
// process: the workers ask for faults as panics, as a caller holding a mapped
// file does on its own goroutine (shardgate check), and the sequential parse
// that follows meets the fault on the caller's goroutine.
func (s *rcSplit) read(b []byte, ps *pieceSet) {
	q := parser{passed: func(int) {}}
	// The bytes read and the changes and desired states found in them: lists
	// sized from them waste little (chunks that double leave up to half spare).
	var bytesRead, changes, desired int
	for ps != nil && s.set.Load() == ps { // a dropped guess's pieces are left
		k := int(ps.next.Add(1)) - 1
		if k >= len(ps.pieces) {
			return
		}
		pc := ps.pieces[k]
		q.cs = &ChangeSet{}
		q.collected, q.desired = chunked[Change]{}, chunked[Desired]{}
		if k+1 < len(ps.pieces) && bytesRead > 0 {
			n := ps.pieces[k+1].at - pc.at
			q.collected.reserve(n*changes/bytesRead + 8)
			q.desired.reserve(n*desired/bytesRead + 8)
		}
		q.adds, q.removes, q.needPrior = nil, nil, false
		pc.err = readPiece(&q, b, ps.pieces, k)
		if pc.err == nil {
			bytesRead += pc.stop - pc.at
			changes, desired = changes+q.collected.len(), desired+q.desired.len()
		}
		pc.collected, pc.desired = q.collected, q.desired
		pc.resources, pc.others = q.cs.Resources, q.cs.OtherChanges
		pc.adds, pc.removes, pc.needPrior = q.adds, q.removes, q.needPrior
		if pc.err == nil {
			s.report(pc.at, pc.stop)
		}
		close(pc.read)
	}
}

// errFault is a fault reading the plan's bytes in a reader.
var errFault = errors.New("planparse: fault reading the plan")

// readPiece reads the entries of piece k of pieces into q, from its start
// until an entry start that is a later piece's (landed) or the array's end.
// Entry indexes in q are the piece's own: they only word errors, and an error
// sends the plan to the sequential parse, which words its own.
func readPiece(q *parser, b []byte, pieces []*rcPiece, k int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = errFault
		}
	}()
	pc := pieces[k]
	i, next := pc.at, k+1
	if k == 0 { // the array's '['
		if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
			pc.stop, pc.landed = i+1, -1
			return nil
		}
	}
	for n := 0; ; n++ {
		for next < len(pieces) && pieces[next].at < i {
			next++
		}
		if next < len(pieces) && pieces[next].at == i {
			pc.stop, pc.landed = i, next
			return nil
		}
		if i >= len(b) || b[i] != '{' {
			return errSplit // not an object: the sequential parse words it
		}
		q.entryStart = i
		e, err := q.readEntry(n, b, i, true)
		if err != nil {
			return err
		}
		switch i = skipSpace(b, e); {
		case i >= len(b) || b[i] != ']' && b[i] != ',':
			return errSplit
		case b[i] == ']':
			pc.stop, pc.landed = i+1, -1
			return nil
		}
		i = skipSpace(b, i+1)
	}
}

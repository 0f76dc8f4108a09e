package planparse_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

var knownActions = map[planparse.Action]bool{
	planparse.ActionCreate: true, planparse.ActionScale: true, planparse.ActionDelete: true,
	planparse.ActionUnmanage: true, planparse.ActionUpdate: true, planparse.ActionNoop: true,
}

func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../testdata/terraform/plans/*.json", "testdata/*.json"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Add(planparsetest.GeneratePlan(3, 50, 30))
	f.Add(planJSON(entry("redisstreamcoordinator_group.g", groupType, change(`["update"]`, orders4, renamed8))))
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		cs, err := planparse.ParseBytes(raw)
		if !bytes.Equal(orig, raw) {
			t.Fatal("ParseBytes changed its input")
		}
		streamed, serr := planparse.Parse(bytes.NewReader(raw))
		if (err == nil) != (serr == nil) {
			t.Fatalf("ParseBytes error %v, Parse error %v", err, serr)
		}
		if err != nil {
			if cs != nil {
				t.Fatal("a ChangeSet with an error")
			}
			return
		}
		if cs == nil || streamed == nil {
			t.Fatal("nil ChangeSet without an error")
		}
		for _, c := range cs.Changes {
			if !knownActions[c.Action] {
				t.Fatalf("unknown action %q", c.Action)
			}
		}
	})
}

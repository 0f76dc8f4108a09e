package planparse_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/planparse/planparsetest"
)

var knownActions = map[planparse.Action]bool{
	planparse.ActionCreate: true, planparse.ActionScale: true, planparse.ActionDelete: true,
	planparse.ActionUnmanage: true, planparse.ActionUpdate: true, planparse.ActionNoop: true, planparse.ActionMove: true,
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
	// Every action list terraform and OpenTofu write, a move, a taint and an invalid count.
	const m = "module.s.terraform_data.stream_group"
	for _, actions := range []string{`["forget"]`, `["forget","create"]`, `["create","forget"]`, `["create","delete"]`, `["read"]`, `["teleport"]`} {
		f.Add(planJSON(moduleEntry(m, actions, moduleInput("orders", "4"), moduleInput("orders", "8"), `{"id":true}`),
			entry("redisstreamcoordinator_group.g", groupType, change(actions, orders4, orders8)),
			entry("aws_s3_bucket.b", "aws_s3_bucket", change(actions, `{"b":1}`, `{"b":2,"s":"x"}`))))
	}
	f.Add(planJSON(moduleEntry(`module.s["a"].terraform_data.stream_group`, `["delete"]`, moduleInput("orders", "4"), `null`, `{}`),
		moduleEntry(`module.s["b"].terraform_data.stream_group`, `["create"]`, `null`, moduleInputAt("http://C/", "orders", "4.5"), `{"id":true}`),
		moduleEntry(m, `["delete","create"]`, moduleInput("orders", "5"), moduleInput("orders", "5"), `{"id":true}`, tainted)))
	f.Add([]byte(`{"format_version":"1.0","resource_changes":[` + moduleEntry(m, `["delete","create"]`, moduleInput("o", "5"), moduleInput("o", "5"), `{}`) +
		`],"prior_state":{"values":{"root_module":{"resources":[{"address":"` + m + `","tainted":true}]}}}}`))
	f.Add([]byte(`{"format_version":"1.2","planned_values":{},"errored":false,"complete":false}`))
	f.Add([]byte(`{"format_version":"1.0","values":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		cs, err := planparse.ParseBytes(raw)
		if !bytes.Equal(orig, raw) {
			t.Fatal("ParseBytes changed its input")
		}
		// The progress hint changes nothing, and its offsets only grow within the input.
		last := 0
		hinted, herr := planparse.ParseBytesProgress(raw, func(n int) {
			if n < last || n > len(raw) {
				t.Fatalf("progress offset %d after %d, input of %d bytes", n, last, len(raw))
			}
			last = n
		})
		if !reflect.DeepEqual(cs, hinted) || (err == nil) != (herr == nil) || err != nil && err.Error() != herr.Error() {
			t.Fatalf("ParseBytesProgress disagrees with ParseBytes: %v, %v", err, herr)
		}
		// The parallel parse, one entry per batch, agrees too, and reports only
		// ranges of the input.
		par, perr := planparse.ParseParallelBatches(raw, 3, 1, func(lo, hi int) {
			if lo < 0 || hi > len(raw) || lo >= hi {
				t.Fatalf("done range [%d, %d) of an input of %d bytes", lo, hi, len(raw))
			}
		})
		if !reflect.DeepEqual(cs, par) || (err == nil) != (perr == nil) || err != nil && err.Error() != perr.Error() {
			t.Fatalf("ParseBytesParallel disagrees with ParseBytes: %v, %v", err, perr)
		}
		// Parse validates the whole plan, ParseBytes only what it reads (ParseBytes'
		// doc): they must agree on every plan but one that is malformed JSON where
		// planparse does not read, which only Parse may reject.
		streamed, serr := planparse.Parse(bytes.NewReader(raw))
		switch {
		case err != nil && serr == nil:
			t.Fatalf("ParseBytes error %v, Parse none", err)
		case err == nil && serr != nil:
			if !strings.HasPrefix(serr.Error(), "parse plan: not JSON: ") || jsontext.Value(raw).IsValid() {
				t.Fatalf("Parse error %v on a plan ParseBytes accepts", serr)
			}
		case err == nil:
			if !reflect.DeepEqual(cs, streamed) {
				t.Fatalf("ParseBytes and Parse disagree:\n%+v\n%+v", cs, streamed)
			}
		}
		if err != nil {
			if cs != nil {
				t.Fatal("a ChangeSet with an error")
			}
			return
		}
		if cs == nil {
			t.Fatal("nil ChangeSet without an error")
		}
		for _, c := range cs.Changes {
			if !knownActions[c.Action] {
				t.Fatalf("unknown action %q", c.Action)
			}
		}
	})
}

package planparse_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Everything else the plan changes is listed, in plan order, reads and noops left out.
func TestParseOtherChanges(t *testing.T) {
	plan := planJSON(
		entry("aws_s3_bucket.logs", "aws_s3_bucket", change(`["delete"]`, `{"bucket":"logs"}`, `null`), `"action_reason":"delete_because_no_resource_config"`),
		moduleEntry("module.s.terraform_data.stream_group", `["create"]`, `null`, moduleInput("orders", "4"), `{"id":true}`),
		entry("aws_iam_policy.p", "aws_iam_policy", change(`["update"]`, `{"policy":"a"}`, `{"policy":"b"}`)),
		entry("null_resource.same", "null_resource", change(`["no-op"]`, `{}`, `{}`)),
		`{"address":"data.aws_caller_identity.me","mode":"data","type":"aws_caller_identity","name":"me","change":`+change(`["read"]`, `null`, `{}`)+`}`,
		moduleEntry("terraform_data.stream_group", `["create"]`, `null`, `{"input":"something else"}`, `{}`),
		entry("null_resource.gone", "null_resource", change(`["forget"]`, `{}`, `null`)),
		entry("null_resource.swap", "null_resource", change(`["create","delete"]`, `{"id":"1"}`, `{"id":null}`)),
	)
	for name, parse := range parsers {
		cs, err := parse(plan)
		require.NoError(t, err, name)
		require.Len(t, cs.Changes, 1)
		got := cs.OtherChanges
		for i := range got {
			require.Regexp(t, hexSHA256, got[i].Fingerprint)
			got[i].Fingerprint = ""
		}
		require.Equal(t, []planparse.OtherChange{
			{Address: "aws_s3_bucket.logs", Type: "aws_s3_bucket", Actions: []string{"delete"}, ActionReason: "delete_because_no_resource_config"},
			{Address: "aws_iam_policy.p", Type: "aws_iam_policy", Actions: []string{"update"}},
			{Address: "terraform_data.stream_group", Type: "terraform_data", Actions: []string{"create"}},
			{Address: "null_resource.gone", Type: "null_resource", Actions: []string{"forget"}},
			{Address: "null_resource.swap", Type: "null_resource", Actions: []string{"create", "delete"}},
		}, got, name)
		require.Len(t, cs.Resources, 1)
		require.Regexp(t, hexSHA256, cs.Resources[0].Fingerprint)
	}
	cs, err := planparse.ParseBytes(planJSON())
	require.NoError(t, err)
	require.NotNil(t, cs.OtherChanges, "empty, not null, in policy input")
}

// The fingerprint is what a reviewer could see of a change: address, actions and
// after-values, however they are written, with sensitive values out of it.
func TestFingerprint(t *testing.T) {
	const secret = "hunter2-token"
	fp := func(t *testing.T, address, actions, after, afterUnknown, afterSensitive string) string {
		t.Helper()
		e := entry(address, "aws_instance", `{"actions":`+actions+`,"before":{},"after":`+after+
			`,"after_unknown":`+afterUnknown+`,"before_sensitive":{},"after_sensitive":`+afterSensitive+`}`)
		var got []string
		for name, parse := range parsers {
			cs, err := parse(planJSON(e))
			require.NoError(t, err, name)
			require.Len(t, cs.OtherChanges, 1, name)
			require.NotContains(t, string(mustJSON(t, cs)), secret)
			got = append(got, cs.OtherChanges[0].Fingerprint)
		}
		require.Equal(t, got[0], got[1], "both parsers")
		return got[0]
	}
	base := fp(t, "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"`+secret+`"}`,
		`{"ids":[false,true],"arn":true}`, `{"token":true}`)
	same := []struct{ name, address, actions, after, unknown, sensitive string }{
		{"members in another order", "aws_instance.a", `["update"]`, `{"token":"` + secret + `","ids":[1,null],"tags":{"b":2,"a":"1"},"ami":"x"}`,
			`{"arn":true,"ids":[false,true]}`, `{"token":true}`},
		{"white space and escapes", "aws_instance.a", ` [ "update" ] `, "{ \"ami\" : \"\\u0078\" , \"tags\":{\"a\":\"1\",\"b\":2.0},\n\"ids\":[1e0,null],\"token\":\"" + secret + "\"}",
			`{"ids":[false,true],"arn":true}`, `{"token":true,"ami":false}`},
		{"another sensitive value", "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"other"}`,
			`{"ids":[false,true],"arn":true}`, `{"token":true}`},
	}
	for _, tt := range same {
		t.Run("same: "+tt.name, func(t *testing.T) {
			require.Equal(t, base, fp(t, tt.address, tt.actions, tt.after, tt.unknown, tt.sensitive))
		})
	}
	differs := []struct{ name, address, actions, after, unknown, sensitive string }{
		{"another address", "aws_instance.b", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"` + secret + `"}`,
			`{"ids":[false,true],"arn":true}`, `{"token":true}`},
		{"other actions", "aws_instance.a", `["delete","create"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"` + secret + `"}`,
			`{"ids":[false,true],"arn":true}`, `{"token":true}`},
		{"another value", "aws_instance.a", `["update"]`, `{"ami":"y","tags":{"a":"1","b":2},"ids":[1,null],"token":"` + secret + `"}`,
			`{"ids":[false,true],"arn":true}`, `{"token":true}`},
		{"a string where a number was", "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":"2"},"ids":[1,null],"token":"` + secret + `"}`,
			`{"ids":[false,true],"arn":true}`, `{"token":true}`},
		{"known where it was unknown", "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"` + secret + `","arn":null}`,
			`{"ids":[false,true]}`, `{"token":true}`},
		{"no longer sensitive", "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[1,null],"token":"(sensitive)"}`,
			`{"ids":[false,true],"arn":true}`, `{}`},
		{"another element unknown", "aws_instance.a", `["update"]`, `{"ami":"x","tags":{"a":"1","b":2},"ids":[null,2],"token":"` + secret + `"}`,
			`{"ids":[true,false],"arn":true}`, `{"token":true}`},
	}
	for _, tt := range differs {
		t.Run("differs: "+tt.name, func(t *testing.T) {
			require.NotEqual(t, base, fp(t, tt.address, tt.actions, tt.after, tt.unknown, tt.sensitive))
		})
	}
	t.Run("a wholly sensitive after", func(t *testing.T) {
		a := fp(t, "aws_instance.a", `["update"]`, `{"token":"`+secret+`"}`, `{}`, `true`)
		require.Equal(t, a, fp(t, "aws_instance.a", `["update"]`, `{"token":"x","more":1}`, `{}`, `true`))
	})
	t.Run("a duplicate name is malformed", func(t *testing.T) {
		e := entry("aws_instance.a", "aws_instance", change(`["create"]`, `null`, `{"a":1,"a":2}`))
		_, err := planparse.ParseBytes(planJSON(e))
		require.ErrorContains(t, err, "parse plan: not JSON: ")
	})
}

// Coordinator resources are fingerprinted the same way.
func TestFingerprintCoordinatorResources(t *testing.T) {
	const g = "redisstreamcoordinator_group.g"
	a, err := planparse.ParseBytes(planJSON(entry(g, groupType, change(`["update"]`, orders4, orders8))))
	require.NoError(t, err)
	b, err := planparse.ParseBytes(planJSON(entry(g, groupType, change(`["update"]`, orders4,
		`{"id":"orders/billing","shard_count":8,"consumer_group":"billing","stream_prefix":"orders"}`))))
	require.NoError(t, err)
	c, err := planparse.ParseBytes(planJSON(entry(g, groupType, change(`["update"]`, orders4, orders4))))
	require.NoError(t, err)
	require.Regexp(t, hexSHA256, a.Resources[0].Fingerprint)
	require.Equal(t, a.Resources[0].Fingerprint, b.Resources[0].Fingerprint)
	require.NotEqual(t, a.Resources[0].Fingerprint, c.Resources[0].Fingerprint)
}

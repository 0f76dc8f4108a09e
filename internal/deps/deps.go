// Package deps pins the module's dependencies while the packages that use
// them are being written. It is removed once every dependency has a real importer.
package deps

import (
	_ "github.com/bradleyfalzon/ghinstallation/v2"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/go-json-experiment/json"
	_ "github.com/google/go-github/v60/github"
	_ "github.com/hashicorp/terraform-exec/tfexec"
	_ "github.com/hashicorp/terraform-json"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/open-policy-agent/opa/v1/rego"
	_ "github.com/open-policy-agent/opa/v1/tester"
	_ "github.com/pb33f/libopenapi"
	_ "github.com/pb33f/libopenapi-validator"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/sirupsen/logrus"
	_ "github.com/stretchr/testify/require"
	_ "go.etcd.io/bbolt"
	_ "gopkg.in/yaml.v3"
)

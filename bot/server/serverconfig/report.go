package serverconfig

// DefaultMaxProjectChecks is report.max_project_checks when not set.
const DefaultMaxProjectChecks = 20

// rawReport is the `report` section: how a pull request's plans show on GitHub.
type rawReport struct {
	// MaxProjectChecks is the most projects a pull request's plan gives a
	// check run of their own; above it their results fold into the aggregate
	// `shardgate` check run (every check run is a write GitHub paces).
	MaxProjectChecks *int `yaml:"max_project_checks"`
}

// report validates the `report` section into c.
func (v *validator) report(r rawReport, c *Config) {
	c.MaxProjectChecks = DefaultMaxProjectChecks
	if m := r.MaxProjectChecks; m != nil {
		if *m < 1 {
			v.addf("report.max_project_checks must be at least 1, got %d", *m)
		}
		c.MaxProjectChecks = *m
	}
}

// ProjectChecksLimit is MaxProjectChecks, or its default when unset (a
// Config built without Parse).
func (c *Config) ProjectChecksLimit() int {
	if c.MaxProjectChecks > 0 {
		return c.MaxProjectChecks
	}
	return DefaultMaxProjectChecks
}

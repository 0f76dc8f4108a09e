package serverconfig

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardgate/shardgate/store"
)

// DefaultRetention is how long finished apply and webhook jobs are kept
// (store.retention).
const DefaultRetention = 30 * 24 * time.Hour

// PostgresStore is the store.postgres_* part of the configuration: set, the
// store is that PostgreSQL database, shared by every replica, instead of the
// bbolt file at store.path.
type PostgresStore struct {
	// PostgresURL is the database URL; empty on bbolt.
	PostgresURL Secret
	// PostgresPassword is the URL's password alone, so that it is redacted
	// also where it shows without the rest of the URL.
	PostgresPassword Secret
	// JobLease is how long a replica's claim of a webhook job lasts without
	// a heartbeat (store.lease): how long a dead replica's deliveries wait
	// before another replica takes them over.
	JobLease time.Duration
}

// StoreRetention is store.retention, on either store.
type StoreRetention struct {
	// Retention is how long finished apply jobs and webhook jobs are kept
	// before they are pruned (hourly); at least store.DeliveryRetention.
	Retention time.Duration
}

// OnPostgres says whether the store is a PostgreSQL database.
func (p PostgresStore) OnPostgres() bool { return !p.PostgresURL.Empty() }

type rawStore struct {
	Path            string `yaml:"path"`
	PostgresURLFile string `yaml:"postgres_url_file"`
	PostgresURLEnv  string `yaml:"postgres_url_env"`
	Lease           string `yaml:"lease"`
	Retention       string `yaml:"retention"`
}

// store checks that exactly one store is configured and reads the
// PostgreSQL URL. Problems name the file or variable, never the URL.
func (v *validator) store(r rawStore, c *Config) {
	c.StorePath = r.Path
	c.JobLease = v.duration("store.lease", r.Lease, store.DefaultLease)
	c.Retention = v.duration("store.retention", r.Retention, DefaultRetention)
	if c.Retention < store.DeliveryRetention {
		v.addf("store.retention %q is shorter than %s, the time GitHub may redeliver a webhook: a pruned delivery or merge could run again",
			r.Retention, store.DeliveryRetention)
	}
	set := 0
	for _, s := range []string{r.Path, r.PostgresURLFile, r.PostgresURLEnv} {
		if s != "" {
			set++
		}
	}
	switch {
	case set == 0:
		v.addf("store.path is missing (or store.postgres_url_file / store.postgres_url_env for a PostgreSQL store)")
		return
	case set > 1:
		v.addf("store: set exactly one of path, postgres_url_file and postgres_url_env")
		return
	case r.Path != "":
		if r.Lease != "" {
			v.addf("store.lease applies to a PostgreSQL store only: a bbolt file has one process and no lease")
		}
		return
	}
	if c.WorkDir == "" {
		v.addf("terraform.work_dir is required with a PostgreSQL store: there is no store.path to keep it beside")
	}
	field := "store.postgres_url_file"
	if r.PostgresURLEnv != "" {
		field = "store.postgres_url_env"
	}
	url, err := store.PostgresURL(r.PostgresURLFile, r.PostgresURLEnv, v.lookupEnv)
	if err != nil {
		v.addf("%s: %v", field, err)
		return
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL: none of it is repeated.
		v.addf("%s: the URL does not parse (want postgres://user@host:port/db?sslmode=…)", field)
		return
	}
	c.PostgresURL, c.PostgresPassword = NewSecret(url), NewSecret(pc.ConnConfig.Password)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/bot/server/listener"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/store"
)

// storeCommands are the subcommands of `shardgate store`. This file adds
// "backup"; other store subcommands (migrate) add their entry to this table.
var storeCommands = map[string]command{}

func init() {
	storeCommands["backup"] = command{summary: "write a consistent copy of the embedded store to a file", run: runStoreBackup}
	register("store", command{summary: "manage the store: backup, migrate", run: runStore})
}

func runStore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "store", "a subcommand is required: %s (run 'shardgate store help')", strings.Join(sortedKeys(storeCommands), " or "))
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, "usage: shardgate store <command> [flags]")
		fmt.Fprintln(stderr)
		for _, n := range sortedKeys(storeCommands) {
			fmt.Fprintf(stderr, "  %-10s %s\n", n, storeCommands[n].summary)
		}
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := storeCommands[args[0]]
	if !ok {
		return usageError(stderr, "store", "unknown subcommand %q: want %s", args[0], strings.Join(sortedKeys(storeCommands), " or "))
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func sortedKeys(m map[string]command) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const storeBackupSynopsis = "shardgate store backup (--url ADMIN_URL --token-file FILE | --store PATH) BACKUP_FILE"

// runStoreBackup writes a backup of the store to a new file: from a running
// shardgate through its admin listener (--url), or from the store file of a
// stopped one (--store; a running one holds the file and is refused). The
// copy is written beside BACKUP_FILE, checked (bbolt's consistency check and
// the schema), and only then renamed into place, so BACKUP_FILE is either a
// whole, readable store or absent. Exit 2 for bad usage, 1 when the backup
// fails.
func runStoreBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("store backup", storeBackupSynopsis, stderr)
	adminURL := fs.String("url", "", "the running shardgate's admin listener, e.g. http://127.0.0.1:9091 (admin.listen)")
	tokenFile := fs.String("token-file", "", "file holding the admin bearer token (admin.token_file); with --url")
	storePath := fs.String("store", "", "the store file of a stopped shardgate (store.path)")
	pos, code := parseFlagsAndArgs(fs, args, stderr)
	if code >= 0 {
		return code
	}
	switch {
	case len(pos) != 1:
		return usageError(stderr, "store backup", "give one BACKUP_FILE (usage: %s)", storeBackupSynopsis)
	case (*adminURL == "") == (*storePath == ""):
		return usageError(stderr, "store backup", "give --url (a running shardgate) or --store (a stopped one), not both")
	case *adminURL != "" && *tokenFile == "":
		return usageError(stderr, "store backup", "--url needs --token-file (the file admin.token_file names)")
	case *storePath != "" && *tokenFile != "":
		return usageError(stderr, "store backup", "--token-file goes with --url, not --store")
	}
	dest := pos[0]
	if _, err := os.Lstat(dest); err == nil {
		return usageError(stderr, "store backup", "%s already exists: shardgate does not overwrite a file with a backup", dest)
	}
	var source func(w io.Writer) (int64, error)
	if *adminURL != "" {
		endpoint, token, err := backupRequest(*adminURL, *tokenFile)
		if err != nil {
			return usageError(stderr, "store backup", "%v", err)
		}
		source = func(w io.Writer) (int64, error) { return downloadBackup(ctx, endpoint, token, w) }
	} else {
		source = func(w io.Writer) (int64, error) {
			n, err := store.BackupFile(*storePath, w, store.DefaultLockTimeout)
			if errors.Is(err, store.ErrInUse) {
				return n, fmt.Errorf("%w; a running shardgate holds the store: back it up with --url http://ADMIN_LISTEN --token-file FILE", err)
			}
			return n, err
		}
	}
	info, n, err := writeBackup(dest, source)
	if err != nil {
		fmt.Fprintf(stderr, "shardgate store backup: %v\n", err)
		return exitDenied
	}
	fmt.Fprintf(stdout, "backup written to %s: %d bytes, schema %s, %d jobs (%d queued), %d record buckets\n",
		dest, n, info.Schema, info.Jobs, info.QueuedJobs, info.RecordBuckets)
	return exitOK
}

// parseFlagsAndArgs parses flags before, between and after positional
// arguments and returns the positional ones; the code is as parseFlags'.
func parseFlagsAndArgs(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, int) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseFlags(fs, args, stderr) // prints --help or the one-line error
		}
		if fs.NArg() == 0 {
			takeHelpPrinter(fs)
			return pos, -1
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// backupRequest resolves the backup endpoint of an admin base URL and reads
// the token. The token never appears in an error.
func backupRequest(base, tokenFile string) (string, serverconfig.Secret, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return "", serverconfig.Secret{}, fmt.Errorf("--url %q is not an http(s) URL such as http://127.0.0.1:9091", base)
	}
	if u.User != nil || u.RawQuery != "" {
		return "", serverconfig.Secret{}, errors.New("--url takes no credentials or query: the token comes from --token-file")
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), listener.BackupPath) + listener.BackupPath
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", serverconfig.Secret{}, fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", serverconfig.Secret{}, fmt.Errorf("--token-file: %s is empty", tokenFile)
	}
	return u.String(), serverconfig.NewSecret(token), nil
}

// downloadBackup streams GET /admin/backup into w. The server sends an exact
// Content-Length, so a cut download is an error here, not a short file.
func downloadBackup(ctx context.Context, endpoint string, token serverconfig.Secret, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return 0, fmt.Errorf("build backup request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("request backup: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return 0, errors.New("request backup: the admin token was refused (compare --token-file with the server's admin.token_file)")
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("request backup: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if resp.ContentLength < 0 {
		return 0, errors.New("request backup: the server sent no Content-Length; a cut download could not be told from a whole one")
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("download backup: %w", err)
	}
	if n != resp.ContentLength {
		return n, fmt.Errorf("download backup: got %d of %d bytes", n, resp.ContentLength)
	}
	return n, nil
}

// writeBackup writes source into a temporary file beside dest, syncs and
// verifies it, then renames it to dest.
func writeBackup(dest string, source func(io.Writer) (int64, error)) (store.BackupInfo, int64, error) {
	var info store.BackupInfo
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".partial-*")
	if err != nil {
		return info, 0, fmt.Errorf("create backup file: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes a failed attempt
	n, err := source(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close backup file: %w", cerr)
	}
	if err != nil {
		return info, n, err
	}
	if info, err = store.VerifyBackup(tmp.Name()); err != nil {
		return info, n, fmt.Errorf("the copy is not a whole store, nothing written: %w", err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return info, n, fmt.Errorf("move backup into place: %w", err)
	}
	// The rename is durable once the directory is synced.
	if d, err := os.Open(filepath.Dir(dest)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return info, n, nil
}

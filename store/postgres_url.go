package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// PostgresURL reads the database URL from exactly one of a file (its
// content, surrounding whitespace trimmed) or an environment variable,
// looked up with lookupEnv (os.LookupEnv). The URL is a secret: errors name
// the file or variable, never its value.
func PostgresURL(file, env string, lookupEnv func(string) (string, bool)) (string, error) {
	var url string
	switch {
	case file != "" && env != "":
		return "", errors.New("read postgres url: give a file or an environment variable, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			// The OS error names the path and the cause, nothing of the content.
			return "", fmt.Errorf("read postgres url: %w", err)
		}
		url = strings.TrimSpace(string(b))
		if url == "" {
			return "", fmt.Errorf("read postgres url: %s is empty", file)
		}
	case env != "":
		v, ok := lookupEnv(env)
		if !ok {
			return "", fmt.Errorf("read postgres url: environment variable %s is not set", env)
		}
		url = strings.TrimSpace(v)
		if url == "" {
			return "", fmt.Errorf("read postgres url: environment variable %s is empty", env)
		}
	default:
		return "", errors.New("read postgres url: no file or environment variable given")
	}
	return url, nil
}

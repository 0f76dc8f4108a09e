package fakeclock

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStandingStill(t *testing.T) {
	t0 := Date(2026, 12, 1, 8, 0, 0)
	c := New(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	require.Equal(t, t0, c.Now(), "New stands at the shifted moment Date names")
	require.Equal(t, t0, c.Now(), "it moves only when advanced")
	c.Advance(time.Minute)
	require.Equal(t, t0.Add(time.Minute), c.Now())
	c.Set(t0)
	require.Equal(t, t0, c.Now(), "Set is not shifted again")
}

func TestFollowing(t *testing.T) {
	c := Following()
	before := Shift(time.Now())
	require.False(t, c.Now().Before(before))
	c.Advance(time.Hour)
	require.True(t, c.Now().After(before.Add(59*time.Minute)), "shifted by what was advanced")
	require.True(t, c.Now().Before(Shift(time.Now()).Add(61*time.Minute)))
}

func TestParseShift(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
	}{
		{"", t0},
		{"  ", t0},
		{"+3y", time.Date(2029, 12, 4, 13, 30, 0, 0, time.UTC)},
		{"3y", time.Date(2029, 12, 4, 13, 30, 0, 0, time.UTC)},
		{"-3y", time.Date(2023, 12, 4, 13, 30, 0, 0, time.UTC)},
		{"-26280h", t0.Add(-26280 * time.Hour)},
		{"90m", t0.Add(90 * time.Minute)},
	} {
		s, err := parseShift(tt.in)
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, s.apply(t0), tt.in)
	}
	for _, bad := range []string{"3", "+3 y", "y", "three years", "3d", "1.5y"} {
		_, err := parseShift(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), EnvShift, "the error names the variable")
	}
}

// The environment variable is read once per process, so these tests run the
// test binary again with it set.

const helperEnv = "FAKECLOCK_TEST_HELPER"

// TestHelperShifted is not a test of its own: run by the tests below in a
// child process, it prints what the clocks read there.
func TestHelperShifted(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper of TestEnvShiftMovesEveryClock and TestEnvShiftRefusesBadValues")
	}
	before := time.Now()
	f := Following().Now()
	w := Wall().Now()
	fmt.Printf("wall=%s\n", w.Sub(before).Round(24*time.Hour))
	fmt.Printf("new=%s date=%s following=%s\n",
		New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC)).Now().Format(time.RFC3339),
		Date(2026, 12, 4, 14, 5, 0).Format(time.RFC3339),
		f.Sub(before).Round(24*time.Hour))
}

func runHelper(t *testing.T, shift string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperShifted$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1", EnvShift+"="+shift)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestEnvShiftMovesEveryClock(t *testing.T) {
	out, err := runHelper(t, "-3y")
	require.NoError(t, err, out)
	now := time.Now()
	following := now.AddDate(-3, 0, 0).Sub(now).Round(24 * time.Hour) // three calendar years back from today
	require.Contains(t, out, "new=2023-12-04T13:30:00Z date=2023-12-04T14:05:00Z following="+following.String())
	require.Contains(t, out, "wall=0s", "a Wall clock is never shifted")
	out, err = runHelper(t, "+26280h")
	require.NoError(t, err, out)
	require.Contains(t, out, "new=2029-12-03T13:30:00Z date=2029-12-03T14:05:00Z following=26280h0m0s")
	out, err = runHelper(t, "")
	require.NoError(t, err, out)
	require.Contains(t, out, "new=2026-12-04T13:30:00Z date=2026-12-04T14:05:00Z following=0s")
}

func TestEnvShiftRefusesBadValues(t *testing.T) {
	out, err := runHelper(t, "three years")
	require.Error(t, err, "a shift that cannot be read must not run the tests unshifted")
	require.True(t, strings.Contains(out, "panic: fakeclock: "+EnvShift+`="three years"`), out)
}

package file_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
)

// The child process of TestCrossProcessCreate reads its orders from these variables.
const (
	envRaceDir   = "WHARF_FILE_RACE_DIR"   // the store's root
	envRaceID    = "WHARF_FILE_RACE_ID"    // this racer's name, written as the body
	envRaceStart = "WHARF_FILE_RACE_START" // unix nanoseconds at which to start, together
)

const raceKeys = 100

// TestCrossProcessCreate re-executes the test binary as several processes that race
// create-if-absent on the same keys at the same moment: exactly one process wins each key,
// and the key holds the winner's body.
func TestCrossProcessCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s, dir := newStore(t)
	const racers = 8
	start := time.Now().Add(500 * time.Millisecond).UnixNano()
	outs := make([]strings.Builder, racers)
	cmds := make([]*exec.Cmd, racers)
	for i := range racers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrossProcessChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envRaceDir+"="+dir, envRaceID+"="+fmt.Sprint("racer", i), envRaceStart+"="+fmt.Sprint(start))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	wins := map[string][]string{} // key → winners
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("racer %d: %v\n%s", i, err, outs[i].String())
		}
		for line := range strings.Lines(outs[i].String()) {
			if key, ok := strings.CutPrefix(strings.TrimSpace(line), "WON "); ok {
				wins[key] = append(wins[key], fmt.Sprint("racer", i))
			}
		}
	}
	for k := range raceKeys {
		key := fmt.Sprint("race/", k)
		if len(wins[key]) != 1 {
			t.Errorf("%s: winners %v, want exactly one", key, wins[key])
			continue
		}
		if got := read(t, s, key, nil); got != wins[key][0] {
			t.Errorf("%s holds %q, but %s won", key, got, wins[key][0])
		}
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCrossProcessChild is one racer of TestCrossProcessCreate; run alone it does nothing.
func TestCrossProcessChild(t *testing.T) {
	dir := os.Getenv(envRaceDir)
	if dir == "" {
		t.Skip("a child of TestCrossProcessCreate")
	}
	id := os.Getenv(envRaceID)
	startNs, _ := strconv.ParseInt(os.Getenv(envRaceStart), 10, 64)
	s, err := file.New(filepath.Clean(dir))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(0, startNs)))
	for k := range raceKeys {
		key := fmt.Sprint("race/", k)
		_, err := s.Put(ctx, key, strings.NewReader(id), &driver.PutOptions{IfNoneMatch: true})
		switch {
		case err == nil:
			fmt.Printf("WON %s\n", key)
		case !errors.Is(err, driver.ErrPreconditionFailed):
			t.Fatalf("%s: %v", key, err)
		}
	}
}

package testenv

import "testing"

// A private cluster starts, survives the kill and restart of a node, and leaves no process
// behind.
func TestPrivateNATSLeavesNoProcessBehind(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := PrivateNATS(t)
		if len(c.URLs) != 3 {
			t.Fatalf("urls %v", c.URLs)
		}
		c.KillNode(t, 1)() // killed, and started again
		for i := range 3 {
			pids = append(pids, readPID(t, c.node(i)))
		}
		for _, pid := range pids {
			if !alive(pid) {
				t.Errorf("node pid %d is not running", pid)
			}
		}
	})
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("node pid %d outlived its test", pid)
		}
	}
}

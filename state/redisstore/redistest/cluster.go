package redistest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of servers started by a test on loopback,
// every slot assigned, no replicas.
type Cluster struct {
	Servers []*Server
}

// StartCluster starts n (at least 3) cluster-enabled servers, joins them
// with redis-cli --cluster create and waits until the cluster is ok.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{}
	var addrs []string
	for range n {
		s := startServer(t, true, []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "5000"})
		c.Servers = append(c.Servers, s)
		addrs = append(addrs, s.Addr())
	}
	cli, err := cliPath(c.Servers[0].bin)
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, a := range addrs {
		for {
			info, err := Command(a, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster not ok within 20s at %s: %v %s", a, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// URL names every node: redis://first?addr=second&addr=third...
func (c *Cluster) URL() string {
	u := "redis://" + c.Servers[0].Addr()
	for i, s := range c.Servers[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += fmt.Sprintf("%saddr=%s", sep, s.Addr())
	}
	return u
}

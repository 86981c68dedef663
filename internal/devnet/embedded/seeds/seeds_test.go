package seeds

import "testing"

// TestFlowBucket: a peer's bucket is the seed's (the same on every call),
// each link draws its own, and 70 connections land in about as many
// distinct buckets of 128 as a uniform hash gives (54 expected).
func TestFlowBucket(t *testing.T) {
	const buckets, peers = 128, 70
	differ := false
	distinct := 0
	for node := range 100 {
		seen := map[int]bool{}
		for peer := range peers {
			up := FlowBucket(7, node, true, peer, buckets)
			if up < 0 || up >= buckets {
				t.Fatalf("node %d peer %d: bucket %d outside [0, %d)", node, peer, up, buckets)
			}
			if again := FlowBucket(7, node, true, peer, buckets); again != up {
				t.Fatalf("node %d peer %d: bucket %d, then %d", node, peer, up, again)
			}
			if FlowBucket(7, node, false, peer, buckets) != up || FlowBucket(8, node, true, peer, buckets) != up ||
				FlowBucket(7, node+1, true, peer, buckets) != up {
				differ = true
			}
			seen[up] = true
		}
		distinct += len(seen)
	}
	if !differ {
		t.Error("the downlink, another seed and another node drew the same buckets")
	}
	if mean := float64(distinct) / 100; mean < 51 || mean > 57 {
		t.Errorf("%d connections took %.1f distinct buckets of %d on average, want about 54", peers, mean, buckets)
	}
}

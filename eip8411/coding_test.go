package eip8411_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// TestCodedGroupRebuildsFromAnyK: for several seeds, both orders and several
// parity counts, a coded group rebuilds the body from any k of its k+m
// shards — random subsets, the data shards alone and the last k (parity
// first) — fed in random order with duplicates interleaved; completion is
// reported exactly at the k-th distinct shard, and k−1 shards are not enough.
func TestCodedGroupRebuildsFromAnyK(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		for _, order := range orders {
			rng := newRand(seed)
			size := 50_000 + rng.IntN(350_000)
			body := mustBody(t, seed, size)
			k := (size + 8191) / 8192 // cut-then-compress; compress-then-cut has fewer
			for _, m := range []int{0, 1, 3} {
				name := fmt.Sprintf("seed%d/%v/%dB/m=%d", seed, order, size, m)
				opts := []eip8411.Option{eip8411.WithOrder(order), eip8411.WithCoding(eip8411.CodingReedSolomon), eip8411.WithSegmentSize(8192)}
				if m > 0 {
					opts = append(opts, eip8411.WithParityShards(min(m, k)))
				}
				t.Run(name, func(t *testing.T) {
					g, err := eip8411.NewGroupV2(body, opts...)
					if err != nil {
						t.Fatal(err)
					}
					checkAnyK(t, body, g, rng.Uint64())
				})
			}
		}
	}
}

func checkAnyK(t *testing.T, body *eip8411.Body, g *eip8411.GroupV2, seed uint64) {
	t.Helper()
	d := g.Descriptor()
	shards := g.Shards(testSlot, testRoot)
	k, n := int(d.DataShards), len(shards)
	rng := newRand(seed)
	subsets := [][]int{seq(0, k), seq(n-k, n)} // data only; the last k (all parity when m == k)
	for range 12 {
		subsets = append(subsets, rng.Perm(n)[:k])
	}
	for _, subset := range subsets {
		r, err := eip8411.NewReassemblerV2(d)
		if err != nil {
			t.Fatal(err)
		}
		held := map[int]bool{}
		for _, i := range subset {
			for _, j := range []int{i, subset[rng.IntN(len(subset))]} { // a fresh one, then maybe a duplicate
				complete, dup, err := r.Add(shards[j])
				if err != nil || dup != held[j] {
					t.Fatalf("subset %v: Add(%d) = dup %v, %v (held %v)", subset, j, dup, err, held[j])
				}
				held[j] = true
				if complete != (len(held) >= k) {
					t.Fatalf("subset %v: complete %v with %d of k = %d", subset, complete, len(held), k)
				}
				if len(held) == k-1 {
					if _, err := r.Body(); !errors.Is(err, eip8411.ErrIncomplete) {
						t.Fatalf("subset %v: Body() with k-1 shards = %v, want ErrIncomplete", subset, err)
					}
				}
			}
		}
		got, err := r.Body()
		if err != nil || !bytes.Equal(got.Payload, body.Payload) {
			t.Fatalf("subset %v of %d+%d: Body() = %v", subset, k, n-k, err)
		}
	}
}

// seq returns [from, to).
func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestReedSolomonMatchesSpec checks the library's parity against an
// independent implementation of the code README.md specifies: GF(2^8) with
// x^8+x^4+x^3+x^2+1, the (k+m)×k Vandermonde matrix V[r][c] = r^c times the
// inverse of its top k×k square; parity shard j = row k+j times the data
// shards, bytewise. A library upgrade that changed the code would fail here.
func TestReedSolomonMatchesSpec(t *testing.T) {
	tests := []struct {
		name string
		size int
		seg  int
		m    int
	}{
		{name: "4+3", size: 4*1024 - 200, seg: 1024, m: 3},
		{name: "1+1", size: 500, seg: 1024, m: 1},
		{name: "32+32", size: 1 << 20, seg: 32 << 10, m: 32},
		{name: "100+100", size: 100 * 1024, seg: 1024, m: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := newRand(uint64(tt.size))
			body := &eip8411.Body{Payload: randomBytes(rng, tt.size-8), ExecutionRequests: []byte{}}
			g, err := eip8411.NewGroupV2(body, eip8411.WithCoding(eip8411.CodingReedSolomon), eip8411.WithSegmentSize(tt.seg), eip8411.WithParityShards(tt.m))
			if err != nil {
				t.Fatal(err)
			}
			shards := g.Shards(testSlot, testRoot)
			k := int(g.Descriptor().DataShards)
			if k+tt.m != len(shards) {
				t.Fatalf("%d shards, want %d+%d", len(shards), k, tt.m)
			}
			gen := systematicMatrix(k, tt.m)
			for j := range tt.m {
				want := make([]byte, len(shards[0].Data))
				for c := range k {
					for b, x := range shards[c].Data {
						want[b] ^= gfMul(gen[k+j][c], x)
					}
				}
				if !bytes.Equal(shards[k+j].Data, want) {
					t.Fatalf("parity shard %d differs from the specified code", j)
				}
			}
		})
	}
}

// gfExp and gfLog are GF(2^8) tables for the polynomial 0x11d, generator 2.
var gfExp, gfLog = func() (exp [510]byte, log [256]byte) {
	x := 1
	for i := range 255 {
		exp[i], log[x] = byte(x), byte(i)
		if x <<= 1; x&0x100 != 0 {
			x ^= 0x11d
		}
	}
	copy(exp[255:], exp[:255])
	return exp, log
}()

func gfMul(a, b byte) byte {
	if a == 0 || b == 0 {
		return 0
	}
	return gfExp[int(gfLog[a])+int(gfLog[b])]
}

func gfPow(a byte, n int) byte {
	if n == 0 {
		return 1
	}
	if a == 0 {
		return 0
	}
	return gfExp[int(gfLog[a])*n%255]
}

// systematicMatrix returns V·inv(V[:k]) for the (k+m)×k Vandermonde matrix V.
func systematicMatrix(k, m int) [][]byte {
	v := make([][]byte, k+m)
	for r := range v {
		v[r] = make([]byte, k)
		for c := range k {
			v[r][c] = gfPow(byte(r), c)
		}
	}
	// Gauss–Jordan on [top | I].
	aug := make([][]byte, k)
	for r := range aug {
		aug[r] = append(append([]byte(nil), v[r]...), make([]byte, k)...)
		aug[r][k+r] = 1
	}
	for col := range k {
		p := col
		for aug[p][col] == 0 {
			p++
		}
		aug[col], aug[p] = aug[p], aug[col]
		inv := gfExp[255-int(gfLog[aug[col][col]])]
		for c := range aug[col] {
			aug[col][c] = gfMul(aug[col][c], inv)
		}
		for r := range k {
			if f := aug[r][col]; r != col && f != 0 {
				for c := range aug[r] {
					aug[r][c] ^= gfMul(f, aug[col][c])
				}
			}
		}
	}
	out := make([][]byte, k+m)
	for r := range out {
		out[r] = make([]byte, k)
		for c := range k {
			for j := range k {
				out[r][c] ^= gfMul(v[r][j], aug[j][k+c])
			}
		}
	}
	return out
}

// TestCodedGroupsConcurrent builds and rebuilds groups of one shape from
// several goroutines: the cached Reed–Solomon encoder is shared. Run with -race.
func TestCodedGroupsConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for w := range 4 {
		body := mustBody(t, uint64(w), 60_000)
		wg.Go(func() {
			g, err := eip8411.NewGroupV2(body, eip8411.WithSegmentSize(4096), eip8411.WithCoding(eip8411.CodingReedSolomon))
			if err != nil {
				t.Error(err)
				return
			}
			k := int(g.Descriptor().DataShards)
			r, _ := eip8411.NewReassemblerV2(g.Descriptor())
			for _, s := range g.Shards(testSlot, testRoot)[k:] { // parity only: full reconstruction
				if _, _, err := r.Add(s); err != nil {
					t.Error(err)
					return
				}
			}
			if got, err := r.Body(); err != nil || !bytes.Equal(got.Payload, body.Payload) {
				t.Errorf("worker %d: Body() = %v", w, err)
			}
		})
	}
	wg.Wait()
}

package eip8411_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	dynssz "github.com/pk910/dynamic-ssz"

	"github.com/segdiff/segdiff/eip8411"
)

var (
	testSlot = uint64(1234567)
	testRoot = [32]byte{0xb1, 0x0c, 0x4b, 0x00, 0x7e}
)

// newRand returns a deterministic RNG for seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5e6d1ff)) }

// mustBody returns a synthetic body of rawSize SSZ bytes.
func mustBody(t testing.TB, seed uint64, rawSize int) *eip8411.Body {
	t.Helper()
	b, err := eip8411.SyntheticBody(newRand(seed), rawSize)
	if err != nil {
		t.Fatalf("SyntheticBody(%d): %v", rawSize, err)
	}
	return b
}

// mustGroup builds a group of a synthetic body.
func mustGroup(t testing.TB, seed uint64, rawSize int, opts ...eip8411.Option) (*eip8411.Body, *eip8411.Group) {
	t.Helper()
	body := mustBody(t, seed, rawSize)
	g, err := eip8411.NewGroup(body, opts...)
	if err != nil {
		t.Fatalf("NewGroup(%d bytes): %v", rawSize, err)
	}
	return body, g
}

// randomBytes returns n uniformly random (incompressible) bytes.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// mustGroupV2 builds a segdiff/2 group of a synthetic body.
func mustGroupV2(t testing.TB, seed uint64, rawSize int, opts ...eip8411.Option) (*eip8411.Body, *eip8411.GroupV2) {
	t.Helper()
	body := mustBody(t, seed, rawSize)
	g, err := eip8411.NewGroupV2(body, opts...)
	if err != nil {
		t.Fatalf("NewGroupV2(%d bytes): %v", rawSize, err)
	}
	return body, g
}

// orders and codings enumerate the segdiff/2 options for table tests.
var (
	orders  = []eip8411.Order{eip8411.OrderCompressThenCut, eip8411.OrderCutThenCompress}
	codings = []eip8411.Coding{eip8411.CodingNone, eip8411.CodingReedSolomon}
)

// cloneShard deep-copies a shard so tests can mutate it.
func cloneShard(s *eip8411.Shard) *eip8411.Shard {
	c := *s
	c.Proof = append([][32]byte(nil), s.Proof...)
	c.Data = append([]byte(nil), s.Data...)
	return &c
}

// checkFieldErrs fails t unless every err is nil (wantErr nil) or wraps
// wantErr in a *FieldError on wantField.
func checkFieldErrs(t *testing.T, wantErr error, wantField string, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if wantErr == nil {
			if err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			continue
		}
		var fe *eip8411.FieldError
		if !errors.Is(err, wantErr) || !errors.As(err, &fe) || fe.Field != wantField {
			t.Fatalf("err = %#v, want %v in a *FieldError on field %q", err, wantErr, wantField)
		}
	}
}

// addStep is one Add call of a reassembler script and its expected outcome.
type addStep struct {
	index        int
	wantComplete bool
	wantDup      bool
}

// runAddSteps calls add(step.index) for every step, calling before(n) first,
// and checks each outcome.
func runAddSteps(t *testing.T, add func(index int) (complete, dup bool, err error), steps []addStep, before func(n int)) {
	t.Helper()
	for n, st := range steps {
		before(n)
		complete, dup, err := add(st.index)
		if err != nil || complete != st.wantComplete || dup != st.wantDup {
			t.Fatalf("step %d Add(%d) = (%v, %v, %v), want (%v, %v, nil)", n, st.index, complete, dup, err, st.wantComplete, st.wantDup)
		}
	}
}

// buildErr returns the error of building a group with fromSSZ(ssz) when ssz
// is set, else with fromBody(body).
func buildErr[G any](body *eip8411.Body, ssz []byte, opts []eip8411.Option, fromBody func(*eip8411.Body, ...eip8411.Option) (G, error), fromSSZ func([]byte, ...eip8411.Option) (G, error)) error {
	var err error
	if ssz != nil {
		_, err = fromSSZ(ssz, opts...)
	} else {
		_, err = fromBody(body, opts...)
	}
	return err
}

// patched returns a copy of b with v written at off.
func patched(b []byte, off int, v ...byte) []byte {
	out := append([]byte(nil), b...)
	copy(out[off:], v)
	return out
}

// descriptor is what both descriptor versions offer the shared checks.
type descriptor interface {
	comparable
	Validate() error
	Encode() []byte
	GroupID() [32]byte
}

// checkDescriptor checks d.Validate against the expected verdict, then that
// decode(d.Encode()) and newReassembler(d) agree: a valid d round-trips and
// is accepted, an invalid one fails both with wantErr.
func checkDescriptor[D descriptor, R any](t *testing.T, d D, decode func([]byte) (D, error), newReassembler func(D) (R, error), wantErr error, wantField string) {
	t.Helper()
	checkFieldErrs(t, wantErr, wantField, d.Validate())
	got, decErr := decode(d.Encode())
	_, newErr := newReassembler(d)
	if wantErr == nil {
		if decErr != nil || got != d || newErr != nil {
			t.Fatalf("decode(Encode()) = %+v, %v; new reassembler: %v", got, decErr, newErr)
		}
		return
	}
	if !errors.Is(decErr, wantErr) || !errors.Is(newErr, wantErr) {
		t.Fatalf("decode = %v, new reassembler = %v, want %v", decErr, newErr, wantErr)
	}
}

// checkGroupIDsDiffer applies each mutation to base and fails t when two of
// the resulting descriptors (or one and an entry of seen) share a group id.
func checkGroupIDsDiffer[D descriptor](t *testing.T, base D, seen map[[32]byte]string, mutations map[string]func(*D)) {
	t.Helper()
	seen[base.GroupID()] = "base"
	for name, f := range mutations {
		d := base
		f(&d)
		id := d.GroupID()
		if prev, ok := seen[id]; ok {
			t.Errorf("mutating %s gives the group id of %s", name, prev)
		}
		seen[id] = name
	}
}

// checkSSZ fails t unless got is the dynamic-ssz encoding of mirror and size
// bytes long.
func checkSSZ(t *testing.T, got []byte, mirror any, size int) {
	t.Helper()
	want, err := dynssz.NewDynSsz(nil).MarshalSSZ(mirror)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || len(got) != size {
		t.Fatalf("Encode() = %x, want SSZ %x (%d bytes)", got, want, size)
	}
}

// mustEncode returns m's encoding or fails t.
func mustEncode[M interface{ Encode() ([]byte, error) }](t testing.TB, m M) []byte {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package elimport_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/internal/elimport"
	"github.com/segdiff/segdiff/internal/load"
	"github.com/segdiff/segdiff/internal/load/loadtest"
)

// TestCheckAgainstSimulatedChain: a block the simulated chain sealed is
// found; a hash it never had is reported missing once its deadline passed.
func TestCheckAgainstSimulatedChain(t *testing.T) {
	accts, err := load.DeriveAccounts(load.DefaultMnemonic, load.DefaultFirstAccount, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := loadtest.NewBackend(t, accts)
	sealed := b.Commit()
	past := time.Now().Add(-time.Second)
	samples, err := elimport.Check(context.Background(), []elimport.EL{{Node: "el-1", Link: "home", Client: b.Client()}},
		[]elimport.Payload{{Slot: 4, Hash: sealed, Deadline: past}, {Slot: 5, Hash: common.Hash{5}, Deadline: past}}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 || samples[0].Value != 1 || samples[1].Value != 0 || samples[1].Slot != 5 || samples[1].Node != "el-1" {
		t.Fatalf("samples = %+v, want slot 4 found and slot 5 missing on el-1", samples)
	}
}

// lateEL finds every block only after a number of queries.
type lateEL struct{ misses int }

func (l *lateEL) HeaderByHash(context.Context, common.Hash) (*types.Header, error) {
	if l.misses > 0 {
		l.misses--
		return nil, ethereum.NotFound
	}
	return &types.Header{}, nil
}

// brokenEL never answers.
type brokenEL struct{}

func (brokenEL) HeaderByHash(context.Context, common.Hash) (*types.Header, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

func TestCheckPollsUntilTheDeadline(t *testing.T) {
	future := time.Now().Add(time.Minute)
	samples, err := elimport.Check(context.Background(), []elimport.EL{{Node: "el-2", Client: &lateEL{misses: 3}}},
		[]elimport.Payload{{Slot: 9, Hash: common.Hash{9}, Deadline: future}}, time.Millisecond)
	if err != nil || len(samples) != 1 || samples[0].Value != 1 {
		t.Fatalf("samples %+v, err %v; want the late block found", samples, err)
	}
	_, err = elimport.Check(context.Background(), []elimport.EL{{Node: "el-3", Client: brokenEL{}}},
		[]elimport.Payload{{Slot: 9, Hash: common.Hash{9}, Deadline: time.Now().Add(5 * time.Millisecond)}}, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "node el-3") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("error = %v, want one naming el-3 and its failure", err)
	}
	if _, err := elimport.Check(context.Background(), nil, nil, time.Millisecond); err == nil {
		t.Fatal("no ELs: want an error")
	}
}

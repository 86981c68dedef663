package steps

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/poll"
)

// TestCheckELsClosesItsClients: the EL check closes every client it dialled.
// Over WebSocket an unclosed client keeps its connection (and a goroutine)
// for the rest of the run; the server sees each connection close.
func TestCheckELsClosesItsClients(t *testing.T) {
	url, open := serveWebSocketEL(t)
	o := &observation{
		d:     &execDevnet{urls: map[string]string{"n1": url, "n2": url}},
		nodes: []devnet.Node{{ID: "n1"}, {ID: "n2"}, {ID: "n3"}}, // n3 has no EL
		slots: []uint64{5},
	}
	samples, err := checkELs(context.Background(), o, 0.01, time.Millisecond)
	if err != nil {
		t.Fatalf("checkELs: %v", err)
	}
	if len(samples) != 2 || samples[0].Value != 0 || samples[1].Value != 0 {
		t.Errorf("samples %+v, want block of slot 5 missing on n1 and n2", samples)
	}
	err = poll.Until(context.Background(), time.Now().Add(5*time.Second), 10*time.Millisecond, func(context.Context) error {
		if n := open.Load(); n != 0 {
			return errors.New("EL connections still open")
		}
		return nil
	})
	if err != nil {
		t.Errorf("%d of the check's EL connections still open after it returned: %v", open.Load(), err)
	}
}

// serveWebSocketEL serves go-ethereum's JSON-RPC over WebSocket, knowing
// no block, and counts the connections open on it.
func serveWebSocketEL(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName("eth", noBlocks{}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.WebsocketHandler([]string{"*"}))
	l := &countingListener{Listener: ts.Listener}
	ts.Listener = l
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		srv.Stop()
	})
	return "ws" + ts.URL[len("http"):], &l.open
}

// noBlocks answers eth_getBlockByHash with null: no such block.
type noBlocks struct{}

func (noBlocks) GetBlockByHash(common.Hash, bool) (map[string]any, error) { return nil, nil }

type countingListener struct {
	net.Listener
	open atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countedConn{Conn: c, open: &l.open}, nil
}

type countedConn struct {
	net.Conn
	closed atomic.Bool
	open   *atomic.Int32
}

func (c *countedConn) Close() error {
	if !c.closed.Swap(true) {
		c.open.Add(-1)
	}
	return c.Conn.Close()
}

// execDevnet is a devnet with execution clients at urls; every slot's bid
// commits to the same block hash.
type execDevnet struct{ urls map[string]string }

func (d *execDevnet) Backend() string                                      { return "exec-test" }
func (d *execDevnet) Nodes(context.Context) ([]devnet.Node, error)         { return nil, nil }
func (d *execDevnet) Timing(context.Context) (devnet.Timing, error)        { return devnet.Timing{}, nil }
func (d *execDevnet) PrometheusURL() string                                { return "" }
func (d *execDevnet) Close() error                                         { return nil }
func (d *execDevnet) ELRPCURLs(context.Context) (map[string]string, error) { return d.urls, nil }
func (d *execDevnet) PTC(context.Context, uint64) (devnet.PTCVotes, error) {
	return devnet.PTCVotes{}, devnet.ErrNoVotes
}
func (d *execDevnet) BidBlockHash(context.Context, uint64) ([32]byte, error) {
	return common.HexToHash("0x01"), nil
}

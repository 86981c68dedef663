package beacon_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/beacon"
)

func TestSSEDecoder(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []beacon.SSEEvent
		retry int
	}{
		{name: "beacon node event", in: "event: block\ndata: {\"slot\":\"4\"}\n\n",
			want: []beacon.SSEEvent{{Name: "block", Data: []byte(`{"slot":"4"}`)}}},
		{name: "CRLF and CR line ends", in: "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
			want: []beacon.SSEEvent{{Name: "a", Data: []byte("1")}, {Name: "b", Data: []byte("2")}}},
		{name: "comments and keep-alives are skipped", in: ":\n\n: ping\nevent: a\ndata: x\n\n",
			want: []beacon.SSEEvent{{Name: "a", Data: []byte("x")}}},
		{name: "data lines joined, one leading space stripped", in: "data:a\ndata:  b\n\n",
			want: []beacon.SSEEvent{{Name: "message", Data: []byte("a\n b")}}},
		{name: "an event without data is not dispatched", in: "event: a\n\ndata: y\n\n",
			want: []beacon.SSEEvent{{Name: "message", Data: []byte("y")}}},
		{name: "ids persist, retry read", in: "id: 7\nretry: 1500\ndata: x\n\ndata: y\n\n",
			want: []beacon.SSEEvent{{Name: "message", Data: []byte("x"), ID: "7"}, {Name: "message", Data: []byte("y"), ID: "7"}}, retry: 1500},
		{name: "byte-order mark at the start", in: "\xEF\xBB\xBFevent: a\ndata: x\n\n",
			want: []beacon.SSEEvent{{Name: "a", Data: []byte("x")}}},
		{name: "an unfinished event at the end is dropped", in: "event: a\ndata: x\n\nevent: b\ndata: y\n",
			want: []beacon.SSEEvent{{Name: "a", Data: []byte("x")}}},
		{name: "a field without a colon and unknown fields", in: "data\nfoo: bar\n\n",
			want: []beacon.SSEEvent{{Name: "message", Data: []byte("")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := beacon.NewSSEDecoder(strings.NewReader(tt.in))
			var got []beacon.SSEEvent
			for {
				ev, err := d.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %q, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if got[i].Name != tt.want[i].Name || string(got[i].Data) != string(tt.want[i].Data) || got[i].ID != tt.want[i].ID {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			if d.Retry != tt.retry {
				t.Errorf("retry %d, want %d", d.Retry, tt.retry)
			}
		})
	}
}

func TestSSEDecoderLineBound(t *testing.T) {
	d := beacon.NewSSEDecoder(strings.NewReader("data: " + strings.Repeat("x", beacon.DefaultMaxSSELine) + "\n\n"))
	_, err := d.Next()
	if !errors.Is(err, beacon.ErrSSELineTooLong) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("error %v, want a too-long line 1", err)
	}
}

// The decoder never panics, every event it returns has a name, and the
// stream ends in io.EOF or a bounded-line error.
func FuzzSSEDecoder(f *testing.F) {
	f.Add([]byte("event: block\ndata: {\"slot\":\"4\"}\n\n"))
	f.Add([]byte("\xEF\xBB\xBF:\r\nid: 1\rdata: a\r\ndata\n\n"))
	f.Add([]byte("retry: 12x\nevent:\ndata: \n\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := beacon.NewSSEDecoder(strings.NewReader(string(in)))
		for i := 0; ; i++ {
			ev, err := d.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, beacon.ErrSSELineTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if ev.Name == "" {
				t.Fatalf("event %d without a name: %+v", i, ev)
			}
			if i > len(in) {
				t.Fatalf("more events (%d) than input bytes (%d)", i, len(in))
			}
		}
	})
}

func TestDecodeSlotEvent(t *testing.T) {
	tests := []struct {
		topic, data string
		want        uint64
		wantErr     string
	}{
		{topic: "execution_payload_available", data: `{"slot":"9","block_root":"0x` + strings.Repeat("ab", 32) + `"}`, want: 9},
		{topic: "execution_payload_gossip", data: `{"slot":"10","builder_index":"1","block_hash":"0x` + strings.Repeat("cd", 32) + `","block_root":"0x` + strings.Repeat("ab", 32) + `"}`, want: 10},
		{topic: "block_gossip", data: `{"slot":"11","block":"0x` + strings.Repeat("ab", 32) + `"}`, want: 11},
		{topic: "block", data: `{"slot":"12","block":"0x` + strings.Repeat("ab", 32) + `","execution_optimistic":false}`, want: 12},
		{topic: "execution_payload_available", data: `{"slot":"x","block_root":"0x00"}`, wantErr: "decode execution_payload_available event: "},
		{topic: "head", data: `{}`, wantErr: `decode "head" event: not a watched topic`},
	}
	for _, tt := range tests {
		t.Run(tt.topic+tt.data, func(t *testing.T) {
			got, err := beacon.DecodeSlotEvent(tt.topic, []byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("slot %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func FuzzDecodeSlotEvent(f *testing.F) {
	f.Add("execution_payload_available", []byte(`{"slot":"9","block_root":"0x00"}`))
	f.Add("block", []byte(`{"slot":"12","block":"0x"}`))
	f.Fuzz(func(t *testing.T, topic string, data []byte) {
		if _, err := beacon.DecodeSlotEvent(topic, data); err != nil && !strings.HasPrefix(err.Error(), "decode ") {
			t.Fatalf("error without context: %v", err)
		}
	})
}

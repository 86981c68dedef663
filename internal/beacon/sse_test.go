package beacon_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/beacon"
)

func TestSSEDecoderLineBound(t *testing.T) {
	d := beacon.NewSSEDecoder(strings.NewReader("data: " + strings.Repeat("x", beacon.DefaultMaxSSELine) + "\n\n"))
	_, err := d.Next()
	if !errors.Is(err, beacon.ErrSSELineTooLong) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("error %v, want a too-long line 1", err)
	}
}

func TestSSEDecoder(t *testing.T) {
	// Each wanted event reads "name data", with " #id" when it has one.
	tests := []struct {
		name, in string
		want     []string
		retry    int
	}{
		{"beacon node event", "event: block\ndata: {\"slot\":\"4\"}\n\n", []string{`block {"slot":"4"}`}, 0},
		{"CRLF and CR line ends", "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r", []string{"a 1", "b 2"}, 0},
		{"comments and keep-alives are skipped", ":\n\n: ping\nevent: a\ndata: x\n\n", []string{"a x"}, 0},
		{"data lines joined, one leading space stripped", "data:a\ndata:  b\n\n", []string{"message a\n b"}, 0},
		{"an event without data is not dispatched", "event: a\n\ndata: y\n\n", []string{"message y"}, 0},
		{"ids persist, retry read", "id: 7\nretry: 1500\ndata: x\n\ndata: y\n\n", []string{"message x #7", "message y #7"}, 1500},
		{"byte-order mark at the start", "\xEF\xBB\xBFevent: a\ndata: x\n\n", []string{"a x"}, 0},
		{"an unfinished event at the end is dropped", "event: a\ndata: x\n\nevent: b\ndata: y\n", []string{"a x"}, 0},
		{"a field without a colon and unknown fields", "data\nfoo: bar\n\n", []string{"message "}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := beacon.NewSSEDecoder(strings.NewReader(tt.in))
			var got []string
			for {
				ev, err := d.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				e := ev.Name + " " + string(ev.Data)
				if ev.ID != "" {
					e += " #" + ev.ID
				}
				got = append(got, e)
			}
			if !slices.Equal(got, tt.want) || d.Retry != tt.retry {
				t.Errorf("events %q, retry %d; want %q, retry %d", got, d.Retry, tt.want, tt.retry)
			}
		})
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
		got, err := beacon.DecodeSlotEvent(tt.topic, []byte(tt.data))
		if got != tt.want || (err == nil) != (tt.wantErr == "") || !strings.HasPrefix(fmt.Sprint(err), tt.wantErr) {
			t.Errorf("%s %s: slot %d, error %v; want %d, error %q...", tt.topic, tt.data, got, err, tt.want, tt.wantErr)
		}
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

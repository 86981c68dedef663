package beacon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// SSEEvent is one dispatched server-sent event (the WHATWG "event stream"
// format the beacon API's /eth/v1/events speaks).
type SSEEvent struct {
	// Name is the event type ("message" when the stream named none); the
	// beacon API names the topic here.
	Name string
	// Data is the data lines joined with "\n".
	Data []byte
	// ID is the last event id the stream set ("" for none).
	ID string
}

// DefaultMaxSSELine bounds one line of an event stream.
const DefaultMaxSSELine = 1 << 20

// ErrSSELineTooLong is returned when a line exceeds the decoder's bound.
var ErrSSELineTooLong = errors.New("event stream line too long")

// SSEDecoder reads events from an event stream. Lines end in LF, CR or
// CRLF; a line starting with ":" is a comment (beacon nodes send them as
// keep-alives); a blank line dispatches the event gathered so far, unless
// it has no data. An event the stream ends in the middle of is dropped, as
// the format says. The zero value is not usable; it is not safe for
// concurrent use.
type SSEDecoder struct {
	r       *bufio.Reader
	max     int
	skipLF  bool // the last line ended in CR: a following LF belongs to it
	started bool // the byte-order mark is only skipped at the start
	lastID  string
	line    int
	// Retry is the reconnection time, in milliseconds, the stream last
	// asked for (0 when it asked for none).
	Retry int
}

// NewSSEDecoder returns a decoder reading r, with lines bounded by
// DefaultMaxSSELine.
func NewSSEDecoder(r io.Reader) *SSEDecoder {
	return &SSEDecoder{r: bufio.NewReader(r), max: DefaultMaxSSELine}
}

// Next returns the next dispatched event. At the end of the stream it
// returns io.EOF (an event not yet dispatched is dropped); a read error is
// returned as it is, a line over the bound as ErrSSELineTooLong with its
// line number.
func (d *SSEDecoder) Next() (SSEEvent, error) {
	var name string
	var data []byte
	hasData := false
	for {
		line, err := d.readLine()
		if err != nil {
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if !hasData {
				name = "" // an event without data is not dispatched
				continue
			}
			if name == "" {
				name = "message"
			}
			return SSEEvent{Name: name, Data: data, ID: d.lastID}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				d.lastID = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				d.Retry = n
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// readLine returns the next line without its terminator. A CR ends a line
// at once (waiting for a possible LF would hold back an event until the
// next byte arrived), and an LF right after it is skipped when it comes.
func (d *SSEDecoder) readLine() ([]byte, error) {
	var line []byte
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if !d.started {
			d.started = true
			if c == 0xEF { // UTF-8 byte-order mark
				if bom, err := d.r.Peek(2); err == nil && bom[0] == 0xBB && bom[1] == 0xBF {
					_, _ = d.r.Discard(2)
					continue
				}
			}
		}
		if d.skipLF {
			d.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			d.line++
			return line, nil
		case '\r':
			d.line++
			d.skipLF = true
			return line, nil
		}
		if len(line) >= d.max {
			return nil, fmt.Errorf("line %d: %w (more than %d bytes)", d.line+1, ErrSSELineTooLong, d.max)
		}
		line = append(line, c)
	}
}

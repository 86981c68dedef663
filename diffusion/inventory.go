package diffusion

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Bits is a bitmap of a group's parts (segments or shards), part i in bit
// i%8 of byte i/8.
type Bits []byte

// NewBits returns an empty bitmap for n parts.
func NewBits(n int) Bits { return make(Bits, (n+7)/8) }

// Has reports whether part i is set.
func (b Bits) Has(i int) bool { return i >= 0 && i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0 }

// Set sets part i; out of range is ignored.
func (b Bits) Set(i int) {
	if i >= 0 && i/8 < len(b) {
		b[i/8] |= 1 << (i % 8)
	}
}

// Count returns how many parts are set.
func (b Bits) Count() int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}

// Clone returns a copy.
func (b Bits) Clone() Bits { return append(Bits(nil), b...) }

// Control is the policy's inventory message, sent as a partial message's
// parts metadata: the parts the sender holds (HAVE, an announcement, and in
// tier 4 the acknowledgement of what it received), the parts it asks the
// receiver for (WANT, a request), and tier 4's decode claim (the sender can
// rebuild the payload: push nothing more to it).
//
// Layout (version 1): flags u8 (bit 0 HAVE present, bit 1 WANT present,
// bit 2 decode claim) ‖ parts u16 LE ‖ HAVE bitmap ‖ WANT bitmap, each
// bitmap ceil(parts/8) bytes when present. An empty message (no flag) is
// invalid.
type Control struct {
	Parts   int
	Have    Bits // nil when absent
	Want    Bits // nil when absent
	Decoded bool // the decode claim
}

const (
	flagHave    = 1 << 0
	flagWant    = 1 << 1
	flagDecoded = 1 << 2
	// MaxParts bounds a group's parts (the u16 count).
	MaxParts = 1<<16 - 1
)

// ErrControl is returned (wrapped) for a malformed control message.
var ErrControl = errors.New("malformed control message")

// Encode lays c out.
func (c Control) Encode() []byte {
	n := (c.Parts + 7) / 8
	out := make([]byte, 3, 3+2*n)
	if c.Have != nil {
		out[0] |= flagHave
	}
	if c.Want != nil {
		out[0] |= flagWant
	}
	if c.Decoded {
		out[0] |= flagDecoded
	}
	binary.LittleEndian.PutUint16(out[1:], uint16(c.Parts))
	if c.Have != nil {
		out = append(out, pad(c.Have, n)...)
	}
	if c.Want != nil {
		out = append(out, pad(c.Want, n)...)
	}
	return out
}

func pad(b Bits, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}

// DecodeControl reads a control message for a group of parts parts: the
// count must match, bitmaps must have their exact length and no bit beyond
// the last part may be set.
func DecodeControl(b []byte, parts int) (Control, error) {
	if len(b) < 3 {
		return Control{}, fmt.Errorf("%w: %d bytes, want at least 3", ErrControl, len(b))
	}
	flags := b[0]
	if flags == 0 || flags&^(flagHave|flagWant|flagDecoded) != 0 {
		return Control{}, fmt.Errorf("%w: flags %#x", ErrControl, flags)
	}
	c := Control{Parts: int(binary.LittleEndian.Uint16(b[1:])), Decoded: flags&flagDecoded != 0}
	if c.Parts != parts {
		return Control{}, fmt.Errorf("%w: %d parts, the group has %d", ErrControl, c.Parts, parts)
	}
	n := (c.Parts + 7) / 8
	want := 3
	for _, f := range []byte{flagHave, flagWant} {
		if flags&f != 0 {
			want += n
		}
	}
	if len(b) != want {
		return Control{}, fmt.Errorf("%w: %d bytes, want %d", ErrControl, len(b), want)
	}
	rest := b[3:]
	take := func() (Bits, error) {
		bm := Bits(append([]byte(nil), rest[:n]...))
		rest = rest[n:]
		if r := c.Parts % 8; r != 0 && n > 0 && bm[n-1]>>r != 0 {
			return nil, fmt.Errorf("%w: bits set beyond part %d", ErrControl, c.Parts-1)
		}
		return bm, nil
	}
	var err error
	if flags&flagHave != 0 {
		if c.Have, err = take(); err != nil {
			return Control{}, err
		}
	}
	if flags&flagWant != 0 {
		if c.Want, err = take(); err != nil {
			return Control{}, err
		}
	}
	return c, nil
}

package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segdiff/segdiff/internal/stress"
	"github.com/segdiff/segdiff/internal/suggest"
)

// Key is one settable key of the run spec: a field of Config, or a stress
// condition (package stress), as flags, sweep grids and messages name it.
type Key struct {
	// Name is the flag's name ("payload-size", "loss-data").
	Name string
	// JSON is the field's JSON key ("payload_size"); "" for a stress
	// condition, which lives in Config.Stress.
	JSON string
	// Doc is the flag's usage.
	Doc string
	// Group is the field's `group` tag ("network": a sweep's network mixes
	// may set it); stress conditions are group "stress".
	Group string

	field     int // index into Config's fields; -1 for a stress condition
	condition stress.Condition
}

// GroupStress is the group of the stress conditions' keys.
const GroupStress = "stress"

// Keys returns every key of the run spec: Config's fields in order (those
// with a `doc` tag), then every stress condition that is not a field
// already (payload-size is PayloadSize). Conditions registered later
// appear in the next call.
func Keys() []Key {
	var out []Key
	names := map[string]bool{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		doc, ok := f.Tag.Lookup("doc")
		if !ok || f.Tag.Get("flag") == "-" {
			continue
		}
		js, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		name := f.Tag.Get("flag")
		if name == "" {
			name = strings.ReplaceAll(js, "_", "-")
		}
		out = append(out, Key{Name: name, JSON: js, Doc: doc, Group: f.Tag.Get("group"), field: i})
		names[name] = true
	}
	for _, c := range stress.Conditions() {
		if !names[c.Name] {
			out = append(out, Key{Name: c.Name, Doc: c.Doc, Group: GroupStress, field: -1, condition: c})
		}
	}
	return out
}

// LookupKey returns the key called name.
func LookupKey(name string) (Key, bool) {
	for _, k := range Keys() {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// KeyNames returns every key's name, in Keys' order.
func KeyNames() []string {
	var out []string
	for _, k := range Keys() {
		out = append(out, k.Name)
	}
	return out
}

// UnknownKeyError is a key the run spec does not have.
type UnknownKeyError struct{ Name string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("%q is not a key of the run spec%s", e.Name, suggest.DidYouMean(e.Name, KeyNames(), ""))
}

// Set sets the key called name from its text form: a number, a duration
// ("200ms"), a name, or for a stress condition also a percentage ("50%").
// It checks the value's form, not the spec: Validate does that. Its error
// says what is wrong with the value; the caller names the flag or key.
func (c *Config) Set(name, value string) error {
	k, ok := LookupKey(name)
	if !ok {
		return &UnknownKeyError{Name: name}
	}
	if k.field < 0 {
		v, err := stress.ParseValue(k.condition, value)
		if err != nil {
			return err
		}
		if c.Stress == nil {
			c.Stress = stress.Set{}
		}
		c.Stress[name] = v
		return nil
	}
	f := reflect.ValueOf(c).Elem().Field(k.field)
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(value)
		if err != nil {
			return errors.New("not a duration (e.g. 200ms)")
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(value)
	case reflect.Bool:
		v, err := strconv.ParseBool(value)
		if err != nil {
			return errors.New("not a boolean (true or false)")
		}
		f.SetBool(v)
	case reflect.Int, reflect.Int64:
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return errors.New("not an integer")
		}
		f.SetInt(v)
	case reflect.Uint64:
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return errors.New("not a non-negative integer")
		}
		f.SetUint(v)
	case reflect.Float64:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return errors.New("not a number")
		}
		f.SetFloat(v)
	default:
		return fmt.Errorf("a %s cannot be set from text", f.Type())
	}
	return nil
}

// setStress sets every condition of set, a stress already parsed (package
// stress checked each value against its condition's kind): a condition
// that is a field of the spec (payload-size) sets the field, the others go
// to c.Stress. Like Set, it does not validate the spec.
func (c *Config) setStress(set stress.Set) error {
	for _, name := range slices.Sorted(maps.Keys(set)) {
		k, ok := LookupKey(name)
		if !ok {
			return &UnknownKeyError{Name: name}
		}
		v := set[name]
		if k.field < 0 {
			if c.Stress == nil {
				c.Stress = stress.Set{}
			}
			c.Stress[name] = v
			continue
		}
		switch f := reflect.ValueOf(c).Elem().Field(k.field); f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(v))
		case reflect.Float64:
			f.SetFloat(v)
		default:
			return fmt.Errorf("stress condition %s: its spec field is a %s, not a number", name, f.Type())
		}
	}
	return nil
}

// Get returns the key called name's value in text form ("" for an unknown
// key or an unset stress condition).
func (c Config) Get(name string) string {
	k, ok := LookupKey(name)
	if !ok {
		return ""
	}
	if k.field < 0 {
		v, set := c.Stress[name]
		if !set {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(reflect.ValueOf(c).Field(k.field).Interface())
}

// ReadSpec reads a run spec from a JSON file: every key must be one of
// Config's (a typo fails naming it). It does not validate: the reader
// validates the spec it finally runs, once (segdiff sim, after applying
// its flags over the file).
func ReadSpec(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read run spec: %w", err)
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("read run spec %s: %w", path, err)
	}
	return c, nil
}

// WriteSpec writes c as a run spec ReadSpec reads.
func WriteSpec(path string, c Config) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("write run spec: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write run spec: %w", err)
	}
	return nil
}

package metrics_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/metrics"
)

const metricsDoc = "../client-patches/METRICS.md"

// docRow is one row of the document's series table.
type docRow struct {
	name, typ, unit, exporter string
	labels                    []string
}

// readDocTable parses the table whose header starts with
// "| name | type | labels | unit | exported by |".
func readDocTable(t *testing.T, path string) []docRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows []docRow
	inTable := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "| name | type | labels | unit | exported by |") {
			require.False(t, inTable || rows != nil, "%s:%d: second series table", path, line)
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(text, "|") {
			break
		}
		if strings.HasPrefix(text, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		require.GreaterOrEqual(t, len(cells), 5, "%s:%d: want at least 5 cells", path, line)
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		r := docRow{name: cells[0], typ: cells[1], unit: cells[3], exporter: cells[4]}
		if r.unit == "—" {
			r.unit = ""
		}
		if cells[2] != "—" {
			for _, l := range strings.Split(cells[2], ",") {
				r.labels = append(r.labels, strings.TrimSpace(l))
			}
		}
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "%s: no series table (header \"| name | type | labels | unit | exported by |\")", path)
	return rows
}

func TestDocumentMatchesDefinitions(t *testing.T) {
	rows := readDocTable(t, metricsDoc)
	doc := map[string]docRow{}
	var order []string
	for _, r := range rows {
		_, dup := doc[r.name]
		assert.False(t, dup, "%s: %s listed twice", metricsDoc, r.name)
		doc[r.name] = r
		order = append(order, r.name)
	}
	for _, d := range metrics.Definitions {
		r, ok := doc[d.Name]
		if !assert.True(t, ok, "%s: series %s missing from the table", metricsDoc, d.Name) {
			continue
		}
		assert.Equal(t, string(d.Type), r.typ, "%s: type of %s", metricsDoc, d.Name)
		assert.Equal(t, d.Labels, r.labels, "%s: labels of %s", metricsDoc, d.Name)
		assert.Equal(t, d.Unit, r.unit, "%s: unit of %s", metricsDoc, d.Name)
		assert.Equal(t, string(d.Exporter), r.exporter, "%s: exporter of %s", metricsDoc, d.Name)
	}
	for _, name := range order {
		_, ok := metrics.Lookup(name)
		assert.True(t, ok, "%s: series %s is not in metrics.Definitions", metricsDoc, name)
	}
	assert.Equal(t, metrics.Names(), order, "%s: table order differs from metrics.Definitions", metricsDoc)
}

// TestDocumentExamplesParse keeps the document's example expositions valid.
func TestDocumentExamplesParse(t *testing.T) {
	raw, err := os.ReadFile(metricsDoc)
	require.NoError(t, err)
	var blocks []string
	rest := string(raw)
	for {
		_, after, ok := strings.Cut(rest, "```text\n")
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "```")
		require.True(t, ok, "unterminated text block")
		blocks = append(blocks, block)
		rest = tail
	}
	require.Len(t, blocks, 2, "%s: want the node and the builder example", metricsDoc)
	snap, err := metrics.Parse(strings.NewReader(strings.Join(blocks, "")), metricsDoc)
	require.NoError(t, err)
	assert.Empty(t, snap.Unknown)
	var perSlot []string
	for _, d := range metrics.Definitions {
		if d.Exporter == metrics.ExportReference {
			continue // the embedded devnet's own series: clients' examples lack it
		}
		if d.PerSlot() {
			perSlot = append(perSlot, d.Name)
		} else {
			assert.True(t, snap.Has(d.Name), "example lacks %s", d.Name)
		}
	}
	require.NoError(t, snap.Require(12, perSlot...))
	s := snap.Slot(12)
	// The examples' copies as the suite reads them: the one snapshot holds
	// the builder's compressed size and the node's bytes.
	net := assertions.Network{Nodes: []assertions.Node{{ID: "builder", Builder: true, Slots: snap.Slots}, {ID: "node", Slots: snap.Slots}}}
	copies, err := assertions.Copies(net, []uint64{12}, assertions.CopiesOverSlot)
	require.NoError(t, err)
	require.Len(t, copies, 1)
	assert.InDelta(t, 1.41, copies[0].Value, 0.005)
	assert.EqualValues(t, s.SegmentCount, s.Segments)
	assert.True(t, slices.Equal(snap.SlotNumbers(), []uint64{12}))
}

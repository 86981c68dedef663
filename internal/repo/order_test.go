package repo_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// orderDocs say in prose in which order make e2e runs the broken-network
// check and the suite.
var orderDocs = []string{"README.md", ".ci/e2e"}

// make e2e runs TestBrokenNetworkFailsTheSuite before TestFeatures (go test
// runs a package's tests in source order, whatever order -test.run names
// them in), and every sentence of orderDocs that puts the @broken check in
// an order puts it first.
func TestBrokenCheckRunsBeforeTheSuite(t *testing.T) {
	order, err := testOrder(".")
	if err != nil {
		t.Fatal(err)
	}
	broken, suite := slices.Index(order, "TestBrokenNetworkFailsTheSuite"), slices.Index(order, "TestFeatures")
	switch {
	case broken < 0 || suite < 0:
		t.Fatalf("the root package's tests are %v; want TestBrokenNetworkFailsTheSuite and TestFeatures among them", order)
	case broken > suite:
		t.Errorf("go test runs TestFeatures before TestBrokenNetworkFailsTheSuite (order %v), but %s say the broken-network check runs first", order, strings.Join(orderDocs, " and "))
	}
	for _, doc := range orderDocs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		stated := 0
		text := string(data)
		if !strings.HasSuffix(doc, ".md") {
			text = comments(text)
		}
		for _, s := range orderSentences(text) {
			stated++
			if !reFirst.MatchString(s) {
				t.Errorf("%s: %q puts the @broken check after the suite; it runs first", doc, s)
			}
		}
		if stated == 0 {
			t.Errorf("%s: no sentence puts the @broken check in an order; the check matched nothing", doc)
		}
	}
}

func TestOrderSentences(t *testing.T) {
	tests := []struct {
		text  string
		want  int  // sentences stating an order
		first bool // and all of them say first
	}{
		{text: "| `make e2e` | 85 s | 32-node devnets, two at a time, then the `@broken` proof |", want: 1},
		{text: "| `make e2e` | 85 s | little else running (before the budgets changed); 32-node devnets, then the `@broken` proof |", want: 1},
		{text: comments("run=x\n# The suite, then (with the default filter only) the proof that it fails\n# closed: stress.feature's @broken rows must fail, naming stranded nodes.\n"), want: 1},
		{text: "stress.feature's `@broken` rows run after the suite. It fails closed.", want: 1},
		{text: "| `make e2e` | 85 s | the `@broken` proof first, then 32-node devnets |", want: 1, first: true},
		{text: "`@broken` rows run before the suite, which requires them to fail.", want: 1, first: true},
		{text: comments("# First the proof: @broken rows must fail;\n# then the suite.\nrun=x # then\n"), want: 1, first: true},
		{text: "`@broken` scenarios are built to fail. The suite then writes a report.", want: 0},
	}
	for _, tc := range tests {
		got := orderSentences(tc.text)
		first := true
		for _, s := range got {
			first = first && reFirst.MatchString(s)
		}
		if len(got) != tc.want || len(got) > 0 && first != tc.first {
			t.Errorf("orderSentences(%q) = %q (all first: %v); want %d sentences, all first: %v", tc.text, got, first, tc.want, tc.first)
		}
	}
}

var (
	reOrder = regexp.MustCompile(`(?i)\b(then|after|before|first)\b`)
	reFirst = regexp.MustCompile(`(?i)\b(before|first)\b`)
	// reSentenceEnd ends a sentence, a clause after a semicolon, a table
	// cell or a paragraph.
	reSentenceEnd = regexp.MustCompile(`\.\s|;|\||\n\s*\n`)
	reComment     = regexp.MustCompile(`^\s*#\s?`)
)

// comments returns the text of a script's whole-line comments.
func comments(script string) string {
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if loc := reComment.FindStringIndex(line); loc != nil && !strings.HasPrefix(line, "#!") {
			b.WriteString(line[loc[1]:] + "\n")
		}
	}
	return b.String()
}

// orderSentences returns the sentences (clauses, table cells) of text that
// name @broken and an order.
func orderSentences(text string) []string {
	var out []string
	for _, s := range reSentenceEnd.Split(text, -1) {
		s = strings.Join(strings.Fields(s), " ")
		if strings.Contains(s, "@broken") && reOrder.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// testOrder returns the Test functions of the package in dir in the order
// go test runs them: the package's own test files, then its external test
// package's, each file in name order and each function in source order.
func testOrder(dir string) ([]string, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("read package %s: %w", dir, err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, file := range append(slices.Sorted(slices.Values(pkg.TestGoFiles)), slices.Sorted(slices.Values(pkg.XTestGoFiles))...) {
		f, err := parser.ParseFile(fset, dir+"/"+file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
}

// Package paramstest reads the corpus of bad network-params files the params
// tests and the real-package tests of internal/starlarktest share.
package paramstest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BadCase is one file of the corpus of bad network-params files
// (internal/params/testdata/bad): each holds one trap, and its header names
// the rule that reports it and a message both the checker and the
// package's run report:
//
//	# <what the trap is>
//	# rule: <params.Rule name, or params.RuleKeys>
//	# want: <substring of the checker's message and of the run's error>
//
// A trap the package does not fail on but misreads says so instead, with
// what the run does with it; want is then the checker's message only:
//
//	# runs-with: <substring of a launched service's command>
//
// The params tests check the checker against it; the real-package mode of
// internal/starlarktest runs every file through the real ethereum-package.
type BadCase struct {
	Path string
	Data []byte
	Rule string
	Want string
	// RunsWith, when set, is in the command of a service the real run
	// launches, and the run succeeds.
	RunsWith string
}

// LoadBadCases reads every *.yaml of dir as a BadCase.
func LoadBadCases(dir string) ([]BadCase, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list bad params: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("list bad params: no *.yaml in %s", dir)
	}
	var out []BadCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read bad params: %w", err)
		}
		c := BadCase{Path: f, Data: data}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "#")
			if !ok {
				break
			}
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "rule:"); ok {
				c.Rule = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "want:"); ok {
				c.Want = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "runs-with:"); ok {
				c.RunsWith = strings.TrimSpace(v)
			}
		}
		if c.Rule == "" || c.Want == "" {
			return nil, fmt.Errorf("read bad params %s: the header needs '# rule:' and '# want:' lines", f)
		}
		out = append(out, c)
	}
	return out, nil
}

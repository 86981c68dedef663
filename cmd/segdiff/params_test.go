package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParamsCheck(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("participants:\n  - cl_tpye: prysm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join("..", "..", "client-patches", "clients.yaml")
	good := filepath.Join("..", "..", "network-params", "segmented.yaml")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "no subcommand", args: nil, wantCode: 2, wantStderr: "no subcommand given (params has one: check)"},
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStderr: "usage: segdiff params check"},
		{name: "no files", args: []string{"check"}, wantCode: 2, wantStderr: "no files given"},
		{name: "good file", args: []string{"check", "--clients", clients, good}, wantCode: 0, wantStdout: "1 files ok (ethereum-package 0350d2e)"},
		{name: "bad file", args: []string{"check", "--clients", clients, good, bad}, wantCode: 1,
			wantStdout: bad + ":2: participants[0].cl_tpye: unknown key (did you mean cl_type?)", wantStderr: "1 of 2 files have problems"},
		{name: "missing file", args: []string{"check", "--clients", clients, "nope.yaml"}, wantCode: 1, wantStderr: "read network params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runParams(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

package kurtosis

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// multiplex frames lines as Docker does for a container without a TTY:
// stream 1 (stdout) or 2 (stderr), a big-endian length, the payload.
func multiplex(frames ...string) []byte {
	var out []byte
	for i, f := range frames {
		hdr := make([]byte, 8)
		hdr[0] = byte(1 + i%2)
		binary.BigEndian.PutUint32(hdr[4:], uint32(len(f)))
		out = append(out, hdr...)
		out = append(out, f...)
	}
	return out
}

// fakeDocker serves the two Docker Engine API calls dockerLogs makes for
// the containers in logs (name → raw log body); tty marks TTY containers.
func fakeDocker(logs map[string][]byte, tty map[string]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/containers/")
		name, call, _ := strings.Cut(rest, "/")
		body, found := logs[name]
		switch {
		case !ok || !found:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such container: ` + name + `"}`))
		case call == "json":
			if tty[name] {
				w.Write([]byte(`{"Id":"x","Config":{"Tty":true}}`))
			} else {
				w.Write([]byte(`{"Id":"x","Config":{"Tty":false}}`))
			}
		case call == "logs" && r.URL.Query().Get("stdout") == "1" && r.URL.Query().Get("stderr") == "1" && r.URL.Query().Get("tail") != "":
			// A container's log since a time is its "<name>@since" entry
			// when there is one (the daemon filters by time; the fake by name).
			if recent, ok := logs[name+"@since"]; ok && r.URL.Query().Get("since") != "" {
				body = recent
			}
			w.Write(body)
		default:
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
		}
	})
}

func TestDockerLogsLastErrorLine(t *testing.T) {
	prysm := `time="2026-12-07 12:00:01" level=info msg="Beacon chain started" prefix=node` + "\n" +
		`time="2026-12-07 12:00:12" level=error msg="Could not propose block" error="could not build block: payload id unknown" prefix=rpc/validator slot=1` + "\n" +
		`time="2026-12-07 12:00:13" level=info msg="Synced new block" slot=0` + "\n"
	geth := "INFO [12-07|12:00:01.000] Starting Geth\n\x1b[31mERROR\x1b[0m[12-07|12:00:14.000] Beacon backfilling failed err=\"nope\"\nINFO [12-07|12:00:15.000] Looking for peers\n"
	jsonLog := `{"level":"info","msg":"up"}` + "\n" + `{"level":"error","msg":"forkchoice update failed"}` + "\n"
	logs := map[string][]byte{
		"cl-1-prysm-geth--u1": multiplex(prysm[:40], prysm[40:150], prysm[150:]), // a line split across frames and streams
		"el-1-geth-prysm--u2": []byte(geth),
		"cl-2-lodestar--u3":   multiplex(jsonLog),
		"cl-3-prysm-geth--u4": multiplex("level=info msg=fine\n"),
	}
	srv := httptest.NewServer(fakeDocker(logs, map[string]bool{"el-1-geth-prysm--u2": true}))
	defer srv.Close()
	d, err := newDockerLogs("tcp://" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		container, want, wantErr string
	}{
		{container: "cl-1-prysm-geth--u1", want: `level=error msg="Could not propose block" error="could not build block: payload id unknown"`},
		{container: "el-1-geth-prysm--u2", want: `ERROR[12-07|12:00:14.000] Beacon backfilling failed err="nope"`},
		{container: "cl-2-lodestar--u3", want: `{"level":"error","msg":"forkchoice update failed"}`},
		{container: "cl-3-prysm-geth--u4", wantErr: "no error line in the last 2000 lines of container cl-3-prysm-geth--u4"},
		{container: "gone--u5", wantErr: "404 Not Found: No such container: gone--u5"},
	}
	for _, tt := range tests {
		got, err := d.lastErrorLine(ctx, tt.container, time.Time{})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.container, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, %v; want a line containing %q", tt.container, got, err, tt.want)
		}
	}
	if _, err := d.lastErrorLine(ctx, "cl-3-prysm-geth--u4", time.Time{}); !errors.Is(err, errNoErrorLine) {
		t.Errorf("no error line: %v, want errNoErrorLine", err)
	}
}

func TestDockerLogsUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "dl") // short: a socket path has ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: fakeDocker(map[string][]byte{"c--u": multiplex("level=error msg=boom\n")}, nil)}}
	srv.Start()
	defer srv.Close()
	d, err := newDockerLogs("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.lastErrorLine(context.Background(), "c--u", time.Time{}); err != nil || got != "level=error msg=boom" {
		t.Errorf("lastErrorLine = %q, %v", got, err)
	}
}

func TestNewDockerLogsRejectsOtherHosts(t *testing.T) {
	if _, err := newDockerLogs("ssh://me@host"); err == nil || !strings.Contains(err.Error(), `scheme "ssh" not supported`) {
		t.Errorf("newDockerLogs(ssh) = %v", err)
	}
}

func TestContainerName(t *testing.T) {
	if got := containerName("cl-1-prysm-geth", "0123abcd"); got != "cl-1-prysm-geth--0123abcd" {
		t.Errorf("containerName = %q", got)
	}
	if got := containerName("cl-1-prysm-geth", ""); got != "" {
		t.Errorf("containerName without uuid = %q", got)
	}
}

// A stalled node's quote is its newest error line since the head stopped;
// with none since, the last one before, said to be older.
func TestChainWatcherLogLineSince(t *testing.T) {
	logs := map[string][]byte{
		"cl-1--u":       multiplex("level=error msg=\"config field unknown\"\nlevel=error msg=\"parent root does not match\"\n"),
		"cl-1--u@since": multiplex("level=error msg=\"parent root does not match\"\n"),
		"cl-2--u":       multiplex("level=error msg=\"config field unknown\"\n"),
		"cl-2--u@since": multiplex("level=info msg=fine\n"),
		"cl-3--u":       multiplex("level=info msg=fine\n"),
	}
	srv := httptest.NewServer(fakeDocker(logs, nil))
	defer srv.Close()
	d, err := newDockerLogs("tcp://" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	w := &chainWatcher{logs: d}
	tests := []struct{ container, want string }{
		{"cl-1--u", `last error line of its container log (cl-1--u): level=error msg="parent root does not match"`},
		{"cl-2--u", `no error line in its container log (cl-2--u) since its head stopped advancing 36s ago; the last before that: level=error msg="config field unknown"`},
		{"cl-3--u", "its container log (cl-3--u) has no error line"},
	}
	for _, tt := range tests {
		if got := w.logLine(context.Background(), tt.container, 36*time.Second); !strings.Contains(got, tt.want) {
			t.Errorf("logLine(%s) = %q, want it to contain %q", tt.container, got, tt.want)
		}
	}
}

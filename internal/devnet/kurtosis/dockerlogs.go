package kurtosis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// defaultDockerHost is the Docker Engine API when DOCKER_HOST is unset.
const defaultDockerHost = "unix:///var/run/docker.sock"

// logTailLines is how much of a container's log is searched for its last
// error line.
const logTailLines = 2000

// logReader finds the last error line of a service container's log.
type logReader interface {
	lastErrorLine(ctx context.Context, container string, since time.Time) (string, error)
}

// errNoErrorLine: the log was read and holds no error line.
var errNoErrorLine = errors.New("no error line")

// dockerLogs reads container logs through the Docker Engine API, with
// net/http: no Docker client library is in go.mod (the Kurtosis SDK does
// not bring one), and two GET requests do not need one. Kurtosis' own log
// path (`kurtosis service logs`, GetServiceLogs) goes through its logs
// aggregator, which offline machines replace by a stand-in that discards
// logs, while Docker keeps every container's log.
type dockerLogs struct {
	client *http.Client
	base   string // http://docker or http://host:port
	tail   int
}

// newDockerLogs returns a reader for host: "unix:///path" or
// "tcp://host:port" (plain HTTP; TLS is not supported).
func newDockerLogs(host string) (*dockerLogs, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("docker host %q: %w", host, err)
	}
	tr := &http.Transport{Proxy: nil, MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second}
	d := &dockerLogs{client: &http.Client{Transport: tr}, tail: logTailLines}
	switch u.Scheme {
	case "unix":
		sock := u.Path
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "unix", sock)
		}
		d.base = "http://docker"
	case "tcp", "http":
		d.base = "http://" + u.Host
	default:
		return nil, fmt.Errorf("docker host %q: scheme %q not supported (want unix:// or tcp://)", host, u.Scheme)
	}
	return d, nil
}

// errorLineRE matches the error lines of the clients' log formats: logrus
// text (Prysm: level=error), geth and Lighthouse (ERROR / ERRO, CRIT),
// JSON logs ("level":"error"), and their fatal variants.
var errorLineRE = regexp.MustCompile(`level=(?:error|fatal|panic)\b|\b(?:ERRO|CRIT|FATAL)|"level":\s*"(?:error|fatal|panic)"`)

// ansiRE matches terminal colour sequences.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// lastErrorLine returns the last error line among the last d.tail lines of
// container's stdout and stderr logged since since (all of them when since
// is zero), errNoErrorLine when there is none.
func (d *dockerLogs) lastErrorLine(ctx context.Context, container string, since time.Time) (string, error) {
	var info struct {
		Config struct {
			Tty bool `json:"Tty"`
		} `json:"Config"`
	}
	if err := d.get(ctx, "/containers/"+url.PathEscape(container)+"/json", func(r io.Reader) error {
		return json.NewDecoder(r).Decode(&info)
	}); err != nil {
		return "", err
	}
	var last string
	q := url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {fmt.Sprint(d.tail)}}
	if !since.IsZero() {
		q.Set("since", strconv.FormatInt(since.Unix(), 10))
	}
	err := d.get(ctx, "/containers/"+url.PathEscape(container)+"/logs?"+q.Encode(), func(r io.Reader) error {
		if !info.Config.Tty {
			pr := demux(r)
			defer pr.Close() // ends demux's goroutine should the scan stop early
			r = pr
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := ansiRE.ReplaceAllString(sc.Text(), ""); errorLineRE.MatchString(line) {
				last = line
			}
		}
		return sc.Err()
	})
	if err != nil {
		return "", err
	}
	if last == "" {
		if !since.IsZero() {
			return "", fmt.Errorf("%w since %s in container %s", errNoErrorLine, since.UTC().Format(time.TimeOnly), container)
		}
		return "", fmt.Errorf("%w in the last %d lines of container %s", errNoErrorLine, d.tail, container)
	}
	return oneLine(last, 400), nil
}

func (d *dockerLogs) get(ctx context.Context, path string, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("docker engine API: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var msg struct {
			Message string `json:"message"`
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(body, &msg) != nil || msg.Message == "" {
			msg.Message = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("docker engine API: GET %s: %s: %s", strings.SplitN(path, "?", 2)[0], resp.Status, msg.Message)
	}
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("docker engine API: read %s: %w", strings.SplitN(path, "?", 2)[0], err)
	}
	return nil
}

// demux undoes Docker's stream multiplexing of a non-TTY container's log:
// frames of an 8-byte header (stream, 0, 0, 0, big-endian length) and the
// payload. Both streams are interleaved into one. Close the returned reader
// when done with it.
func demux(r io.Reader) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		var hdr [8]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
			if hdr[0] > 2 || !bytes.Equal(hdr[1:4], []byte{0, 0, 0}) {
				pw.CloseWithError(errors.New("log stream is not multiplexed as the container's settings say"))
				return
			}
			if _, err := io.CopyN(pw, r, int64(binary.BigEndian.Uint32(hdr[4:]))); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// containerName is the Docker container of a Kurtosis service on the Docker
// backend: "<service name>--<service uuid>".
func containerName(service, uuid string) string {
	if uuid == "" {
		return ""
	}
	return service + "--" + uuid
}

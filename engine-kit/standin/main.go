// Command standin takes the place of the Kurtosis engine's companions that
// cannot be built on a machine without image registries: its logs
// aggregator (vector), logs collector (fluent-bit) and reverse proxy
// (traefik). Kurtosis starts each with a config file and waits on its HTTP
// health check; standin reads the ports from that file, answers every HTTP
// request with 200 and reads and discards everything else (the fluentd log
// driver's forward protocol). What is lost: `kurtosis service logs` and the
// engine's log search have nothing to read (`docker logs` still works,
// through Docker's dual logging), and no service is reachable through the
// reverse proxy (published ports still are).
//
// The image built from it is tagged under each upstream name; its label
// org.segdiff.engine-kit.replaces says which (engine-kit/README.md).
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The config files the upstream images read when started without -c.
var defaultConfigs = []string{
	"/etc/vector/vector.yaml",
	"/fluent-bit/etc/fluent-bit.conf",
	"/etc/traefik/traefik.yml",
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "standin (%s): %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "validate" {
		// `vector validate`: the config is Kurtosis's own, nothing to check.
		return nil
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "version") {
		fmt.Println("segdiff engine-kit standin")
		return nil
	}
	var ports []int
	if len(args) == 2 && args[0] == "--listen" {
		// Grafana's stand-in: no config file, one fixed port.
		p, err := strconv.Atoi(args[1])
		if err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("--listen %q: want a TCP port", args[1])
		}
		return listen([]int{p}, "--listen")
	}
	files := configFlags(args)
	if len(files) == 0 {
		for _, f := range defaultConfigs {
			if _, err := os.Stat(f); err == nil {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("no config file: pass -c FILE or provide one of %s", strings.Join(defaultConfigs, ", "))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read config: %w", err)
		}
		ports = append(ports, configPorts(string(b))...)
	}
	ports = uniq(ports)
	if len(ports) == 0 {
		return fmt.Errorf("no port found in %s", strings.Join(files, ", "))
	}
	return listen(ports, strings.Join(files, ", "))
}

// listen serves every port until SIGTERM or SIGINT.
func listen(ports []int, from string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, p := range ports {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			return fmt.Errorf("listen on %d: %w", p, err)
		}
		defer l.Close()
		go serve(l)
		fmt.Fprintf(os.Stderr, "standin: listening on :%d (from %s)\n", p, from)
	}
	<-ctx.Done()
	return nil
}

// configFlags returns the files named by -c FILE, -c=FILE, --config FILE,
// --config=FILE or --configFile=FILE.
func configFlags(args []string) []string {
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, name := range []string{"-c", "--config", "--configFile", "--configfile"} {
			switch {
			case a == name && i+1 < len(args):
				files = append(files, args[i+1])
				i++
			case strings.HasPrefix(a, name+"="):
				files = append(files, strings.TrimPrefix(a, name+"="))
			}
		}
	}
	return files
}

var portPatterns = []*regexp.Regexp{
	// fluent-bit: "http_port 9713", "port 24224"
	regexp.MustCompile(`(?m)^\s*(?:http_port|port)\s+(\d+)\s*$`),
	// vector and traefik: address: "0.0.0.0:9711", address: ":9730"
	regexp.MustCompile(`(?m)address:\s*"?[0-9A-Za-z.\[\]:]*:(\d+)"?`),
}

// configPorts returns the TCP ports a config file asks the real program to
// listen on, in order of first appearance.
func configPorts(config string) []int {
	var ports []int
	for _, re := range portPatterns {
		for _, m := range re.FindAllStringSubmatch(config, -1) {
			if p, err := strconv.Atoi(m[1]); err == nil && p > 0 && p < 65536 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

func uniq(ports []int) []int {
	sort.Ints(ports)
	out := ports[:0]
	for i, p := range ports {
		if i == 0 || p != ports[i-1] {
			out = append(out, p)
		}
	}
	return out
}

func serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go handle(c)
	}
}

var httpMethods = []string{"GET ", "HEAD", "POST", "PUT ", "OPTI", "DELE", "PATC"}

// handle answers an HTTP request with 200 and discards anything else.
func handle(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	head, err := r.Peek(4)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	for _, m := range httpMethods {
		if string(head) == m {
			answerHTTP(c, r)
			return
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func answerHTTP(c net.Conn, r *bufio.Reader) {
	for {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		// Read the request head; bodies of health checks are empty, and
		// anything else is discarded with the connection.
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" || line == "\n" {
				break
			}
		}
		const body = "{\"ok\":true,\"standin\":\"segdiff engine-kit\"}\n"
		if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			return
		}
	}
}

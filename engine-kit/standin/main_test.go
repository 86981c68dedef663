package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConfigPorts(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []int
	}{
		{"fluent-bit", "[SERVICE]\n\thttp_server On\n\thttp_listen 0.0.0.0\n\thttp_port 9713\n[INPUT]\n\tname forward\n\tport 9712\n[OUTPUT]\n\thost kurtosis-logs-aggregator\n\tport 9714\n", []int{9713, 9712, 9714}},
		{"vector", "sources:\n  fluent:\n    type: fluent\n    address: \"0.0.0.0:9714\"\napi:\n  enabled: true\n  address: 0.0.0.0:9711\n", []int{9714, 9711}},
		{"traefik", "entryPoints:\n  web:\n    address: \":9730\"\n  traefik:\n    address: \":9731\"\n", []int{9730, 9731}},
		{"none", "log:\n  level: DEBUG\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, configPorts(tt.config))
		})
	}
}

func TestConfigFlags(t *testing.T) {
	assert.Equal(t, []string{"/etc/vector/vector.yaml"}, configFlags([]string{"-c=/etc/vector/vector.yaml"}))
	assert.Equal(t, []string{"a.conf", "b.yml"}, configFlags([]string{"-c", "a.conf", "--config=b.yml"}))
	assert.Empty(t, configFlags([]string{"-c"}))
}

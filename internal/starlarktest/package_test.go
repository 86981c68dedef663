package starlarktest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/clientpatch"
	devnetkurtosis "github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/starlarktest"
)

// packageDir is the segdiff Kurtosis package (kurtosis/).
// packageDir is the Kurtosis package: the repository's kurtosis/.
var packageDir = func() string {
	root, err := repo.Root()
	if err != nil {
		panic(err)
	}
	return filepath.Join(root, "kurtosis")
}()

// output mirrors contract point 2 (what internal/devnet/kurtosis decodes).
type output struct {
	SegdiffNodes []struct {
		ID        string   `json:"id"`
		CLService string   `json:"cl_service"`
		ELService string   `json:"el_service"`
		Client    string   `json:"client"`
		LinkClass string   `json:"link_class"`
		Roles     []string `json:"roles"`
		// DiffusionRole is the participant's segdiff.role (relay by default).
		DiffusionRole  string `json:"diffusion_role"`
		ValidatorFirst uint64 `json:"validator_first"`
		ValidatorCount uint64 `json:"validator_count"`
	} `json:"segdiff_nodes"`
	PrometheusService string           `json:"prometheus_service"`
	GrafanaService    string           `json:"grafana_service"`
	Mode              string           `json:"mode"`
	SecondsPerSlot    int              `json:"seconds_per_slot"`
	PayloadDueBPS     int              `json:"payload_due_bps"`
	Commit            string           `json:"ethereum_package_commit"`
	Shaping           []map[string]any `json:"shaping"`
	LoadService       string           `json:"load_service"`
}

// prometheusConfig is the part of prometheus.yml the tests read.
type prometheusConfig struct {
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
	} `yaml:"global"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string          `yaml:"targets"`
			Labels  map[string]string `yaml:"labels"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// backend is what serves the ethereum-package import: the stand-in
// (EthereumPackageStub) or, in the real-package mode, a checkout.
type backend struct {
	name string
	opts []starlarktest.Option
}

var standIn = backend{name: "stand-in", opts: []starlarktest.Option{
	starlarktest.WithRemoteModule(starlarktest.EthereumPackageLocator, starlarktest.EthereumPackageStub),
}}

// run executes the package with YAML args on the given cluster type against
// the stand-in, privileged exactly when the args set segdiff.link_classes
// (what `segdiff devnet up` does).
func run(t *testing.T, argsYAML, cluster string) (*starlarktest.Plan, output, error) {
	t.Helper()
	return runOn(t, standIn, argsYAML, cluster)
}

func runOn(t *testing.T, b backend, argsYAML, cluster string) (*starlarktest.Plan, output, error) {
	t.Helper()
	var parsed struct {
		Segdiff struct {
			LinkClasses any `yaml:"link_classes"`
		} `yaml:"segdiff"`
	}
	_ = yaml.Unmarshal([]byte(argsYAML), &parsed)
	return runWith(t, b, argsYAML, cluster, parsed.Segdiff.LinkClasses != nil)
}

func runWith(t *testing.T, b backend, argsYAML, cluster string, privileged bool) (*starlarktest.Plan, output, error) {
	t.Helper()
	opts := append([]starlarktest.Option{
		starlarktest.WithClusterType(cluster),
		starlarktest.WithAllowPrivilegedMode(privileged),
	}, b.opts...)
	r, err := starlarktest.New(packageDir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	js, err := params.YAMLToJSON([]byte(argsYAML))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.Run(string(js))
	var out output
	if err == nil {
		if jerr := json.Unmarshal(raw, &out); jerr != nil {
			t.Fatalf("decode run output %s: %v", raw, jerr)
		}
		// The Go side (contract point 2) must accept what the package returns.
		if _, perr := devnetkurtosis.ParseRunOutput(raw); perr != nil {
			t.Errorf("internal/devnet/kurtosis rejects the run output: %v\n%s", perr, raw)
		}
	}
	return r.Plan(), out, err
}

func mustRun(t *testing.T, argsYAML, cluster string) (*starlarktest.Plan, output) {
	t.Helper()
	return mustRunOn(t, standIn, argsYAML, cluster)
}

func mustRunOn(t *testing.T, b backend, argsYAML, cluster string) (*starlarktest.Plan, output) {
	t.Helper()
	p, out, err := runOn(t, b, argsYAML, cluster)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return p, out
}

func promConfig(t *testing.T, p *starlarktest.Plan) prometheusConfig {
	t.Helper()
	svc, ok := p.Services["segdiff-prometheus"]
	if !ok {
		t.Fatalf("no segdiff-prometheus service; services: %v", p.ServiceNames())
	}
	art := p.Artifacts[svc.Files["/config"]]
	if art == nil {
		t.Fatalf("segdiff-prometheus mounts no artifact at /config: %v", svc.Files)
	}
	var cfg prometheusConfig
	if err := yaml.Unmarshal([]byte(art.Files["prometheus.yml"]), &cfg); err != nil {
		t.Fatalf("rendered prometheus.yml is not YAML: %v\n%s", err, art.Files["prometheus.yml"])
	}
	return cfg
}

const segmented = `
participants:
  - cl_type: prysm
    cl_image: example/prysm:segmented
    el_type: geth
    count: 6
network_params:
  network: kurtosis
  seconds_per_slot: 12
  gloas_fork_epoch: 0
  payload_due_bps: 5000
additional_services: [buildoor]
buildoor_params:
  instances: [{participant: 1}]
segdiff:
  mode: segmented
  prometheus: {scrape_interval: 5s}
  grafana: {enabled: true}
`

func TestSegmentedPlan(t *testing.T) {
	p, out := mustRun(t, segmented, "docker")

	if _, leaked := p.EthereumPackageArgs["segdiff"]; leaked {
		t.Error("the segdiff section reached ethereum-package, which rejects unknown keys")
	}
	if got := stringsOf(p.EthereumPackageArgs["additional_services"]); !slices.Equal(got, []string{"buildoor"}) {
		t.Errorf("additional_services passed on = %v, want [buildoor] unchanged (no shaping asked for)", got)
	}
	prom := p.Services["segdiff-prometheus"]
	if prom == nil || prom.Ports["http"].Number != 9090 {
		t.Fatalf("segdiff-prometheus port http = %+v, want 9090", prom)
	}
	graf := p.Services["segdiff-grafana"]
	if graf == nil || graf.Ports["dashboards"].Number != 3000 {
		t.Fatalf("segdiff-grafana port dashboards = %+v, want 3000", graf)
	}
	dash := p.Artifacts[graf.Files["/dashboards"]]
	if dash == nil || !json.Valid([]byte(dash.Files["segdiff.json"])) {
		t.Fatalf("grafana /dashboards artifact lacks a valid segdiff.json: %v", graf.Files)
	}
	prov := p.Artifacts[graf.Files["/config"]]
	if prov == nil || !strings.Contains(prov.Files["datasources/datasource.yml"], "url: http://segdiff-prometheus:9090") ||
		!strings.Contains(prov.Files["datasources/datasource.yml"], "uid: segdiff-prometheus") {
		t.Fatalf("grafana datasource not pointing at segdiff-prometheus: %+v", prov)
	}
	for file, want := range map[string]string{"datasources/datasource.yml": "datasources", "dashboards/dashboards.yml": "providers"} {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(prov.Files[file]), &doc); err != nil || doc[want] == nil {
			t.Errorf("grafana provisioning %s: %v, want a YAML map with %s:\n%s", file, err, want, prov.Files[file])
		}
	}
	if graf.Env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] != "/dashboards/segdiff.json" || graf.Env["GF_PATHS_PROVISIONING"] != "/config" {
		t.Errorf("grafana env = %v", graf.Env)
	}
	if _, ok := p.Services["disruptoor"]; ok {
		t.Error("disruptoor launched without segdiff.link_classes")
	}
	if len(out.Shaping) != 0 {
		t.Errorf("shaping = %v without segdiff.link_classes", out.Shaping)
	}

	if len(out.SegdiffNodes) != 6 {
		t.Fatalf("segdiff_nodes = %d, want 6", len(out.SegdiffNodes))
	}
	n0 := out.SegdiffNodes[0]
	if n0.ID != "cl-1-prysm-geth" || n0.CLService != "cl-1-prysm-geth" || n0.ELService != "el-1-geth-prysm" || n0.Client != "prysm" {
		t.Errorf("node 0 = %+v", n0)
	}
	if !slices.Equal(n0.Roles, []string{"node", "proposer", "builder"}) {
		t.Errorf("node 0 roles = %v, want node, proposer, builder (buildoor instance on participant 1)", n0.Roles)
	}
	if r := out.SegdiffNodes[1].Roles; !slices.Equal(r, []string{"node", "proposer"}) {
		t.Errorf("node 1 roles = %v", r)
	}
	for _, n := range out.SegdiffNodes {
		if _, ok := p.Services[n.CLService]; !ok {
			t.Errorf("node %s names CL service %s, which the plan does not have", n.ID, n.CLService)
		}
		if n.LinkClass != "datacenter" {
			t.Errorf("node %s link_class %q without shaping, want datacenter (unshaped Docker bridge)", n.ID, n.LinkClass)
		}
	}
	want := output{PrometheusService: "segdiff-prometheus", GrafanaService: "segdiff-grafana", Mode: "segmented",
		SecondsPerSlot: 12, PayloadDueBPS: 5000, Commit: params.EthereumPackageCommit}
	got := output{PrometheusService: out.PrometheusService, GrafanaService: out.GrafanaService, Mode: out.Mode,
		SecondsPerSlot: out.SecondsPerSlot, PayloadDueBPS: out.PayloadDueBPS, Commit: out.Commit}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("output = %+v, want %+v", got, want)
	}
}

// TestPrometheusScrapesEveryEndpoint: one job per CL and EL metrics endpoint,
// after count expansion, each labelled with its node, pointing at the port
// the service really has.
func TestPrometheusScrapesEveryEndpoint(t *testing.T) {
	args := `
participants:
  - {cl_type: prysm, el_type: geth, count: 3}
  - {cl_type: lighthouse, el_type: reth, count: 7}
  - {cl_type: teku, el_type: ethereumjs}
segdiff:
  prometheus: {scrape_interval: 2s}
`
	p, out := mustRun(t, args, "docker")
	cfg := promConfig(t, p)
	if cfg.Global.ScrapeInterval != "2s" {
		t.Errorf("scrape_interval = %q, want 2s", cfg.Global.ScrapeInterval)
	}
	if len(out.SegdiffNodes) != 11 {
		t.Fatalf("segdiff_nodes = %d, want 11 (3 + 7 + 1)", len(out.SegdiffNodes))
	}
	// Genesis validators in participant order, 128 each by default.
	for i, n := range out.SegdiffNodes {
		if n.ValidatorFirst != uint64(128*i) || n.ValidatorCount != 128 {
			t.Errorf("segdiff_nodes[%d] (%s): validators [%d, +%d), want [%d, +128)", i, n.ID, n.ValidatorFirst, n.ValidatorCount, 128*i)
		}
	}
	// 11 CLs + 10 ELs (ethereumjs exports no metrics).
	if len(cfg.ScrapeConfigs) != 21 {
		t.Fatalf("scrape jobs = %d, want 21", len(cfg.ScrapeConfigs))
	}
	perNode := map[string][]string{}
	for _, job := range cfg.ScrapeConfigs {
		if len(job.StaticConfigs) != 1 || len(job.StaticConfigs[0].Targets) != 1 {
			t.Fatalf("job %s: want one target, got %+v", job.JobName, job.StaticConfigs)
		}
		sc := job.StaticConfigs[0]
		host, port, _ := strings.Cut(sc.Targets[0], ":")
		svc, ok := p.Services[host]
		if !ok {
			t.Errorf("job %s targets %s: no such service", job.JobName, sc.Targets[0])
			continue
		}
		if fmt.Sprint(svc.Ports["metrics"].Number) != port {
			t.Errorf("job %s targets port %s, service %s has metrics port %d", job.JobName, port, host, svc.Ports["metrics"].Number)
		}
		perNode[sc.Labels["segdiff_node"]] = append(perNode[sc.Labels["segdiff_node"]], sc.Labels["segdiff_component"])
	}
	for _, n := range out.SegdiffNodes {
		want := []string{"cl", "el"}
		if strings.Contains(n.ID, "teku") {
			want = []string{"cl"}
		}
		got := perNode[n.ID]
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("node %s scraped as %v, want %v", n.ID, got, want)
		}
	}
	if out.SegdiffNodes[0].ID != "cl-01-prysm-geth" || out.SegdiffNodes[10].ID != "cl-11-teku-ethereumjs" {
		t.Errorf("node ids %s … %s: ethereum-package zero-pads the index to the participant count", out.SegdiffNodes[0].ID, out.SegdiffNodes[10].ID)
	}
	if _, ok := p.Services["segdiff-grafana"]; !ok {
		t.Error("grafana is enabled by default")
	}
}

func TestLinkClassShaping(t *testing.T) {
	args := `
participants:
  - {cl_type: prysm, el_type: geth, count: 10}
additional_services: [dora]
segdiff:
  link_classes:
    default: home
    overrides:
      - {participant: 1, class: datacenter}
      - {participant: 2, class: datacenter}
      - {participant: 9, class: custom}
    custom: {up_mbps: 200, down_mbps: 400, latency_ms: 20}
`
	p, out := mustRun(t, args, "docker")
	services := stringsOf(p.EthereumPackageArgs["additional_services"])
	if !slices.Equal(services, []string{"dora", "disruptoor"}) {
		t.Errorf("additional_services = %v, want [dora disruptoor]", services)
	}
	d, ok := p.Services["disruptoor"]
	if !ok || !d.Privileged {
		t.Fatalf("disruptoor service = %+v, want a privileged service", d)
	}
	shaping, _ := p.EthereumPackageArgs["disruptoor_params"].(map[string]any)["shaping"].([]any)
	got, _ := json.Marshal(shaping)
	want := `[{"bandwidth":"50mbit","components":["cl"],"include_control":true,"name":"segdiff-home","participants":[1,4,5,6,7,8,9]},` +
		`{"bandwidth":"1000mbit","components":["cl"],"include_control":true,"name":"segdiff-datacenter","participants":[2,3]},` +
		`{"bandwidth":"200mbit","components":["cl"],"delay":"20ms","include_control":true,"name":"segdiff-custom","participants":[10]}]`
	if string(got) != want {
		t.Errorf("disruptoor_params.shaping =\n%s\nwant\n%s", got, want)
	}
	classes := make([]string, len(out.SegdiffNodes))
	for i, n := range out.SegdiffNodes {
		classes[i] = n.LinkClass
	}
	wantClasses := []string{"home", "datacenter", "datacenter", "home", "home", "home", "home", "home", "home", "custom"}
	if !slices.Equal(classes, wantClasses) {
		t.Errorf("link classes = %v, want %v", classes, wantClasses)
	}
	// Shaping never reaches our measurement services.
	for _, rule := range shaping {
		for _, n := range rule.(map[string]any)["participants"].([]any) {
			if idx, _ := n.(json.Number).Int64(); idx < 1 || idx > 10 {
				t.Errorf("rule %v selects %v, not a participant", rule, n)
			}
		}
	}
	cfg := promConfig(t, p)
	for _, job := range cfg.ScrapeConfigs {
		node := job.StaticConfigs[0].Labels["segdiff_node"]
		for _, n := range out.SegdiffNodes {
			if n.ID == node && job.StaticConfigs[0].Labels["segdiff_link_class"] != n.LinkClass {
				t.Errorf("job %s link class label %q, node has %q", job.JobName, job.StaticConfigs[0].Labels["segdiff_link_class"], n.LinkClass)
			}
		}
	}
}

func TestKubernetes(t *testing.T) {
	const shaped = "participants: [{count: 2}]\nsegdiff: {link_classes: {default: home}}\n"
	_, _, err := run(t, shaped, "kubernetes")
	if err == nil || !strings.Contains(err.Error(), "segdiff.link_classes needs the Docker backend") || !strings.Contains(err.Error(), "this cluster is kubernetes") {
		t.Fatalf("kubernetes + shaping: err = %v, want the Docker-backend message", err)
	}
	// Docker, but the run not privileged: disruptoor cannot start.
	_, _, err = runWith(t, standIn, shaped, "docker", false)
	if err == nil || !strings.Contains(err.Error(), `service "disruptoor" is privileged, but the run does not allow privileged mode`) {
		t.Fatalf("shaping without a privileged run: err = %v", err)
	}
	// Without shaping, Kubernetes is fine.
	p, out := mustRun(t, "participants: [{count: 2}]\n", "kubernetes")
	if len(out.SegdiffNodes) != 2 || p.Services["segdiff-prometheus"] == nil {
		t.Errorf("kubernetes without shaping: nodes %d, services %v", len(out.SegdiffNodes), p.ServiceNames())
	}
}

func TestGrafanaDisabled(t *testing.T) {
	p, out := mustRun(t, "segdiff: {grafana: {enabled: false}}\n", "docker")
	if out.GrafanaService != "" {
		t.Errorf("grafana_service = %q, want \"\"", out.GrafanaService)
	}
	if _, ok := p.Services["segdiff-grafana"]; ok {
		t.Error("segdiff-grafana launched although disabled")
	}
	if len(out.SegdiffNodes) != 1 || out.SegdiffNodes[0].ID != "cl-1-lighthouse-geth" {
		t.Errorf("default participant: %+v", out.SegdiffNodes)
	}
}

func TestBadInputFails(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"unknown segdiff key", "segdiff: {moed: whole}\n", "Invalid parameter segdiff.moed, allowed fields"},
		{"unknown nested key", "segdiff: {prometheus: {interval: 5s}}\n", "Invalid parameter segdiff.prometheus.interval"},
		{"bad mode", "segdiff: {mode: fast}\n", "segdiff.mode is fast; use one of"},
		{"bad interval", "segdiff: {prometheus: {scrape_interval: 5}}\n", "segdiff.prometheus.scrape_interval is 5"},
		{"bad class", "segdiff: {link_classes: {default: fibre}}\n", "segdiff.link_classes.default is fibre"},
		{"override out of range", "participants: [{count: 2}]\nsegdiff: {link_classes: {overrides: [{participant: 2, class: home}]}}\n",
			"names participant 2, but there are only 2 participants"},
		{"custom without profile", "segdiff: {link_classes: {default: custom}}\n", "segdiff.link_classes.custom {up_mbps, down_mbps, latency_ms} is not set"},
		{"shaping conflict", "disruptoor_params: {shaping: [{participants: all, delay: 1ms, include_control: true}]}\nsegdiff: {link_classes: {}}\n",
			"disruptoor_params.shaping and segdiff.link_classes both shape participants"},
		{"unresolved client ref", "participants: [{cl_type: prysm, cl_image: \"@clients/prysm-segmented\"}]\n",
			"participants[0].cl_image is @clients/prysm-segmented: @clients/ references are resolved by `segdiff devnet up`"},
		{"unresolved matrix client ref", "participants_matrix: {el: [{el_image: \"@clients/geth-gloas\"}]}\n",
			"participants_matrix.el[0].el_image is @clients/geth-gloas"},
		{"unknown ethereum-package key reaches the stub", "participantz: []\n", "Invalid parameter participantz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args, "docker")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestNetworkParamsFilesRun runs every network-params file, its @clients/
// images resolved from client-patches/clients.yaml as `segdiff devnet up`
// does, and checks the node count, the mode and the shaping it asks for.
func TestNetworkParamsFilesRun(t *testing.T) { checkNetworkParamsFiles(t, standIn) }

// checkNetworkParamsFiles is TestNetworkParamsFilesRun against b; it returns
// each file's plan by file name.
func checkNetworkParamsFiles(t *testing.T, b backend) map[string]*starlarktest.Plan {
	t.Helper()
	plans := map[string]*starlarktest.Plan{}
	files, err := filepath.Glob(filepath.Join(packageDir, "..", "network-params", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no network-params files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := yaml.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			m, err := clientpatch.LoadFile(filepath.Join(packageDir, "..", clientpatch.DefaultPath))
			if err != nil {
				t.Fatal(err)
			}
			if err := clientpatch.ResolveParticipants(raw, m); err != nil {
				t.Fatal(err)
			}
			resolved, err := yaml.Marshal(raw)
			if err != nil {
				t.Fatal(err)
			}
			p, out := mustRunOn(t, b, string(resolved), "docker")
			plans[filepath.Base(f)] = p
			for _, n := range out.SegdiffNodes {
				if img := p.EthereumPackageArgs["participants"].([]any)[0].(map[string]any)["cl_image"]; strings.HasPrefix(fmt.Sprint(img), "@") {
					t.Fatalf("node %s: cl_image %v left unresolved", n.ID, img)
				}
			}
			want := 0
			for _, part := range raw["participants"].([]any) {
				c, ok := part.(map[string]any)["count"].(int)
				if !ok {
					c = 1
				}
				want += c
			}
			if len(out.SegdiffNodes) != want {
				t.Errorf("segdiff_nodes = %d, want %d", len(out.SegdiffNodes), want)
			}
			_, shaped := raw["segdiff"].(map[string]any)["link_classes"]
			if _, hasDisruptoor := p.Services["disruptoor"]; hasDisruptoor != shaped {
				t.Errorf("disruptoor launched = %v, link_classes given = %v", hasDisruptoor, shaped)
			}
			if out.Mode != raw["segdiff"].(map[string]any)["mode"] {
				t.Errorf("mode = %q, file says %v", out.Mode, raw["segdiff"].(map[string]any)["mode"])
			}
		})
	}
	return plans
}

// TestEthereumPackagePinned: main.star imports exactly the pinned locator
// (the runtime stubs only that one, so TestSegmentedPlan would fail
// otherwise) and constants.star names the same commit.
func TestEthereumPackagePinned(t *testing.T) {
	main, err := os.ReadFile(filepath.Join(packageDir, "main.star"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(main), `"`+starlarktest.EthereumPackageLocator+`"`) {
		t.Errorf("main.star does not import %s", starlarktest.EthereumPackageLocator)
	}
	consts, err := os.ReadFile(filepath.Join(packageDir, "src", "package_io", "constants.star"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(consts), `ETHEREUM_PACKAGE_COMMIT = "`+params.EthereumPackageCommit+`"`) {
		t.Errorf("constants.star ETHEREUM_PACKAGE_COMMIT is not %s", params.EthereumPackageCommit)
	}
	k, err := starlarktest.LoadKurtosisYAML(packageDir)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "github.com/segdiff/segdiff/kurtosis" {
		t.Errorf("kurtosis.yml name = %q, want the package's locator github.com/segdiff/segdiff/kurtosis", k.Name)
	}
}

func stringsOf(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

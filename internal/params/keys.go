package params

import (
	"github.com/segdiff/segdiff/internal/clientpatch"
)

// EthereumPackageCommit is the ethpandaops/ethereum-package commit the key
// tables below describe. They are copied from that commit's
// src/package_io/sanity_check.star, input_parser.star and constants.star; in
// the real-package mode (SEGDIFF_ETHPKG_DIR) internal/starlarktest compares
// them with the real tables. Update them together with the commit pinned in
// kurtosis/main.star.
const EthereumPackageCommit = "0350d2e98735ff395b088fe8c261f0c9bb652c8a"

// FarFutureEpoch is ethereum-package's FAR_FUTURE_EPOCH (2^64-1): a fork at
// this epoch is not scheduled.
const FarFutureEpoch = ^uint64(0)

// SegdiffKey is the top-level section only our Kurtosis package reads.
const SegdiffKey = "segdiff"

// ClientsRefPrefix marks an image naming a client-patches/clients.yaml entry.
const ClientsRefPrefix = "@clients/"

// ParticipantKeys are the keys of one participants[] entry.
var ParticipantKeys = []string{
	"el_type", "el_image", "el_binary_path", "el_log_level", "el_storage_type", "el_extra_env_vars",
	"el_extra_labels", "el_extra_params", "el_extra_mounts", "el_devices", "el_tolerations",
	"el_volume_size", "el_min_cpu", "el_max_cpu", "el_min_mem", "el_max_mem", "el_force_restart",
	"cl_type", "cl_image", "cl_binary_path", "cl_log_level", "cl_extra_env_vars", "cl_extra_labels",
	"cl_extra_params", "cl_extra_mounts", "cl_devices", "cl_tolerations", "cl_volume_size",
	"cl_min_cpu", "cl_max_cpu", "cl_min_mem", "cl_max_mem", "cl_force_restart", "supernode",
	"use_separate_vc",
	"vc_type", "vc_image", "vc_binary_path", "vc_log_level", "vc_extra_env_vars", "vc_extra_labels",
	"vc_extra_params", "vc_extra_mounts", "vc_devices", "vc_tolerations", "vc_min_cpu", "vc_max_cpu",
	"vc_min_mem", "vc_max_mem", "vc_force_restart", "vc_beacon_node_indices", "validator_count",
	"use_remote_signer", "remote_signer_type", "remote_signer_image", "remote_signer_extra_env_vars",
	"remote_signer_extra_labels", "remote_signer_extra_params", "remote_signer_tolerations",
	"remote_signer_min_cpu", "remote_signer_max_cpu", "remote_signer_min_mem", "remote_signer_max_mem",
	"node_selectors", "tolerations", "count", "snooper_enabled", "ethereum_metrics_exporter_enabled",
	"xatu_sentry_enabled", "prometheus_config", "blobber_enabled", "blobber_extra_params",
	"blobber_image", "builder_network_params", "keymanager_enabled", "checkpoint_sync_enabled",
	"skip_start",
}

// ParticipantMatrixKeys are the keys of participants_matrix and of its
// el/cl/vc/remote_signer entries (count takes an int).
var ParticipantMatrixKeys = map[string][]string{
	"el": {
		"el_type", "el_image", "el_binary_path", "el_log_level", "el_storage_type", "el_extra_env_vars",
		"el_extra_labels", "el_extra_params", "el_extra_mounts", "el_devices", "el_tolerations",
		"el_volume_size", "el_min_cpu", "el_max_cpu", "el_min_mem", "el_max_mem", "el_force_restart",
	},
	"cl": {
		"cl_type", "cl_image", "cl_binary_path", "cl_log_level", "cl_extra_env_vars", "cl_extra_labels",
		"cl_extra_params", "cl_extra_mounts", "cl_devices", "cl_tolerations", "cl_volume_size",
		"cl_min_cpu", "cl_max_cpu", "cl_min_mem", "cl_max_mem", "cl_force_restart", "use_separate_vc",
		"vc_type", "vc_image", "vc_binary_path", "vc_log_level", "vc_extra_env_vars", "vc_extra_labels",
		"vc_extra_params", "vc_extra_mounts", "vc_tolerations", "vc_min_cpu", "vc_max_cpu", "vc_min_mem",
		"vc_max_mem", "vc_force_restart", "validator_count", "count", "supernode",
		"vc_beacon_node_indices", "checkpoint_sync_enabled",
	},
	"vc": {
		"vc_type", "vc_image", "vc_binary_path", "vc_log_level", "vc_extra_env_vars", "vc_extra_labels",
		"vc_extra_params", "vc_extra_mounts", "vc_devices", "vc_tolerations", "vc_min_cpu", "vc_max_cpu",
		"vc_min_mem", "vc_max_mem", "vc_force_restart", "validator_count",
	},
	"remote_signer": {
		"remote_signer_type", "remote_signer_image", "remote_signer_extra_env_vars",
		"remote_signer_extra_labels", "remote_signer_extra_params", "remote_signer_tolerations",
		"remote_signer_min_cpu", "remote_signer_max_cpu", "remote_signer_min_mem", "remote_signer_max_mem",
	},
	"count": nil,
}

// PortPublisherGroups are the groups of port_publisher; each takes
// PortPublisherGroupKeys. port_publisher also takes nat_exit_ip.
var PortPublisherGroups = []string{"el", "cl", "vc", "remote_signer", "additional_services", "mev", "other"}

// PortPublisherGroupKeys are the keys of one port_publisher group.
var PortPublisherGroupKeys = []string{"enabled", "public_port_start", "nat_exit_ip"}

// NetworkParamsKeys are the keys of network_params.
var NetworkParamsKeys = []string{
	"network", "network_id", "deposit_contract_address", "preset", "seconds_per_slot", "slot_duration_ms",
	"num_validator_keys_per_node", "preregistered_validator_keys_mnemonic", "preregistered_validator_count",
	"additional_mnemonics", "shuffle_genesis_validators", "genesis_delay", "genesis_time",
	"genesis_gaslimit", "gas_limit", "gas_limit_schedule", "prefunded_accounts",
	"additional_preloaded_contracts", "devnet_repo", "withdrawal_type", "withdrawal_address",
	"validator_balance",
	"altair_fork_epoch", "bellatrix_fork_epoch", "capella_fork_epoch", "deneb_fork_epoch",
	"electra_fork_epoch", "fulu_fork_epoch", "gloas_fork_epoch", "heze_fork_epoch", "frames_enabled",
	"bpo_1_epoch", "bpo_1_max_blobs", "bpo_1_target_blobs", "bpo_1_base_fee_update_fraction",
	"bpo_2_epoch", "bpo_2_max_blobs", "bpo_2_target_blobs", "bpo_2_base_fee_update_fraction",
	"bpo_3_epoch", "bpo_3_max_blobs", "bpo_3_target_blobs", "bpo_3_base_fee_update_fraction",
	"bpo_4_epoch", "bpo_4_max_blobs", "bpo_4_target_blobs", "bpo_4_base_fee_update_fraction",
	"bpo_5_epoch", "bpo_5_max_blobs", "bpo_5_target_blobs", "bpo_5_base_fee_update_fraction",
	"attestation_due_bps_gloas", "aggregate_due_bps_gloas", "sync_message_due_bps_gloas",
	"contribution_due_bps_gloas", "payload_due_bps", "payload_attestation_due_bps",
	"view_freeze_cutoff_bps", "inclusion_list_submission_due_bps", "proposer_inclusion_list_cutoff_bps",
	"builder_count", "builder_balance", "min_builder_withdrawability_delay", "deploy_eip8282_contracts",
	"max_per_epoch_activation_churn_limit", "churn_limit_quotient", "confirmation_byzantine_threshold",
	"ejection_balance", "eth1_follow_distance", "min_validator_withdrawability_delay",
	"shard_committee_period", "samples_per_slot", "custody_requirement", "max_blobs_per_block_electra",
	"target_blobs_per_block_electra", "max_request_blocks_deneb", "base_fee_update_fraction_electra",
	"max_payload_size", "perfect_peerdas_enabled", "min_epochs_for_data_column_sidecars_requests",
	"network_sync_base_url", "force_snapshot_sync", "shadowfork_block_height",
}

// BlockKeys are the keys of every *_params block (validated one level deep
// by ethereum-package; deeper contents are free-form).
var BlockKeys = map[string][]string{
	"network_params":      NetworkParamsKeys,
	"blockscout_params":   {"image", "verif_image", "frontend_image", "env"},
	"dora_params":         {"image", "env"},
	"checkpointz_params":  {"image"},
	"docker_cache_params": {"enabled", "url", "dockerhub_prefix", "github_prefix", "google_prefix"},
	"tx_fuzz_params":      {"image", "tx_fuzz_extra_args"},
	"rakoon_params": {"image", "tx_type", "workers", "batch_size", "seed", "fuzzing", "poll_interval",
		"extra_args"},
	"prometheus_params": {"storage_tsdb_retention_time", "storage_tsdb_retention_size", "min_cpu",
		"max_cpu", "min_mem", "max_mem", "image"},
	"grafana_params": {"additional_dashboards", "min_cpu", "max_cpu", "min_mem", "max_mem", "image"},
	"tempo_params":   {"min_cpu", "max_cpu", "min_mem", "max_mem", "image"},
	"assertoor_params": {"image", "run_stability_check", "run_block_proposal_check",
		"run_transaction_test", "run_blob_transaction_test", "run_opcodes_transaction_test",
		"run_lifecycle_test", "tests"},
	"mev_params": {"mev_relay_image", "mev_builder_image", "mev_builder_cl_image",
		"mev_builder_cl_extra_params", "mev_builder_subsidy", "mev_boost_image", "mev_boost_args",
		"mev_relay_api_extra_args", "mev_relay_api_extra_env_vars", "mev_relay_housekeeper_extra_args",
		"mev_relay_housekeeper_extra_env_vars", "mev_relay_website_extra_args",
		"mev_relay_website_extra_env_vars", "mev_builder_extra_args", "mev_builder_prometheus_config",
		"mock_mev_image", "launch_adminer", "run_multiple_relays", "helix_relay_image",
		"commit_boost_config"},
	"xatu_sentry_params": {"xatu_sentry_image", "xatu_server_addr", "xatu_server_tls",
		"xatu_server_headers", "beacon_subscriptions"},
	"snooper_params": {"enabled", "image", "extra_args", "extra_env_vars"},
	"spamoor_params": {"image", "min_cpu", "max_cpu", "min_mem", "max_mem", "extra_args", "spammers",
		"start_chainload", "start_fuzzing", "defaults"},
	"disruptoor_params": {"image", "min_cpu", "max_cpu", "min_mem", "max_mem", "log_level",
		"log_format", "config", "partitions", "shaping", "extra_args"},
	"slashoor_params": {"image", "min_cpu", "max_cpu", "min_mem", "max_mem", "extra_args", "log_level",
		"beacon_timeout", "max_epochs_to_keep", "detector_enabled", "proposer_enabled",
		"submitter_enabled", "submitter_dry_run", "dora_enabled", "dora_url", "dora_scan_on_startup",
		"backfill_slots"},
	"mempool_bridge_params": {"image", "source_enodes", "mode", "log_level", "send_concurrency",
		"polling_interval", "retry_interval"},
	"ethereum_genesis_generator_params": {"image", "extra_env"},
	"bootnodoor_params": {"image", "min_cpu", "max_cpu", "min_mem", "max_mem", "separate_keys",
		"extra_args"},
	"zkboost_params":    {"image", "instances", "zkvms", "env"},
	"buildoor_params":   {"image", "extra_args", "builder_api", "epbs_builder", "lifecycle", "instances"},
	"trueblocks_params": {"image", "config_version", "target_rpc_url", "target_index", "scrape", "env"},
}

// NestedBlock is a block sanity_check.star validates two levels deep
// (validate_nested_params): its keys must be one of Special or a key of Sub,
// and each Sub block's keys one of its list. A key must pass both this and
// BlockKeys, as both checks run.
type NestedBlock struct {
	Special []string
	Sub     map[string][]string
}

// NestedBlocks are the nested blocks other than port_publisher
// (TRUEBLOCKS_NESTED_PARAMS). trueblocks_params.config_version is in BlockKeys
// but not here, so ethereum-package rejects it: the checker agrees.
var NestedBlocks = map[string]NestedBlock{
	"trueblocks_params": {
		Special: []string{"image", "target_rpc_url", "target_index", "env"},
		Sub:     map[string][]string{"scrape": {"apps_per_chunk", "snap_to_grid", "first_snap", "unripe_dist"}},
	},
}

// ScalarKeys are the other top-level keys (ADDITIONAL_CATEGORY_PARAMS).
var ScalarKeys = []string{
	"wait_for_finalization", "global_log_level", "snooper_enabled", "ethereum_metrics_exporter_enabled",
	"parallel_keystore_generation", "disable_peer_scoring", "persistent", "mev_type",
	"xatu_sentry_enabled", "apache_port", "nginx_port", "global_tolerations", "global_node_selectors",
	"keymanager_enabled", "checkpoint_sync_enabled", "checkpoint_sync_url",
}

// AdditionalServices are the accepted additional_services entries.
var AdditionalServices = []string{
	"bootnodoor", "assertoor", "broadcaster", "tx_fuzz", "forkmon", "blockscout", "dora", "checkpointz",
	"prometheus_grafana", "prometheus", "grafana", "tempo", "blobscan", "dugtrio", "erpc", "forky",
	"apache", "nginx", "tracoor", "mempool_bridge", "rakoon", "slashoor", "spamoor", "disruptoor",
	"zkboost", "trueblocks", "otel", "buildoor",
}

// ELTypes, CLTypes and VCTypes are the client types the launchers accept
// (constants.EL_TYPE / CL_TYPE / VC_TYPE). el_type may also be null.
var (
	ELTypes = []string{"geth", "erigon", "nethermind", "besu", "reth", "ethereumjs", "nimbus", "ethrex"}
	CLTypes = []string{"lighthouse", "teku", "nimbus", "prysm", "lodestar", "grandine", "consensoor", "caplin"}
	VCTypes = []string{"lighthouse", "lodestar", "nimbus", "prysm", "teku", "vero", "grandine", "consensoor"}
)

// LogLevels are the global_log_level values a client launcher maps
// (constants.GLOBAL_LOG_LEVEL); custom maps only for CustomLogLevelClients.
var LogLevels = []string{"error", "warn", "info", "debug", "trace"}

// CustomLogLevelClients are the launchers whose log-level table maps
// "custom" (teku's CL, besu's EL).
var CustomLogLevelClients = []string{"cl/teku", "el/besu"}

// MEVTypes are the accepted mev_type values (null is also accepted).
var MEVTypes = []string{"mock", "flashbots", "mev-rs", "commit-boost", "helix", "buildoor"}

// TopLevelKeys returns every accepted top-level key except our segdiff section.
func TopLevelKeys() []string {
	keys := []string{"participants", "participants_matrix", "port_publisher", "additional_services", "extra_files"}
	for k := range BlockKeys {
		keys = append(keys, k)
	}
	keys = append(keys, ScalarKeys...)
	return keys
}

// Segdiff section schema (kurtosis/src/package_io/sanity_check.star).
var (
	SegdiffKeys = map[string][]string{
		"mode":         nil,
		"mixed":        nil,
		"prometheus":   {"scrape_interval", "image"},
		"grafana":      {"enabled", "image"},
		"link_classes": {"default", "overrides", "custom", "home", "datacenter"},
		"load":         LoadKeys,
	}
	LinkClasses           = []string{"home", "datacenter", "custom"}
	LinkClassOverrideKeys = []string{"participant", "class"}
	LinkClassCustomKeys   = []string{"up_mbps", "down_mbps", "latency_ms", "loss_percent"}
	// LinkClassFixedKeys are the keys of segdiff.link_classes.home and
	// .datacenter: their rates are the study's, only a loss can be added.
	LinkClassFixedKeys = []string{"loss_percent"}
	// ParticipantSegdiffKeys are the keys of a participant's own segdiff
	// section (participants[] and participants_matrix.cl[] entries), which
	// `segdiff devnet up` and the package read and ethereum-package never sees.
	ParticipantSegdiffKeys = []string{clientpatch.RoleKey}
)

package params

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is the type a key's value must have.
type Type int

// The types of TypeRules.
const (
	TypeInt    Type = iota + 1 // a signed integer
	TypeUint                   // an epoch: 0..2^64-1 (FAR_FUTURE is 2^64-1)
	TypeBPS                    // basis points of a slot: an integer, 0..10000
	TypeNumber                 // an integer or a float (an amount of ETH)
	TypeBool                   // true or false
	TypeList                   // a list; TypeRule.Items is its items' type
	TypeString                 // a string: only as the items of a TypeList
)

// Section names where a TypeRule's key lives.
type Section string

// The sections TypeRules cover.
const (
	// SectionParticipant is a participants[] entry or a
	// participants_matrix.{el,cl,vc,remote_signer}[] entry.
	SectionParticipant Section = "participants"
	SectionNetwork     Section = "network_params"
	SectionTop         Section = "" // a top-level key
)

// TypeRule is the type of one key that ethereum-package (at
// EthereumPackageCommit) does arithmetic on, compares, tests for truth or
// iterates. ethereum-package checks none of these types: a wrong one fails
// deep in its parser or launchers, or, for a truth test, silently means
// something else (any non-empty string is true, so supernode: "false" runs a
// supernode). Keys it only copies into a config template are not here, but
// for the basis-point timings, typed for their 0..10000 range.
type TypeRule struct {
	Section Section
	Key     string
	Type    Type
	// Items is the type of a TypeList's items; 0 for any.
	Items Type
	// Nullable: null selects the package's default (its default is None).
	Nullable bool
	// Uses is the code that uses the value, relative to ethereum-package's
	// src/ unless it names a segdiff file.
	Uses string
	// When is the condition under which Uses runs, "" when every run gets
	// there, e.g. "when it launches a separate VC".
	When string
	// Fails is what the run fails with when the value is a string (a
	// quoted number or a word) of at least MinLen characters, {len} standing
	// for its length; "" when the run does not fail on one (a truth test, or
	// a string int() converts).
	Fails  string
	MinLen int // see Fails
	// Segdiff: the segdiff package's own input_parser.star or
	// participants.star refuses the value before ethereum-package runs; the
	// checker's message is then the one it fails with.
	Segdiff bool
	// Why is said in parentheses after the type, e.g. "segdiff decodes it
	// as a number".
	Why string
	// EqualsTrue: besides a truth test, the package compares the value with
	// True, where a string is false: a string is read both ways.
	EqualsTrue bool
}

// Path is the rule's key as the checker reports it for a top-level or
// network_params key, and "participants[].<key>" for a participant key.
func (t TypeRule) Path() string {
	switch t.Section {
	case SectionParticipant:
		return "participants[]." + t.Key
	case SectionNetwork:
		return "network_params." + t.Key
	}
	return t.Key
}

// expect is the first half of a type problem's message.
func (t TypeRule) expect() string {
	switch t.Type {
	case TypeInt, TypeBPS:
		return "must be an integer"
	case TypeUint:
		return "must be an unsigned integer (at most 2^64-1)"
	case TypeNumber:
		return "must be a number"
	case TypeBool:
		return "must be true or false"
	case TypeList:
		if t.Items != 0 {
			return "must be a list of " + itemNames[t.Items]
		}
		return "must be a list"
	}
	panic(fmt.Sprintf("params: type rule %s has no type", t.Path()))
}

var itemNames = map[Type]string{TypeInt: "integers", TypeString: "strings"}

// Message is the checker's message for a value of Starlark type typ (as
// type() names it: string, int, bool, list, dict, NoneType...) whose YAML
// text is value: the type wanted, Why, and for a string what the run fails
// with.
func (t TypeRule) Message(typ, value string) string { return t.message(typ, value, "") }

// FailsFor is Fails for the string value.
func (t TypeRule) FailsFor(value string) string {
	return strings.ReplaceAll(t.Fails, "{len}", strconv.Itoa(len(value)))
}

// message is Message with fails, when not "", replacing Fails and When:
// input_parser.star appends to some extra_params lists before any launcher
// iterates them.
func (t TypeRule) message(typ, value, fails string) string {
	msg := t.expect() + ", got " + got(typ, value)
	if t.Why != "" {
		msg += " (" + t.Why + ")"
	}
	when, minLen := t.When, t.MinLen
	if fails == "" {
		fails = t.FailsFor(value)
	} else {
		when, minLen = "", 0
	}
	if fails == "" || typ != "string" || len(value) < minLen {
		return msg
	}
	who := "ethereum-package fails"
	if t.Segdiff {
		who = "the segdiff package fails"
	}
	if when != "" {
		who += " " + when
	}
	return msg + "; " + who + ": " + fails
}

// TypeRules are the typed keys, derived from ethereum-package's
// src/package_io/input_parser.star, src/network_launcher/kurtosis.star,
// src/prelaunch_data_generator/el_cl_genesis/el_cl_genesis_generator.star and
// the el/cl/vc/remote_signer launchers at EthereumPackageCommit: every
// participant, network_params and top-level key used in arithmetic, a
// comparison, a truth test or a loop. The messages are go.starlark.net's,
// the same in the version Kurtosis 1.20 embeds. internal/params/types_test.go
// walks the table through the checker; the real-package mode of
// internal/starlarktest walks it through the real package.
var TypeRules = buildTypeRules()

func buildTypeRules() []TypeRule {
	const (
		gt      = "string > int not implemented"
		elWhen  = "when it launches the EL"
		vcWhen  = "when it launches a separate VC"
		rsWhen  = "with use_remote_signer"
		resWhen = "a numeric string is converted"
	)
	p := func(key string, typ Type, uses, when, fails string) TypeRule {
		return TypeRule{Section: SectionParticipant, Key: key, Type: typ, Uses: uses, When: when, Fails: fails}
	}
	truth := func(s Section, key string, nullable bool, uses string) TypeRule {
		return TypeRule{Section: s, Key: key, Type: TypeBool, Nullable: nullable, Uses: uses,
			Why: "ethereum-package tests it for truth, and any non-empty string is true"}
	}
	restart := func(layer string) TypeRule {
		return TypeRule{Section: SectionParticipant, Key: layer + "_force_restart", Type: TypeBool, EqualsTrue: true,
			Uses: "shared_utils/shared_utils.star add_services_with_force_restart: " + layer + "_force_restart == True; participant_network.star: if " + layer + "_binary_path and " + layer + "_force_restart",
			Why:  "ethereum-package compares it with True to restart the service, where a string is false, and tests it for truth to mount " + layer + "_binary_path, where a non-empty string is true"}
	}
	args := func(layer, uses, when string) TypeRule {
		// An empty string passes the launchers' len() > 0 guard.
		return TypeRule{Section: SectionParticipant, Key: layer + "_extra_params", Type: TypeList, Items: TypeString,
			Uses: uses + ": if len(x) > 0: [param for param in x], one command argument each", When: when,
			Fails: "string value is not iterable", MinLen: 1}
	}
	rules := []TypeRule{
		{Section: SectionParticipant, Key: "count", Type: TypeInt, Segdiff: true,
			Uses:  "segdiff kurtosis/src/package_io/participants.star expand, then input_parser.star parse_network_params: range(count)",
			Fails: "range: for parameter 1: got string, want int"},
		{Section: SectionParticipant, Key: "validator_count", Type: TypeInt, Nullable: true,
			Uses:  "package_io/input_parser.star parse_network_params: actual_num_validators += validator_count; the Fulu custody check: validator_count >= 128",
			Fails: "unknown binary op: int + string"},
		{Section: SectionParticipant, Key: "vc_beacon_node_indices", Type: TypeList, Items: TypeInt, Nullable: true,
			Uses: "vc/vc_launcher.star: if len(x) > 0: for idx in x: idx < len(all_cl_contexts)", When: vcWhen,
			Fails: "string value is not iterable", MinLen: 1},
		args("el", "el/*/*_launcher.star", elWhen),
		args("cl", "cl/*/*_launcher.star", ""),
		args("vc", "vc/*.star", vcWhen),
		args("remote_signer", "remote_signer/remote_signer_launcher.star", rsWhen),
		args("blobber", "blobber/blobber_launcher.star", "with blobber_enabled"),
		p("el_volume_size", TypeInt, "el/el_shared.star get_volume_size: int(el_volume_size) > 0 with persistent ("+resWhen+")", "", ""),
		p("cl_volume_size", TypeInt, "cl/cl_shared.star get_beacon_data_directory: int(cl_volume_size) > 0 with persistent ("+resWhen+")", "", ""),
	}
	for _, r := range []string{"min_cpu", "max_cpu", "min_mem", "max_mem"} {
		rules = append(rules,
			p("el_"+r, TypeInt, "el/el_shared.star apply_resource_limits: el_"+r+" > 0", elWhen, gt),
			p("cl_"+r, TypeInt, "cl/cl_shared.star apply_resource_limits: int(cl_"+r+") > 0 ("+resWhen+")", "", ""),
			p("vc_"+r, TypeInt, "vc/vc_shared.star apply_resource_limits: vc_"+r+" > 0", vcWhen, gt),
			p("remote_signer_"+r, TypeInt, "remote_signer/remote_signer_launcher.star: remote_signer_"+r+" > 0", rsWhen, gt))
	}
	rules = append(rules,
		truth(SectionParticipant, "supernode", false, "cl/*/*_launcher.star: if participant.supernode; input_parser.star's Fulu custody check"),
		truth(SectionParticipant, "use_separate_vc", true, "input_parser.star: use_remote_signer and not use_separate_vc; participant_network.star"),
		truth(SectionParticipant, "use_remote_signer", true, "participant_network.star: if participant.use_remote_signer"),
		restart("el"), restart("cl"), restart("vc"),
		truth(SectionParticipant, "snooper_enabled", true, "participant_network.star, cl/cl_launcher.star: if participant.snooper_enabled"),
		truth(SectionParticipant, "ethereum_metrics_exporter_enabled", true, "participant_network.star: if participant.ethereum_metrics_exporter_enabled"),
		truth(SectionParticipant, "xatu_sentry_enabled", true, "participant_network.star: if participant.xatu_sentry_enabled"),
		truth(SectionParticipant, "blobber_enabled", false, "input_parser.star, cl/cl_shared.star: if blobber_enabled"),
		truth(SectionParticipant, "keymanager_enabled", true, "vc/vc_launcher.star, vc/*.star: if keymanager_enabled"),
		truth(SectionParticipant, "checkpoint_sync_enabled", true, "cl/cl_launcher.star: if checkpoint_sync_enabled"),
		truth(SectionParticipant, "skip_start", false, "cl/*/*_launcher.star, participant_network.star: if participant.skip_start"),
	)

	// network_params
	rules = append(rules,
		TypeRule{Section: SectionNetwork, Key: "seconds_per_slot", Type: TypeInt, Segdiff: true, Why: "segdiff decodes it as a number",
			Uses: "segdiff kurtosis/src/package_io/input_parser.star _check_network_params (the run output returns it)"},
		TypeRule{Section: SectionNetwork, Key: "slot_duration_ms", Type: TypeInt, Segdiff: true, Why: "segdiff decodes it as a number",
			Uses: "segdiff kurtosis/src/package_io/input_parser.star _check_network_params (the run output returns it)"},
		TypeRule{Section: SectionNetwork, Key: "payload_due_bps", Type: TypeBPS, Segdiff: true, Why: "segdiff decodes it as a number",
			Uses: "segdiff kurtosis/src/package_io/input_parser.star _check_network_params (the run output returns it)"},
		TypeRule{Section: SectionNetwork, Key: "num_validator_keys_per_node", Type: TypeInt,
			Uses:  "package_io/input_parser.star parse_network_params: the default validator_count, summed (actual_num_validators += ...)",
			When:  "when a participant has no validator_count",
			Fails: "unknown binary op: int + string"},
		TypeRule{Section: SectionNetwork, Key: "preregistered_validator_count", Type: TypeInt,
			Uses:  "package_io/input_parser.star parse_network_params: max(actual_num_validators, preregistered_validator_count)",
			Fails: "max: " + gt},
		TypeRule{Section: SectionNetwork, Key: "genesis_time", Type: TypeInt,
			Uses: "network_launcher/kurtosis.star: genesis_time > 0", Fails: gt},
		TypeRule{Section: SectionNetwork, Key: "genesis_delay", Type: TypeInt,
			Uses: "network_launcher/kurtosis.star: genesis_delay + CL_GENESIS_DATA_GENERATION_TIME + ...", When: "when genesis_time is 0",
			Fails: "unknown binary op: string + int"},
		TypeRule{Section: SectionNetwork, Key: "gas_limit", Type: TypeInt,
			Uses: "el/{geth,besu,erigon,ethrex,nethermind}/*_launcher.star, cl/nimbus, vc/*.star: gas_limit > 0",
			When: "when it launches a geth, besu, erigon, ethrex or nethermind EL or a VC", Fails: gt},
		TypeRule{Section: SectionNetwork, Key: "builder_count", Type: TypeInt,
			Uses: "package_io/input_parser.star parse_network_params: builder_count > 0", Fails: gt},
		TypeRule{Section: SectionNetwork, Key: "builder_balance", Type: TypeNumber,
			Uses: "prelaunch_data_generator/el_cl_genesis/el_cl_genesis_generator.star: builder_balance > 0", Fails: gt},
		TypeRule{Section: SectionNetwork, Key: "validator_balance", Type: TypeNumber,
			Uses:  "prelaunch_data_generator/el_cl_genesis/el_cl_genesis_generator.star: int(validator_balance * 1000000000), which repeats a string (one character: a 1 GB string)",
			Fails: "excessive repeat ({len} * 1000000000 elements)", MinLen: 2},
	)
	for _, f := range forks {
		rules = append(rules, epochRule(f.key))
	}
	for _, b := range bpoDefaults {
		rules = append(rules, epochRule(b.key))
	}
	for n := 1; n <= 5; n++ {
		max, target := fmt.Sprintf("bpo_%d_max_blobs", n), fmt.Sprintf("bpo_%d_target_blobs", n)
		derive := "package_io/input_parser.star parse_network_params: a zero %s is derived from it (%s * %s)"
		rules = append(rules,
			TypeRule{Section: SectionNetwork, Key: max, Type: TypeInt, Uses: fmt.Sprintf(derive, target, max, "2.0 / 3.0"),
				When: "when " + target + " is 0", Fails: "unknown binary op: string * float"},
			TypeRule{Section: SectionNetwork, Key: target, Type: TypeInt, Uses: fmt.Sprintf(derive, max, target, "3.0 / 2.0"),
				When: "when " + max + " is 0", Fails: "unknown binary op: string * float"})
	}
	for _, key := range []string{"attestation_due_bps_gloas", "aggregate_due_bps_gloas", "sync_message_due_bps_gloas",
		"contribution_due_bps_gloas", "payload_attestation_due_bps", "view_freeze_cutoff_bps",
		"inclusion_list_submission_due_bps", "proposer_inclusion_list_cutoff_bps"} {
		// Copied into the genesis config, where the clients read a share
		// of the slot: typed for the 0..10000 range check.
		rules = append(rules, TypeRule{Section: SectionNetwork, Key: key, Type: TypeBPS,
			Uses: "prelaunch_data_generator/el_cl_genesis/el_cl_genesis_generator.star: the genesis config (basis points of the slot)"})
	}
	rules = append(rules,
		truth(SectionNetwork, "shuffle_genesis_validators", false, "el_cl_genesis_generator.star: if network_params.shuffle_genesis_validators"),
		truth(SectionNetwork, "frames_enabled", false, "participant_network.star: frames_enabled = network_params.frames_enabled"),
		truth(SectionNetwork, "perfect_peerdas_enabled", false, "input_parser.star, cl/*/*_launcher.star: if perfect_peerdas_enabled"),
		truth(SectionNetwork, "force_snapshot_sync", false, "input_parser.star, network_launcher/public_network.star: if force_snapshot_sync"),
	)

	// top level
	rules = append(rules,
		TypeRule{Section: SectionTop, Key: "additional_services", Type: TypeList,
			Uses: "package_io/sanity_check.star: for additional_services in input_args[\"additional_services\"]", Fails: "string value is not iterable"},
		truth(SectionTop, "wait_for_finalization", false, "main.star: if args_with_right_defaults.wait_for_finalization (after the additional services; without any, main.star returns before it)"),
		truth(SectionTop, "snooper_enabled", false, "input_parser.star: if result.get(\"snooper_enabled\")"),
		truth(SectionTop, "ethereum_metrics_exporter_enabled", false, "the participants' default: participant_network.star"),
		truth(SectionTop, "parallel_keystore_generation", false, "network_launcher/kurtosis.star: if not parallel_keystore_generation"),
		truth(SectionTop, "disable_peer_scoring", false, "input_parser.star: if result.get(\"disable_peer_scoring\")"),
		truth(SectionTop, "persistent", false, "input_parser.star and the launchers: if persistent"),
		truth(SectionTop, "xatu_sentry_enabled", false, "the participants' default: participant_network.star"),
		truth(SectionTop, "keymanager_enabled", false, "the participants' default: vc/vc_launcher.star"),
		truth(SectionTop, "checkpoint_sync_enabled", false, "the participants' default: cl/cl_launcher.star"),
	)
	return rules
}

// epochRule: our package refuses a fork or BPO epoch that is not a uint64
// (ethereum-package compares them and hands them to the genesis generator).
func epochRule(key string) TypeRule {
	return TypeRule{Section: SectionNetwork, Key: key, Type: TypeUint, Segdiff: true,
		Uses: "segdiff kurtosis/src/package_io/input_parser.star _check_network_params (ethereum-package compares it)"}
}

// typeRule returns the rule for key in section.
func typeRule(s Section, key string) (TypeRule, bool) {
	for _, t := range TypeRules {
		if t.Section == s && t.Key == key {
			return t, true
		}
	}
	return TypeRule{}, false
}

// got describes a value for messages: `string "5000"` (as our Starlark
// package quotes it), `int 1`, `null`, `a map`.
func got(typ, value string) string {
	switch typ {
	case "string":
		return fmt.Sprintf("string %q", value)
	case "NoneType":
		return "null"
	case "dict":
		return "a map"
	case "list":
		return "a list"
	}
	return typ + " " + value
}

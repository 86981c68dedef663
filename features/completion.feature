Feature: Payload completion from the builder's reveal
  Every node must hold the complete, verified payload soon after the builder
  reveals it: completion from reveal is the node's
  payload_diffusion_completed_timestamp_seconds minus the builder's
  payload_diffusion_reveal_timestamp_seconds for the same slot, over the warm
  slots (every revealed slot but the first). Budgets can be overridden with
  SEGDIFF_BUDGET_<KEY> (see features/README.md).

  The embedded devnet's Examples are regression budgets for its reference
  network (ci preset: 32 nodes, degree 20, home links), set from the sweep
  sweeps/ci-budgets.yaml: one run of each of seeds 7-16 per mode (Intel Xeon,
  2 cores; see internal/devnet/embedded/README.md). Each budget is the worst seed's figure
  plus about 20 % for the same seed's run-to-run spread (5-16 % measured),
  so that SEGDIFF_SEED can name any of those seeds. Measured, worst seed:
  segmented median 1.57 s, 90th percentile 1.75 s, slowest node 1.79 s;
  segmented-batch 0.92 / 1.10 / 1.16 s; tier2 0.67 / 0.73 / 0.87 s; tier3
  0.57 / 0.63 / 0.67 s. tier4 and whole-paced were set the same way from
  their own run of seeds 7-16 (sweeps/results/ci-budgets/, AMD EPYC, 2
  cores, 2026-12-02; whole-paced rerun at 71dc412): tier4 0.61 / 0.64 /
  0.66 s, whole-paced 1.26 / 1.58 / 1.98 s. tier2, tier3 and tier4 carry the design's claim (median at most
  1 s, every node within 3 s); segmented and segmented-batch run stock
  go-libp2p-pubsub's forwarding and are held to what it does, and
  whole-paced (whole messages, paced gossip, three copies in flight) to
  what the design's local rules give a whole message.

  The Kurtosis whole rows are the baseline upstream clients must meet:
  the design's verdict (every node within 3 s) and a loose median, with no
  published Kurtosis figure for whole messages to set them from. On a
  client without the metrics contract completion comes from the standard
  API (features/README.md, "Sources").

  Scenario Outline: every node completes every warm payload within <max> of the reveal (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every node completes every warm payload within <max> of the reveal
    And at least <share> of completions are within <within> of the reveal

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload | max | share | within |
      | segmented       | 3     | 90%  | 1048576 | 3s  | 90%   | 2100ms |
      | segmented-batch | 3     | 90%  | 1048576 | 3s  | 90%   | 1350ms |
      | tier2           | 3     | 90%  | 1048576 | 3s  | 90%   | 900ms  |
      | tier3           | 3     | 90%  | 1048576 | 3s  | 90%   | 800ms  |
      | tier4           | 3     | 90%  | 1048576 | 3s  | 90%   | 800ms  |
      | whole-paced     | 3     | 90%  | 1048576 | 3s  | 90%   | 1900ms |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | max | share | within |
      | segmented | 3     | 90%  | 1048576 | 3s  | 90%   | 1500ms |
      | whole     | 3     | 90%  | 1048576 | 3s  | 90%   | 2500ms |

  Scenario Outline: the median completion stays below <p50> (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the median completion from the reveal is at most <p50>

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload | p50    |
      | segmented       | 3     | 90%  | 1048576 | 1900ms |
      | segmented-batch | 3     | 90%  | 1048576 | 1100ms |
      | tier2           | 3     | 90%  | 1048576 | 800ms  |
      | tier3           | 3     | 90%  | 1048576 | 700ms  |
      | tier4           | 3     | 90%  | 1048576 | 750ms  |
      | whole-paced     | 3     | 90%  | 1048576 | 1500ms |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | p50 |
      | segmented | 3     | 90%  | 1048576 | 1s  |
      | whole     | 3     | 90%  | 1048576 | 2s  |

  Scenario Outline: the 99th percentile of completion stays below <p99> (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the 99th percentile of completion from the reveal is at most <p99>

    @embedded
    Examples: embedded devnet
      | mode        | slots | fill | payload | p99    |
      | tier2       | 3     | 90%  | 1048576 | 1050ms |
      | tier3       | 3     | 90%  | 1048576 | 800ms  |
      | tier4       | 3     | 90%  | 1048576 | 850ms  |
      | whole-paced | 3     | 90%  | 1048576 | 2400ms |

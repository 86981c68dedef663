Feature: Payload completion from the builder's reveal
  Every node must hold the complete, verified payload soon after the builder
  reveals it: completion from reveal is the node's
  payload_diffusion_completed_timestamp_seconds minus the builder's
  payload_diffusion_reveal_timestamp_seconds for the same slot, over the warm
  slots (every revealed slot but the first). Budgets can be overridden with
  SEGDIFF_BUDGET_<KEY> (see features/README.md).

  The embedded devnet runs stock go-libp2p-pubsub, which pushes every segment
  to all of a node's mesh peers; the published 0.73 s median needs the
  prototype's push-width and pull discipline, which only patched clients have.
  Its Examples therefore carry regression budgets for that network, with
  margin for run-to-run spread (measured on the 32-node ci preset over three
  runs: median 1.18-1.28 s sequential, 0.78-0.83 s batch-published; slowest
  node 1.23-1.43 s / 0.95-1.04 s), and the Kurtosis Examples carry the claim.

  Scenario Outline: every node completes every warm payload within <max> of the reveal (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every node completes every warm payload within <max> of the reveal
    And at least <share> of completions are within <within> of the reveal

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload | max | share | within |
      | segmented       | 3     | 90%  | 1048576 | 3s  | 90%   | 1500ms |
      | segmented-batch | 3     | 90%  | 1048576 | 3s  | 90%   | 1500ms |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | max | share | within |
      | segmented | 3     | 90%  | 1048576 | 3s  | 90%   | 1500ms |

  Scenario Outline: the median completion stays below <p50> (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the median completion from the reveal is at most <p50>

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload | p50    |
      | segmented       | 3     | 90%  | 1048576 | 1750ms |
      | segmented-batch | 3     | 90%  | 1048576 | 1100ms |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | p50 |
      | segmented | 3     | 90%  | 1048576 | 1s  |

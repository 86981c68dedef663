@embedded @kurtosis
Feature: Payload completion from the builder's reveal
  Every node must hold the complete, verified payload soon after the builder
  reveals it: completion from reveal is the node's
  payload_diffusion_completed_timestamp_seconds minus the builder's
  payload_diffusion_reveal_timestamp_seconds for the same slot, over the warm
  slots (every revealed slot but the first). Budgets can be overridden with
  SEGDIFF_BUDGET_<KEY> (see features/README.md).

  Scenario Outline: every node completes every warm payload within <max> of the reveal
    Given a segmented devnet
    When the devnet has revealed <slots> warm payloads
    Then every node completes every warm payload within <max> of the reveal
    And at least <share> of completions are within <within> of the reveal

    Examples:
      | slots | max | share | within |
      | 3     | 3s  | 90%   | 1500ms |

  Scenario Outline: the median completion stays below <p50>
    Given a segmented devnet
    When the devnet has revealed <slots> warm payloads
    Then the median completion from the reveal is at most <p50>

    Examples:
      | slots | p50 |
      | 3     | 1s  |

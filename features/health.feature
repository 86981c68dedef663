@kurtosis @health
Feature: Glamsterdam chain health
  Before asking how payloads diffuse, an engineer running a glamsterdam devnet
  asks whether the chain is healthy: it finalizes, validators attest, slots
  have blocks, those blocks carry external builders' bids, and the builders
  reveal the payloads. Read from one node's standard beacon API (finality
  checkpoints, attestation rewards, blocks and the PTC's payload attestations)
  over the newest N epochs whose attestations are final (two behind the
  head). Every epoch's verdict is in the report; a failure names the worst
  epoch and its first offending slots.

  Budgets: finality trails by 2 epochs when every epoch justifies (the state
  at an epoch's last slot has finalized the epoch before the previous one),
  so 3 allows one epoch without justification. 95% correct-target
  participation and 90% canonical blocks and revealed bids are what a
  devnet without a broken client keeps. 75% external bids sits between the
  glamsterdam-devnet-8 figures before and after a Lodestar fix (bids
  received 49% -> 83%), so that regression fails a nightly run.

  Scenario Outline: finality advances every epoch (<mode>)
    Given a <mode> devnet
    When the chain has finished <epochs> epochs
    Then the finalized epoch trails every epoch by at most <lag> epochs

    Examples: Kurtosis enclave
      | mode      | epochs | lag |
      | segmented | 3      | 3   |
      | whole     | 3      | 3   |

  Scenario Outline: validators attest with the correct target (<mode>)
    Given a <mode> devnet
    When the chain has finished <epochs> epochs
    Then at least <share> of validators attest with the correct target in every epoch

    Examples: Kurtosis enclave
      | mode      | epochs | share |
      | segmented | 3      | 95%   |
      | whole     | 3      | 95%   |

  Scenario Outline: slots have blocks whose payloads the PTC judges present (<mode>)
    Given a <mode> devnet
    When the chain has finished <epochs> epochs
    Then at least <blocks> of slots have a canonical block in every epoch
    And at least <revealed> of bids have their payload judged present by the PTC in every epoch

    Examples: Kurtosis enclave
      | mode      | epochs | blocks | revealed |
      | segmented | 3      | 90%    | 90%      |
      | whole     | 3      | 90%    | 90%      |

  Scenario Outline: blocks carry external builders' bids (<mode>)
    A devnet without a builder node (every proposer builds its own payload)
    has no external bid: there this scenario is skipped, saying so.

    Given a <mode> devnet
    When the chain has finished <epochs> epochs
    Then at least <external> of blocks carry an external builder's bid in every epoch

    Examples: Kurtosis enclave
      | mode      | epochs | external |
      | segmented | 3      | 75%      |
      | whole     | 3      | 75%      |

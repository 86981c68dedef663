@kurtosis @mixed
Feature: Patched and unpatched clients on one network
  A mixed devnet (network-params/mixed.yaml) runs clients carrying
  segdiff's patches beside unpatched ones on one network, with one load and
  one builder. The suite splits its nodes by whether they export the
  metrics contract and compares the two populations on the one source both
  have, the standard API (execution_payload_available from the first
  payload_gossip report of the slot on any node), so that neither side is
  measured another way.

  The design has no figure for a mixed network. The budget asks only that
  the patched nodes are not slower: a patched population slower than the
  unpatched one on the same network is a regression of the patches, not of
  the network. Opt in with -godog.tags=@mixed (the nightly's mixed job).

  Scenario Outline: patched nodes complete no later than unpatched ones (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the patched nodes' median completion is at least <speedup> times faster than the unpatched nodes'

    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | speedup |
      | segmented | 3     | 90%  | 1048576 | 1.0     |

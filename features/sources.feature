@kurtosis @contract
Feature: The metrics contract and the standard API agree
  A node that carries segdiff's patches is measured twice: by the metrics
  contract (payload_diffusion_completed_timestamp_seconds, the moment the
  node held the complete, verified payload) and by the standard beacon API
  (its execution_payload_available event: payload and blobs available,
  ready for the PTC), which every glamsterdam client emits. Both are
  instants on one host's clock in a Kurtosis enclave; the event's is taken
  where the suite receives it, so it is later by the event's delivery
  (0.1-0.2 ms median on loopback, beacon.ReceiptBias) and by whatever the
  node does between holding the payload and announcing it available.

  The unpatched clients are measured from the standard API alone, so the
  figures of the two populations are only comparable if the two sources
  agree where both exist. 250 ms is a first bound: a tenth of the median
  completion budget's allowance, wide enough for a node's blob check and
  event queue; the nightly's figures will tighten it. On a client without
  the contract this scenario fails closed; ~@contract excludes it on
  purpose.

  Scenario Outline: the contract's completion agrees with execution_payload_available (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then the contract and the standard API agree on every node's completion within <tolerance>

    Examples: Kurtosis enclave
      | mode      | slots | tolerance |
      | segmented | 3     | 250ms     |

Feature: Block-install delay
  Segments are only relayed once their block is installed, so the time from a
  block's arrival to its installation (payload_diffusion_block_installed_ minus
  payload_diffusion_block_arrival_timestamp_seconds) delays diffusion. It is
  measured on every node, builders included, and reported per node.

  Scenario Outline: every node installs each warm block within <max> (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every node's block-install delay is at most <max>

    @embedded
    Examples: embedded devnet
      | mode      | slots | fill | payload | max |
      | segmented | 3     | 90%  | 1048576 | 2s  |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | max |
      | segmented | 3     | 90%  | 1048576 | 2s  |

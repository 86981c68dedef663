Feature: Bytes received per node
  Each node's bytes received for a slot's payload (message data of every copy,
  duplicates included, plus IHAVE/IWANT/IDONTWANT control bytes naming its
  messages) divided by the payload's compressed size is the number of payload
  copies it received. Whole-payload gossip cost a median 4.4 copies in the
  published 500-node study; 32 KiB segments with the prototype's push-width
  and pull discipline cost 1.4.

  Stock go-libp2p-pubsub (the embedded devnet) has neither: a segment reaches
  a node from most of its mesh peers before its IDONTWANT can stop them
  (measured 6.2-6.8 copies on the 32-node ci preset, whole payloads 7.4), so
  its Examples are a regression gate for that network, and the Kurtosis
  Examples carry the claim for patched clients.

  Scenario Outline: payload copies per node stay within budget (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the median node receives at most <p50> payload copies per warm slot
    And no node receives more than <max> payload copies in any warm slot

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload | p50 | max  |
      | segmented       | 3     | 90%  | 1048576 | 9.0 | 14.0 |
      | segmented-batch | 3     | 90%  | 1048576 | 9.0 | 14.0 |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | p50 | max |
      | segmented | 3     | 90%  | 1048576 | 2.0 | 4.0 |
